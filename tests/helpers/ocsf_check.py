#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks OCSF events against the OCSF schema's source form, independently of
kwitness's C code: ocsf_check.py SCHEMA_DIR EVENTS.jsonl [--classes 4001,...]

For each event the class is found by class_uid; its attributes are resolved
through "extends" (base_event, network, system), the "$include"d profiles and
dictionary.json; every attribute present must be known, of its dictionary
type (objects checked the same way, recursively), and within its enum; every
required attribute must be present; constraints (at_least_one, just_one) must
hold; category_uid and type_uid must agree with the class. --classes: these
classes must each occur at least once. Prints one line per problem; exit 1 if
any. --files: prints the schema files it read (to copy a subset)."""
import ipaddress
import json
import os
import sys

READ = set()


def load(root, rel):
    READ.add(rel)
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return json.load(f)


class Schema:
    def __init__(self, root):
        self.root = root
        self.dictionary = load(root, "dictionary.json")
        self.categories = load(root, "categories.json")["attributes"]
        self.types = self.dictionary["types"]["attributes"]
        self.attrs = self.dictionary["attributes"]
        self.version = load(root, "version.json")["version"]
        self.events = {}   # name -> rel path
        self.objects = {}  # name -> rel path
        for kind, index in (("events", self.events), ("objects", self.objects)):
            for dirpath, _, files in os.walk(os.path.join(root, kind)):
                for fn in files:
                    if fn.endswith(".json"):
                        rel = os.path.relpath(os.path.join(dirpath, fn), root)
                        with open(os.path.join(root, rel), encoding="utf-8") as f:
                            name = json.load(f).get("name")
                        index[name] = rel
        self.classes = {}  # class_uid -> (name, category uid)
        for name in self.events:
            doc = load(root, self.events[name])
            category, parent = doc.get("category"), doc.get("extends")
            while not category and parent in self.events:  # inherited
                up = load(root, self.events[parent])
                category, parent = up.get("category"), up.get("extends")
            if "uid" in doc and category in self.categories:
                cat = self.categories[category]["uid"]
                self.classes[cat * 1000 + doc["uid"]] = (name, cat)
        self.cache = {}

    def _merge(self, into, attrs, profile=None):
        for k, v in attrs.items():
            if k == "$include":
                for inc in v if isinstance(v, list) else [v]:
                    doc = load(self.root, inc)
                    # a profile's attributes count only where it is claimed
                    prof = doc.get("name") if doc.get("meta") == "profile" else profile
                    self._merge(into, doc.get("attributes", {}), prof)
                continue
            cur = dict(into.get(k, {}))
            if profile and k not in into:
                cur["_profile"] = profile
            enum = dict(cur.get("enum") or {})
            enum.update(v.get("enum") or {})
            cur.update(v)
            if enum:
                cur["enum"] = enum
            into[k] = cur

    def resolve(self, kind, name):
        """The attributes (with requirement, type, is_array, enum) and
        constraints of an event class or object, through extends."""
        key = (kind, name)
        if key in self.cache:
            return self.cache[key]
        index = self.events if kind == "event" else self.objects
        if name not in index:
            return None
        doc = load(self.root, index[name])
        attrs, constraints = {}, {}
        parent = doc.get("extends")
        if parent and parent != "object":
            base = self.resolve(kind, parent)
            if base:
                attrs = {k: dict(v) for k, v in base[0].items()}
                constraints = dict(base[1])
        self._merge(attrs, doc.get("attributes", {}))
        constraints.update(doc.get("constraints") or {})
        for k, v in attrs.items():
            d = self.attrs.get(k, {})
            full = dict(d)
            enum = dict(d.get("enum") or {})
            enum.update(v.get("enum") or {})
            full.update(v)
            full["enum"] = enum
            attrs[k] = full
        self.cache[key] = (attrs, constraints)
        return self.cache[key]

    def base_type(self, t):
        seen = 0
        while t in self.types and self.types[t].get("type") and seen < 8:
            t, seen = self.types[t]["type"], seen + 1
        return t


def check_scalar(schema, t, value):
    base = schema.base_type(t)
    if base in ("integer_t", "long_t", "timestamp_t"):
        ok = isinstance(value, int) and not isinstance(value, bool)
        if ok and t == "port_t":
            ok = 0 <= value <= 65535
        return ok
    if base == "float_t":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if base == "boolean_t":
        return isinstance(value, bool)
    if base == "json_t":
        return True
    if base == "string_t":
        if not isinstance(value, str):
            return False
        if t == "ip_t":
            try:
                ipaddress.ip_address(value)
            except ValueError:
                return False
        return True
    return False


def check_object(schema, kind, name, value, path, problems, claimed):
    resolved = schema.resolve(kind, name)
    if resolved is None:
        problems.append(f"{path}: unknown {kind} {name}")
        return
    attrs, constraints = resolved
    if not isinstance(value, dict):
        problems.append(f"{path}: not an object ({name})")
        return
    for k, v in attrs.items():
        if v.get("_profile") and v["_profile"] not in claimed:
            continue
        if v.get("requirement") == "required" and k not in value:
            problems.append(f"{path}.{k}: required by {name}, missing")
    for k, v in value.items():
        if k not in attrs:
            problems.append(f"{path}.{k}: not an attribute of {name}")
            continue
        if attrs[k].get("_profile") and attrs[k]["_profile"] not in claimed:
            problems.append(f"{path}.{k}: of profile {attrs[k]['_profile']}, not claimed")
            continue
        check_value(schema, attrs[k], v, f"{path}.{k}", problems, claimed)
    for rule, names in constraints.items():
        present = [n for n in names if n in value]
        if rule == "at_least_one" and not present:
            problems.append(f"{path}: {name} needs at least one of {names}")
        if rule == "just_one" and len(present) != 1:
            problems.append(f"{path}: {name} needs just one of {names}")


def check_value(schema, attr, value, path, problems, claimed):
    if attr.get("is_array"):
        if not isinstance(value, list):
            problems.append(f"{path}: must be an array")
            return
        for i, item in enumerate(value):
            check_one(schema, attr, item, f"{path}[{i}]", problems, claimed)
    else:
        check_one(schema, attr, value, path, problems, claimed)


# Their enums in the source form are placeholders: checked against the class.
CLASS_IDS = ("class_uid", "category_uid", "type_uid")


def check_one(schema, attr, value, path, problems, claimed):
    t = attr.get("type")
    if t is None:
        problems.append(f"{path}: no type in the dictionary")
    elif t == "object":
        if not isinstance(value, dict):
            problems.append(f"{path}: must be an object")
    elif t.endswith("_t"):
        if not check_scalar(schema, t, value):
            problems.append(f"{path}: {value!r} is not a {t}")
    else:
        check_object(schema, "object", t, value, path, problems, claimed)
        return
    enum = attr.get("enum") or {}
    if enum and path.rsplit(".", 1)[-1] not in CLASS_IDS and str(value) not in enum:
        problems.append(f"{path}: {value!r} not in its enum {sorted(enum, key=int)}")


def check_event(schema, ev, where, problems):
    cls = schema.classes.get(ev.get("class_uid"))
    if not cls:
        problems.append(f"{where}: unknown class_uid {ev.get('class_uid')}")
        return None
    name, cat = cls
    claimed = set(ev.get("metadata", {}).get("profiles", []))
    check_object(schema, "event", name, ev, where, problems, claimed)
    if ev.get("category_uid") != cat:
        problems.append(f"{where}: category_uid {ev.get('category_uid')} is not {cat}")
    if ev.get("type_uid") != ev.get("class_uid", 0) * 100 + ev.get("activity_id", -1):
        problems.append(f"{where}: type_uid is not class_uid * 100 + activity_id")
    md = ev.get("metadata", {})
    if md.get("version") != schema.version:
        problems.append(f"{where}: metadata.version {md.get('version')} is not {schema.version}")
    for p in md.get("profiles", []):
        if not os.path.exists(os.path.join(schema.root, "profiles", p + ".json")):
            problems.append(f"{where}: profile {p} is not in the schema")
    return ev["class_uid"]


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    schema = Schema(argv[1])
    want = set()
    if "--classes" in argv:
        want = {int(c) for c in argv[argv.index("--classes") + 1].split(",")}
    problems, seen, n = [], set(), 0
    with open(argv[2], encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if not line.strip():
                continue
            n += 1
            try:
                ev = json.loads(line)
            except ValueError as e:
                problems.append(f"line {i}: not JSON: {e}")
                continue
            cls = check_event(schema, ev, f"line {i} ({ev.get('class_uid')})", problems)
            if cls:
                seen.add(cls)
    for c in sorted(want - seen):
        problems.append(f"class {c}: no event of it")
    for p in problems[:200]:
        print(p)
    if "--files" in argv:
        for rel in sorted(READ):
            print("file", rel)
    print(f"# {n} events, classes {sorted(seen)}, {len(problems)} problems")
    return 1 if problems or n == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

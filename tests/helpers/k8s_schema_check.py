#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Checks Kubernetes manifests offline against the API's own types, as
Debian's python3-kubernetes (the generated OpenAPI client) defines them: every
object's kind is a known type of its apiVersion, every member is a field of
that type (no typo passes silently), every value has the field's type, and
the required fields are there (the models refuse a missing one). No cluster.

Usage: k8s_schema_check.py FILE.yaml...   Prints one line per problem; exit 1
when there is any.
"""
import datetime
import re
import sys

import yaml
from kubernetes import client
from kubernetes.client import models

API = {"v1": "V1", "apps/v1": "V1", "rbac.authorization.k8s.io/v1": "V1",
       "policy/v1": "V1", "batch/v1": "V1"}
PRIMITIVE = {"str": str, "int": int, "bool": bool, "float": (int, float),
             "object": object, "datetime": (str, datetime.datetime, datetime.date)}


def walk(value, typ, path, problems):
    m = re.fullmatch(r"list\[(.+)\]", typ)
    if m:
        if not isinstance(value, list):
            problems.append(f"{path}: not a list ({typ})")
            return
        for i, v in enumerate(value):
            walk(v, m.group(1), f"{path}[{i}]", problems)
        return
    m = re.fullmatch(r"dict\(str, (.+)\)", typ)
    if m:
        if not isinstance(value, dict):
            problems.append(f"{path}: not a map ({typ})")
            return
        for k, v in value.items():
            walk(v, m.group(1), f"{path}.{k}", problems)
        return
    if typ in PRIMITIVE:
        want = PRIMITIVE[typ]
        # YAML's true/false are not numbers, and a number is not a string
        if value is not None and (not isinstance(value, want) or
                                  (typ in ("int", "float") and isinstance(value, bool))):
            problems.append(f"{path}: {value!r} is not {typ}")
        return
    cls = getattr(models, typ, None)
    if cls is None:
        problems.append(f"{path}: unknown type {typ}")
        return
    if not isinstance(value, dict):
        problems.append(f"{path}: not an object ({typ})")
        return
    fields = {json_name: cls.openapi_types[py] for py, json_name in cls.attribute_map.items()}
    for k, v in value.items():
        if k not in fields:
            problems.append(f"{path}: {k} is not a field of {typ}")
        else:
            walk(v, fields[k], f"{path}.{k}", problems)


class Response:  # what ApiClient.deserialize reads
    def __init__(self, data):
        import json
        self.data = json.dumps(data, default=str)


def check(doc, where, problems):
    api, kind = doc.get("apiVersion"), doc.get("kind")
    prefix = API.get(api)
    typ = prefix + kind if prefix and kind else None
    if not typ or not hasattr(models, typ):
        problems.append(f"{where}: {api} {kind} is not a type this checker knows")
        return
    walk(doc, typ, f"{where}:{kind}", problems)
    try:  # the required fields, as the models check them
        client.ApiClient().deserialize(Response(doc), typ)
    except ValueError as e:
        problems.append(f"{where}:{kind}: {e}")


def main():
    problems = []
    n = 0
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            for i, doc in enumerate(yaml.safe_load_all(f)):
                if doc is None:
                    continue
                n += 1
                check(doc, f"{path}#{i}", problems)
    for p in problems:
        print(p)
    print(f"{n} objects checked, {len(problems)} problems")
    return 1 if problems or not n else 0


if __name__ == "__main__":
    sys.exit(main())

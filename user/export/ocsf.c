/* SPDX-License-Identifier: Apache-2.0 */
/* Decision entries as OCSF events, see ocsf.h. The mapping of each tool is
 * one row of the table below (docs/decision-log.md, "OCSF"). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/ocsf.h"
#include "jcs/jcs.h"
#include "lib/buf.h"
#include "lib/digest.h"

enum ocsf_object { O_NET, O_NET_BIND, O_SOCKET, O_UNIX, O_DNS, O_FILE, O_DEV, O_SYSCTL, O_EXEC,
		   O_TARGET, O_KERNEL, O_NONE };

struct ocsf_map {
	const char *tool;
	int class_uid;
	int activity_id; /* the class's activity_id enum; 99: Other */
	enum ocsf_object object;
};

/* category = class / 1000 */
static const struct ocsf_map maps[] = {
	{ "net.connect", 4001, 1, O_NET },        /* Open */
	{ "net.send", 4001, 6, O_NET },           /* Traffic */
	{ "net.bind", 4001, 7, O_NET_BIND },      /* Listen */
	{ "net.socket", 4001, 99, O_SOCKET },     /* Other: a socket made, no peer yet */
	{ "net.unix", 4001, 1, O_UNIX },          /* Open: a connect to a unix socket path */
	{ "dns.query", 4003, 1, O_DNS },          /* Query */
	{ "fs.open", 1001, 14, O_FILE },          /* Open */
	{ "fs.mkdir", 1001, 1, O_FILE },          /* Create */
	{ "fs.mknod", 1001, 1, O_FILE },
	{ "fs.link", 1001, 1, O_FILE },
	{ "fs.symlink", 1001, 1, O_FILE },
	{ "fs.rmdir", 1001, 4, O_FILE },          /* Delete */
	{ "fs.unlink", 1001, 4, O_FILE },
	{ "fs.rename", 1001, 5, O_FILE },         /* Rename */
	{ "fs.truncate", 1001, 3, O_FILE },       /* Update */
	{ "fs.chmod", 1001, 7, O_FILE },          /* Set Security */
	{ "fs.chown", 1001, 7, O_FILE },
	{ "fs.utimes", 1001, 6, O_FILE },         /* Set Attributes */
	{ "fs.setxattr", 1001, 6, O_FILE },
	{ "fs.removexattr", 1001, 6, O_FILE },
	{ "fs.chattr", 1001, 6, O_FILE },
	{ "fs.mount", 1001, 12, O_FILE },         /* Mount */
	{ "fs.move_mount", 1001, 12, O_FILE },
	{ "fs.fsconfig", 1001, 12, O_FILE },
	{ "fs.umount", 1001, 13, O_FILE },        /* Unmount */
	{ "fs.pivot_root", 1001, 99, O_FILE },
	{ "dev.access", 1001, 14, O_DEV },        /* Open, of a device node */
	{ "sysctl.write", 1001, 3, O_SYSCTL },    /* Update, of /proc/sys/NAME */
	{ "fs.exec", 1007, 1, O_EXEC },           /* Launch */
	{ "proc.kill", 1007, 2, O_TARGET },       /* Terminate: a signal to a process */
	{ "proc.sigio", 1007, 99, O_TARGET },
	{ "proc.ptrace", 1007, 3, O_TARGET },     /* Open: a handle on another process */
	{ "cgroup.move", 1007, 99, O_TARGET },
	{ "cgroup.untracked", 1007, 99, O_TARGET },
	{ "bpf", 1003, 4, O_KERNEL },             /* Kernel Activity, Invoke: the bpf() call */
};

static const struct ocsf_map *find_map(const char *tool)
{
	for (size_t i = 0; tool && i < sizeof(maps) / sizeof(maps[0]); i++)
		if (!strcmp(maps[i].tool, tool))
			return &maps[i];
	return NULL;
}

int kw_ocsf_class(const char *tool)
{
	const struct ocsf_map *m = find_map(tool);

	return m ? m->class_uid : 0;
}

static const char *str(const json_t *entry, const char *key)
{
	return json_string_value(json_object_get(entry, key));
}

static void set_str(json_t *o, const char *key, const char *v)
{
	if (v)
		json_object_set_new(o, key, json_string(v));
}

/* The process that asked: the entry's pid, comm, uid. */
static json_t *actor(const json_t *entry)
{
	json_t *proc = json_object(), *a = json_object();
	const json_t *uid = json_object_get(entry, "uid");

	json_object_set(proc, "pid", json_object_get(entry, "pid"));
	set_str(proc, "name", str(entry, "comm"));
	if (json_is_integer(uid)) {
		char u[24];

		snprintf(u, sizeof(u), "%lld", (long long)json_integer_value(uid));
		json_object_set_new(proc, "user", json_pack("{s:s}", "uid", u));
	}
	json_object_set_new(a, "process", proc);
	return a;
}

static json_t *endpoint(const json_t *entry)
{
	json_t *ep = json_object();

	set_str(ep, "ip", str(entry, "host"));
	json_object_set(ep, "port", json_object_get(entry, "port"));
	return ep;
}

/* The resolver's client, "ADDR:PORT" or "[ADDR]:PORT". */
static json_t *client_endpoint(const char *client)
{
	char ip[64];
	const char *colon = client ? strrchr(client, ':') : NULL;
	const char *start = client;
	size_t n;

	if (!colon)
		return json_pack("{s:s}", "name", client ? client : "unknown");
	if (*start == '[')
		start++;
	n = (size_t)(colon - start);
	if (n && start[n - 1] == ']')
		n--;
	if (n >= sizeof(ip))
		return json_pack("{s:s}", "name", client);
	memcpy(ip, start, n);
	ip[n] = '\0';
	return json_pack("{s:s, s:i}", "ip", ip, "port", atoi(colon + 1));
}

static json_t *file_obj(const char *path, int type_id)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	return json_pack("{s:s, s:s, s:i}", "name", base && base[1] ? base + 1 : (path ? path : ""),
			 "path", path ? path : "", "type_id", type_id);
}

/* The class's own objects for the entry. */
static void add_object(json_t *ev, const struct ocsf_map *m, const json_t *entry,
		       const struct kw_ocsf_context *ctx)
{
	char path[4200];
	const char *proto = str(entry, "proto");
	json_t *target;

	switch (m->object) {
	case O_NET:
	case O_NET_BIND:
		json_object_set_new(ev, m->object == O_NET ? "dst_endpoint" : "src_endpoint",
				    endpoint(entry));
		json_object_set_new(ev, "connection_info",
				    json_pack("{s:i, s:s?}", "direction_id", m->object == O_NET ? 2 : 1,
					      "protocol_name", proto));
		break;
	case O_SOCKET:
		/* no peer yet: the socket is made on this host */
		json_object_set_new(ev, "src_endpoint", json_pack("{s:s}", "hostname",
								  ctx->hostname ?: "localhost"));
		json_object_set_new(ev, "connection_info",
				    json_pack("{s:i, s:O?}", "direction_id", 0, "protocol_num",
					      json_object_get(entry, "protocol")));
		break;
	case O_UNIX:
		json_object_set_new(ev, "dst_endpoint", json_pack("{s:s}", "name", str(entry, "path") ?: ""));
		json_object_set_new(ev, "connection_info", json_pack("{s:i, s:s}", "direction_id", 4,
								     "protocol_name", "unix"));
		break;
	case O_DNS:
		json_object_set_new(ev, "src_endpoint", client_endpoint(str(entry, "client")));
		json_object_set_new(ev, "query", json_pack("{s:s, s:s?}", "hostname", str(entry, "name") ?: "",
							   "type", str(entry, "qtype")));
		set_str(ev, "rcode", str(entry, "rcode"));
		break;
	case O_FILE:
		json_object_set_new(ev, "file", file_obj(str(entry, "path"), 0));
		break;
	case O_DEV: {
		const char *dev = str(entry, "dev");

		snprintf(path, sizeof(path), "%s", dev ? dev : "");
		json_object_set_new(ev, "file", file_obj(path, dev && dev[0] == 'b' ? 4 : 3));
		break;
	}
	case O_SYSCTL:
		snprintf(path, sizeof(path), "/proc/sys/%s", str(entry, "name") ?: "");
		json_object_set_new(ev, "file", file_obj(path, 1));
		break;
	case O_EXEC: {
		const char *digest = str(entry, "digest");
		json_t *file = file_obj(str(entry, "path"), 8);

		/* the kernel's digest of what ran */
		if (file && digest && !strncmp(digest, "sha256:", 7))
			json_object_set_new(file, "hashes", json_pack("[{s:i, s:s, s:s}]", "algorithm_id", 3,
								      "algorithm", "SHA-256", "value",
								      digest + 7));
		target = json_pack("{s:O?, s:o}", "pid", json_object_get(entry, "pid"), "file", file);
		json_object_set_new(ev, "process", target);
		break;
	}
	case O_TARGET:
		target = json_object();
		if (json_object_get(entry, "target_pid"))
			json_object_set(target, "pid", json_object_get(entry, "target_pid"));
		else
			json_object_set(target, "pid", json_object_get(entry, "pid"));
		json_object_set_new(ev, "process", target);
		break;
	case O_KERNEL:
		json_object_set_new(ev, "kernel", json_pack("{s:s, s:i}", "name", "bpf", "type_id", 2));
		break;
	case O_NONE:
		break;
	}
}

/* metadata: the session, the seq, and where the event comes from. */
static json_t *metadata(const json_t *entry, const struct kw_ocsf_context *ctx, const char *hash)
{
	json_t *seq = json_object_get(entry, "seq");
	json_t *md, *tags;
	char uid[64];

	snprintf(uid, sizeof(uid), "%.32s:%lld", ctx->session ? ctx->session : "",
		 (long long)json_integer_value(seq));
	tags = json_pack("[{s:s, s:s}, {s:s, s:s}]", "name", "kwitness.session", "value",
			 ctx->session ? ctx->session : "", "name", "kwitness.entry_hash", "value", hash);
	if (tags && ctx->record_hash)
		json_array_append_new(tags, json_pack("{s:s, s:s}", "name", "kwitness.record_hash",
						      "value", ctx->record_hash));
	/* host: actor and device on network classes; security_control: action
	 * and disposition */
	md = json_pack("{s:s, s:[s, s], s:{s:s, s:s}, s:s, s:s, s:s, s:s, s:o}", "version",
		       KW_OCSF_VERSION, "profiles", "host", "security_control",
		       "product", "name", "kwitness", "vendor_name", "kwitness", "log_name",
		       "kwitness decision log", "log_provider", "kwitnessd", "correlation_uid",
		       ctx->session ? ctx->session : "", "uid", uid, "tags", tags);
	if (md && json_is_integer(seq))
		json_object_set(md, "sequence", seq);
	return md;
}

static json_t *device(const struct kw_ocsf_context *ctx)
{
	json_t *dev = json_pack("{s:i}", "type_id", 0);

	set_str(dev, "hostname", ctx->hostname);
	set_str(dev, "uid", ctx->machine_id);
	if (dev && !ctx->hostname && !ctx->machine_id)
		set_str(dev, "name", "unknown");
	return dev;
}

/* The things OCSF has no place for: the rule and the cgroup. */
static json_t *unmapped(const json_t *entry)
{
	static const char *const keys[] = { "tool", "rule", "enforced", "cgroup", "via", "client",
					    "answers", "access", "signal", "cmd", "digest" };
	json_t *u = json_object();

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (json_object_get(entry, keys[i]))
			json_object_set(u, keys[i], json_object_get(entry, keys[i]));
	return u;
}

json_t *kw_ocsf_event(const json_t *entry, const struct kw_ocsf_context *ctx)
{
	const char *decision = str(entry, "decision");
	const struct ocsf_map *m = find_map(str(entry, "tool"));
	struct kw_buf bytes = { 0 };
	char hash[KW_DIGEST_STR_MAX], msg[96];
	bool deny, enforced;
	json_t *ev;
	int64_t ts;

	if (!m || !decision || jcs_dump(entry, &bytes) ||
	    kw_digest_buf(KW_SHA256, bytes.data, bytes.len, hash)) {
		kw_buf_free(&bytes);
		return NULL;
	}
	deny = !strcmp(decision, "deny");
	enforced = json_is_true(json_object_get(entry, "enforced"));
	ts = json_integer_value(json_object_get(entry, "ts"));
	/* a deny that was not enforced (audit mode): allowed, and said */
	ev = json_pack("{s:i, s:i, s:i, s:I, s:I, s:i, s:i, s:s, s:i, s:i, s:s, s:s,"
		       " s:{s:i, s:s, s:s}, s:o, s:o, s:o}",
		       "category_uid", m->class_uid / 1000, "class_uid", m->class_uid, "activity_id",
		       m->activity_id, "type_uid", (json_int_t)m->class_uid * 100 + m->activity_id,
		       "time", (json_int_t)(ts / 1000), "severity_id", deny ? 3 : 1, "action_id",
		       deny && enforced ? 2 : 1, "action", deny && enforced ? "Denied" : "Allowed",
		       "disposition_id", deny ? (enforced ? 2 : 15) : 1, "status_id",
		       deny && enforced ? 2 : 1, "message", decision, "raw_data", bytes.data,
		       "raw_data_hash", "algorithm_id", 3, "algorithm", "SHA-256", "value",
		       hash + strlen("sha256:"), "metadata", metadata(entry, ctx, hash), "device",
		       device(ctx), "unmapped", unmapped(entry));
	kw_buf_free(&bytes);
	if (!ev)
		return NULL;
	snprintf(msg, sizeof(msg), "%s %s%s", m->tool, decision,
		 deny && !enforced ? " (not enforced)" : "");
	json_object_set_new(ev, "message", json_string(msg));
	/* the resolver's questions have a socket, not a task */
	if (json_object_get(entry, "pid"))
		json_object_set_new(ev, "actor", actor(entry));
	add_object(ev, m, entry, ctx);
	return ev;
}

bool kw_ocsf_put(json_t *ev)
{
	char *s = ev ? json_dumps(ev, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	if (s)
		puts(s);
	free(s);
	json_decref(ev);
	return s != NULL;
}

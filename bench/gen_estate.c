/* SPDX-License-Identifier: Apache-2.0 */
/* gen_estate: writes a synthetic estate, a folder of kwitnessd state folders,
 * fast enough for the 10 M decision case of bench/bench_estate.sh (the shell
 * generator runs several processes per session).
 *
 *   gen_estate --out DIR [--hosts H] [--sessions S] [--decisions N]
 *              [--jobs J] [--seed X]
 *
 * DIR/hosts/host-H/{logs,records,policies} per host, each host with its own
 * Ed25519 key (DIR/trust/host-H.jwk, bound to its hostname and machine id in
 * DIR/trust/hosts), DIR/generated ("H S N", what bench_estate.sh reuses).
 * Every line is made by kwitnessd's own code: decisions and proc entries are
 * kernel ring buffer events put through kw_event_to_entry, the "open" proc
 * entries kw_proc_facts_entry, the open and close entries as session_open.c
 * and session_close.c write them, the transcript hash kw_transcript_*, and
 * the record kw_seal_record (build, sign, self-check, atomic write).
 *
 * A session: the agent (python3) already in the cgroup at open, then the
 * agent forks and execs tools (curl, git, pip, sh, ...) every few dozen
 * decisions; decisions of the agent and its latest tool are net.connect
 * (to a few hundred services and random 10/8 addresses), net.send (DNS),
 * fs.open and fs.exec (with the file's digest), about one in twenty denied.
 * One decision is planted: a denied connect to 203.0.113.66:4444 by nc, on
 * one host, which "who did this" must find; it is printed on stdout. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <openssl/sha.h>

#include "kwitness/abi/event.h"
#include "collector/decision.h"
#include "collector/proc_entry.h"
#include "collector/seal.h"
#include "collector/transcript.h"
#include "jcs/jcs.h"
#include "lib/buf.h"
#include "lib/digest.h"
#include "trace/key.h"

#define PLANT_ADDR 0xCB007142u /* 203.0.113.66 */
#define PLANT_PORT 4444
/* Sessions open within 30 days before this time (2026-11-01). */
#define EPOCH_END 1793491200LL
#define BOOT_BEFORE 86400LL /* each host booted a day before its first session */

static const char bundle[] =
	"{\"exec\":{\"allow\":[\"/usr/bin\",\"/bin\"]},\"fs\":{\"deny\":[\"/workspace/.ssh\"],"
	"\"read\":[\"/usr\",\"/lib\",\"/etc/ssl\",\"/workspace\"],\"write\":[\"/workspace\",\"/tmp\"]},"
	"\"kwitness_policy\":1,\"mode\":\"enforce\",\"net\":{\"connect\":[\"10.0.0.0/8:443\","
	"\"10.0.0.0/8:5432\"],\"send\":[\"10.0.0.2/32:53\"]},\"on_record_failure\":\"deny\","
	"\"record\":\"all\"}\n";
static char bundle_hash[KW_DIGEST_STR_MAX], bundle_hex[65];
static const char image[] = "sha256:4b1f0e6a2c8d9e7f30a5c6b7d8e9f0a1b2c3d4e5f60718293a4b5c6d7e8f9012";

struct opts {
	const char *out;
	unsigned hosts, sessions, decisions, jobs;
	uint64_t seed;
};

/* A tool the agent runs: its file, argument vector (NUL-separated) and
 * what it then does. */
struct tool {
	const char *comm, *exe, *argv;
	size_t argv_len;
	int net; /* 1: connects, 0: opens files */
};
#define TOOL(c, e, a, n) { c, e, a, sizeof(a) - 1, n }
static const struct tool tools[] = {
	TOOL("curl", "/usr/bin/curl", "curl\0-sS\0https://api.internal/v1/items\0", 1),
	TOOL("git", "/usr/bin/git", "git\0fetch\0origin\0", 1),
	TOOL("pip", "/usr/bin/pip", "pip\0install\0-r\0requirements.txt\0", 1),
	TOOL("sh", "/bin/sh", "sh\0-c\0make test\0", 0),
	TOOL("python3", "/usr/bin/python3", "python3\0-m\0pytest\0-q\0", 0),
	TOOL("psql", "/usr/bin/psql", "psql\0-h\0db.internal\0-c\0select 1\0", 1),
	TOOL("grep", "/bin/grep", "grep\0-rn\0TODO\0src\0", 0),
};
#define NTOOLS (sizeof(tools) / sizeof(tools[0]))
static const char *const files[] = {
	"/workspace/src/main.py", "/workspace/src/util.py", "/workspace/README.md",
	"/usr/lib/python3.11/json/__init__.py", "/etc/ssl/certs/ca-certificates.crt",
	"/workspace/tests/test_api.py", "/tmp/build.log", "/usr/lib/x86_64-linux-gnu/libssl.so.3",
};
#define NFILES (sizeof(files) / sizeof(files[0]))

struct rng {
	uint64_t s;
};
static uint64_t rnd(struct rng *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return r->s;
}

struct proc {
	uint32_t pid;
	uint64_t start_ns;
	char comm[KW_COMM_LEN];
	int net;
};

/* One session being written. */
struct sess {
	struct rng r;
	struct kw_buf log;
	struct kw_transcript tr;
	uint64_t seq, boot_ns, decisions, denials;
	int64_t b2r;         /* boottime -> realtime, ns */
	uint64_t cgroup;
	uint32_t next_pid;
	struct proc agent, tool, planted;
	int have_tool;
	int plant; /* the planted decision goes in this session */
	uint64_t plant_at;
	char id[33];
};

static int line_done(struct sess *s, size_t start)
{
	int e = kw_transcript_append(&s->tr, s->log.data + start, s->log.len - start);

	return e ?: kw_buf_putc(&s->log, '\n');
}

static void hdr(struct sess *s, struct kw_event_hdr *h, uint16_t kind, const struct proc *p)
{
	memset(h, 0, sizeof(*h));
	s->boot_ns += 1000 + rnd(&s->r) % 4000000; /* up to 4 ms apart */
	h->seq = s->seq++;
	h->ts_ns = s->boot_ns;
	h->cgroup_id = s->cgroup;
	h->pid = p->pid;
	h->uid = 1000;
	h->kind = kind;
	h->decision = KW_PERMIT;
	memcpy(h->comm, p->comm, sizeof(h->comm));
	h->start_ns = p->start_ns;
}

static int event(struct sess *s, const void *ev, size_t size)
{
	size_t start = s->log.len;
	const struct kw_event_hdr *h = ev;
	int e = kw_event_to_entry(ev, size, s->b2r, &s->log);

	if (e)
		return e;
	if (!kw_is_proc_kind(h->kind)) {
		s->decisions++;
		s->denials += h->decision == KW_DENY;
	}
	return line_done(s, start);
}

static void deny(struct kw_event_hdr *h)
{
	h->decision = KW_DENY;
	h->enforced = 1;
	h->rule = KW_RULE_DEFAULT;
}

static int net_decision(struct sess *s, const struct proc *p, int send)
{
	struct kw_ev_net ev = { 0 };
	uint64_t x = rnd(&s->r);
	uint32_t a;

	hdr(s, &ev.h, send ? KW_EV_NET_SEND : KW_EV_NET_CONNECT, p);
	ev.family = 4;
	if (send) { /* DNS to the resolver */
		ev.proto = 17, ev.sock_type = 2, ev.port = 53, a = 0x0A000002u;
	} else {
		ev.proto = 6, ev.sock_type = 1;
		ev.port = x % 5 ? 443 : 5432;
		ev.h.rule = ev.port == 443 ? 0 : 1;
		/* mostly a few hundred services, else anywhere in 10/8 */
		a = x % 10 < 7 ? 0x0A010000u | (uint32_t)((x >> 8) % 400) : 0x0A000000u | (uint32_t)(x >> 40);
		if ((x >> 32) % 12 == 0) { /* outside the policy */
			a = 0x22000000u | (uint32_t)((x >> 12) & 0xffffff);
			deny(&ev.h);
		}
	}
	if (s->plant && s->seq - 1 == s->plant_at && !send) {
		a = PLANT_ADDR, ev.port = PLANT_PORT;
		deny(&ev.h);
	}
	ev.addr[0] = a >> 24, ev.addr[1] = a >> 16, ev.addr[2] = a >> 8, ev.addr[3] = a;
	return event(s, &ev, sizeof(ev));
}

static int open_decision(struct sess *s, const struct proc *p)
{
	struct kw_ev_path ev = { 0 };
	uint64_t x = rnd(&s->r);
	const char *path = files[x % NFILES];
	int write = strncmp(path, "/tmp/", 5) == 0 || (x >> 8) % 7 == 0;

	hdr(s, &ev.h, KW_EV_FS_OPEN, p);
	if ((x >> 16) % 15 == 0) {
		path = (x >> 24) % 2 ? "/workspace/.ssh/id_ed25519" : "/etc/shadow";
		write = 0;
		deny(&ev.h);
		if (path[1] == 'w')
			ev.h.rule = KW_RULE_PATH(3, 0); /* fs.deny[0] */
	} else if (write) { /* fs.write[0] /workspace, [1] /tmp */
		if (strncmp(path, "/workspace/", 11) && strncmp(path, "/tmp/", 5))
			path = "/workspace/out.json";
		ev.h.rule = KW_RULE_PATH(2, path[1] == 't');
	} else {
		ev.h.rule = KW_RULE_PATH(1, !strncmp(path, "/usr", 4) ? 0 : !strncmp(path, "/etc", 4) ? 2 : 3);
		if (!strncmp(path, "/tmp/", 5))
			ev.h.rule = KW_RULE_PATH(2, 1);
	}
	ev.access = write ? KW_ACC_READ | KW_ACC_WRITE : KW_ACC_READ;
	ev.path_len = (uint32_t)strlen(path);
	memcpy(ev.path, path, ev.path_len);
	return event(s, &ev, sizeof(ev));
}

/* The agent forks and the child runs tool t: fork entry, fs.exec decision
 * (with the file's digest), exec entry. */
static int run_tool(struct sess *s, const struct tool *t)
{
	struct {
		struct kw_ev_task ev;
		char tail[KW_PATH_MAX + KW_ARGV_MAX];
	} task = { 0 };
	struct kw_ev_exec x = { 0 };
	size_t exe_len = strlen(t->exe);
	int e;

	s->tool = (struct proc){ .pid = s->next_pid, .start_ns = s->boot_ns + 1, .net = t->net };
	s->next_pid += 1 + (uint32_t)(rnd(&s->r) % 40);
	memcpy(s->tool.comm, s->agent.comm, sizeof(s->tool.comm));
	hdr(s, &task.ev.h, KW_EV_PROC_FORK, &s->tool);
	task.ev.ppid = s->agent.pid;
	task.ev.parent_start_ns = s->agent.start_ns;
	task.ev.gid = 1000;
	e = event(s, &task.ev, sizeof(task.ev));

	hdr(s, &x.p.h, KW_EV_FS_EXEC, &s->tool);
	x.p.h.rule = KW_RULE_PATH(4, t->exe[1] == 'b');
	x.p.access = KW_ACC_EXEC;
	x.p.path_len = (uint32_t)exe_len;
	memcpy(x.p.path, t->exe, exe_len);
	x.ino = 1000 + (uint64_t)(t - tools);
	x.dev = 8u << 20 | 1;
	x.generation = 7;
	SHA256((const unsigned char *)t->exe, exe_len, x.sha256); /* stands for the file's */
	e = e ?: event(s, &x, sizeof(x));

	memset(&task, 0, sizeof(task));
	snprintf(s->tool.comm, sizeof(s->tool.comm), "%s", t->comm);
	hdr(s, &task.ev.h, KW_EV_PROC_EXEC, &s->tool);
	task.ev.ppid = s->agent.pid;
	task.ev.parent_start_ns = s->agent.start_ns;
	task.ev.gid = 1000;
	task.ev.path_len = (uint32_t)exe_len;
	task.ev.argv_len = task.ev.argv_full = (uint32_t)t->argv_len;
	memcpy(task.tail, t->exe, exe_len);
	memcpy(task.tail + exe_len, t->argv, t->argv_len);
	e = e ?: event(s, &task, sizeof(task.ev) + exe_len + t->argv_len);
	s->have_tool = 1;
	return e;
}

/* The planted connect's process: nc, run by the agent just before it. */
static const struct tool nc = TOOL("nc", "/usr/bin/nc", "nc\0" "203.0.113.66\0" "4444\0", 1);

static int decision(struct sess *s, unsigned left)
{
	uint64_t x = rnd(&s->r);
	const struct proc *p;

	if (s->plant && s->seq == s->plant_at - 3)
		return run_tool(s, &nc); /* fork, fs.exec (counted), exec */
	if (x % 40 == 0 && left >= 2 && !(s->plant && s->seq + 6 >= s->plant_at && s->seq <= s->plant_at))
		return run_tool(s, &tools[(x >> 8) % NTOOLS]);
	p = s->have_tool && (x >> 16) % 3 ? &s->tool : &s->agent;
	if (s->plant && s->seq == s->plant_at) {
		s->planted = s->tool;
		return net_decision(s, &s->tool, 0);
	}
	switch ((x >> 20) % (p->net ? 8 : 10)) {
	case 0: return net_decision(s, p, 1);
	case 1: case 2: case 3: return open_decision(s, p);
	default: return p->net ? net_decision(s, p, 0) : open_decision(s, p);
	}
}

struct host {
	unsigned n;
	char name[32], machine_id[33], boot_id[37];
	struct kw_key *key;
	char dir[4096];
};

static int open_entries(struct sess *s, const struct host *hst, int64_t open_us, const char *sandbox)
{
	static const char argv[] = "python3\0/workspace/agent.py\0--task\0triage";
	struct kw_proc_facts f = {
		.ts_us = open_us + 40, .event = "open", .pid = s->agent.pid,
		.start_ns = s->agent.start_ns, .has_parent = true, .ppid = s->agent.pid - 1,
		.parent_start_ns = s->agent.start_ns - 2000000, .has_ids = true, .uid = 1000,
		.gid = 1000, .has_cgroup = true, .cgroup = s->cgroup, .comm = "python3",
		.comm_len = 7, .exe = "/usr/bin/python3.11", .exe_len = 19, .argv = argv,
		.argv_len = sizeof(argv) - 1, .argv_full = sizeof(argv) - 1,
	};
	char cg[64], cgid[24];
	struct jcs_obj o;
	size_t start = 0;
	int e;

	snprintf(cg, sizeof(cg), "/sys/fs/cgroup/agents/agent-%s", s->id + 24);
	snprintf(cgid, sizeof(cgid), "%" PRIu64, s->cgroup);
	/* as session_open.c writes it */
	e = jcs_obj_begin(&o, &s->log);
	e = e ?: jcs_obj_str(&o, "boot_id", hst->boot_id);
	e = e ?: jcs_obj_str(&o, "bundle_hash", bundle_hash);
	e = e ?: jcs_obj_str(&o, "cgroup", cg);
	e = e ?: jcs_obj_str(&o, "cgroup_id", cgid);
	e = e ?: jcs_obj_str(&o, "cgroup_mode", "unified");
	e = e ?: jcs_obj_str(&o, "collector", "kwitnessd");
	e = e ?: jcs_obj_str(&o, "collector_version", "v0.9.0");
	e = e ?: jcs_obj_str(&o, "data_class", "internal");
	e = e ?: jcs_obj_str(&o, "hooks", "net.connect,net.send,fs,exec");
	e = e ?: jcs_obj_str(&o, "hostname", hst->name);
	e = e ?: jcs_obj_str(&o, "image_digest", image);
	e = e ?: jcs_obj_str(&o, "kernel", "6.12.48+deb13-amd64");
	e = e ?: jcs_obj_str(&o, "machine_id", hst->machine_id);
	e = e ?: jcs_obj_str(&o, "mode", "enforce");
	e = e ?: jcs_obj_str(&o, "model_id", "claude-x");
	e = e ?: jcs_obj_str(&o, "model_provider", "anthropic");
	e = e ?: jcs_obj_str(&o, "on_record_failure", "deny");
	e = e ?: jcs_obj_str(&o, "programs", "kw_connect4:8f3a1c2e9b7d6054,kw_sendmsg4:1e2d3c4b5a697887,"
						"kw_file_open:aa01bb02cc03dd04,kw_bprm_check:0f1e2d3c4b5a6978");
	e = e ?: jcs_obj_str(&o, "record", "all");
	e = e ?: jcs_obj_int(&o, "ringbuf_size", 1048576);
	e = e ?: jcs_obj_str(&o, "sandbox_id", sandbox);
	e = e ?: jcs_obj_str(&o, "session", s->id);
	e = e ?: jcs_obj_str(&o, "tool", "kwitness.open");
	e = e ?: jcs_obj_int(&o, "ts", open_us);
	e = e ?: jcs_obj_end(&o);
	e = e ?: line_done(s, start);
	/* the agent, in the cgroup when the session opened */
	start = s->log.len;
	f.seq = s->seq++;
	e = e ?: kw_proc_facts_entry(&f, &s->log);
	return e ?: line_done(s, start);
}

static int close_entry(struct sess *s, int64_t close_us)
{
	size_t start = s->log.len;
	struct jcs_obj o;
	int e;

	/* as session_close.c writes it */
	e = jcs_obj_begin(&o, &s->log);
	e = e ?: jcs_obj_bool(&o, "complete", true);
	e = e ?: jcs_obj_int(&o, "decisions", (int64_t)s->decisions);
	e = e ?: jcs_obj_int(&o, "denials", (int64_t)s->denials);
	e = e ?: jcs_obj_int(&o, "dropped", 0);
	e = e ?: jcs_obj_int(&o, "kill_failed", 0);
	e = e ?: jcs_obj_int(&o, "killed", 0);
	e = e ?: jcs_obj_int(&o, "next_seq", (int64_t)s->seq);
	e = e ?: jcs_obj_int(&o, "seq_gaps", 0);
	e = e ?: jcs_obj_str(&o, "session", s->id);
	e = e ?: jcs_obj_int(&o, "still_running", 0);
	e = e ?: jcs_obj_str(&o, "tool", "kwitness.close");
	e = e ?: jcs_obj_int(&o, "ts", close_us);
	e = e ?: jcs_obj_int(&o, "unrecorded", 0);
	e = e ?: jcs_obj_int(&o, "untracked_cgroups", 0);
	e = e ?: jcs_obj_end(&o);
	return e ?: line_done(s, start);
}

static int session(const struct host *hst, unsigned n, const struct opts *op, int plant)
{
	struct sess s = { .plant = plant };
	int64_t open_us, close_us;
	uint64_t span = 30 * 86400 / op->sessions;
	char sandbox[96], path[4200], hash[KW_DIGEST_STR_MAX], why[512];
	struct kw_record_input in = { 0 };
	enum kw_seal_stage stage;
	uint64_t count;
	int e;

	s.r.s = (op->seed ^ ((uint64_t)hst->n * 1000003u + n) * 0x9E3779B97F4A7C15ULL) | 1;
	for (int i = 0; i < 8; i++)
		rnd(&s.r);
	snprintf(s.id, sizeof(s.id), "%016" PRIx64 "%016" PRIx64, rnd(&s.r), rnd(&s.r));
	snprintf(sandbox, sizeof(sandbox), "spiffe://estate.example/%s/agent-%u", hst->name, n % 8);
	s.b2r = (EPOCH_END - 30 * 86400 - BOOT_BEFORE - hst->n) * 1000000000LL;
	open_us = (EPOCH_END - 30 * 86400 + (int64_t)(n * span) + (int64_t)(rnd(&s.r) % (span / 2 + 1))) *
		  1000000LL + (int64_t)(rnd(&s.r) % 1000000);
	s.boot_ns = (uint64_t)(open_us * 1000 - s.b2r);
	s.cgroup = 4000 + n * 17 + rnd(&s.r) % 16;
	s.agent = (struct proc){ .pid = 2000 + (uint32_t)(rnd(&s.r) % 200000),
				 .start_ns = s.boot_ns - 3000000000ULL, .comm = "python3", .net = 1 };
	s.next_pid = s.agent.pid + 2;
	s.plant_at = 3 + op->decisions / 2;
	e = kw_transcript_init(&s.tr);
	e = e ?: open_entries(&s, hst, open_us, sandbox);
	while (!e && s.decisions < op->decisions)
		e = decision(&s, op->decisions - (unsigned)s.decisions);
	close_us = (int64_t)(s.boot_ns + (uint64_t)s.b2r) / 1000 + 700;
	e = e ?: close_entry(&s, close_us);
	e = e ?: kw_transcript_final(&s.tr, hash, &count);
	snprintf(path, sizeof(path), "%s/logs/%s.jsonl", hst->dir, s.id);
	e = e ?: kw_write_file_replace(path, s.log.data, s.log.len, 0644);
	if (e) {
		fprintf(stderr, "gen_estate: %s: %s\n", path, strerror(-e));
		goto out;
	}
	in.sandbox_id = sandbox;
	in.image_digest = image;
	in.bundle = bundle;
	in.bundle_len = sizeof(bundle) - 1;
	in.transcript_hash = hash;
	in.call_count = count;
	in.enforcement_mode = "enforce";
	in.model_provider = "anthropic";
	in.model_id = "claude-x";
	in.data_class = "internal";
	in.iat = close_us / 1000000 + 1;
	snprintf(path, sizeof(path), "%s/records/%s.json", hst->dir, s.id);
	e = kw_seal_record(&in, hst->key, path, NULL, &stage, why, sizeof(why));
	if (e)
		fprintf(stderr, "gen_estate: %s: %s\n", path, why);
	else if (plant)
		printf("planted: %s session %s seq %" PRIu64 " pid %u proc %u-%" PRIu64 " comm nc "
		       "connect 203.0.113.66:%d deny\n",
		       hst->name, s.id, s.plant_at, s.planted.pid, s.planted.pid, s.planted.start_ns,
		       PLANT_PORT);
out:
	kw_buf_free(&s.log);
	return e ? -1 : 0;
}

static int write_text(const char *path, const char *text)
{
	int e = kw_write_file_replace(path, text, strlen(text), 0644);

	if (e)
		fprintf(stderr, "gen_estate: %s: %s\n", path, strerror(-e));
	return e;
}

static int mkdirs(const char *dir, const char *const *subs)
{
	char p[4200];

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	for (; *subs; subs++) {
		snprintf(p, sizeof(p), "%s/%s", dir, *subs);
		if (mkdir(p, 0755) && errno != EEXIST)
			return -errno;
	}
	return 0;
}

/* A host's identity, from the seed: key, machine id, boot id. */
static int host_init(struct host *h, unsigned n, const struct opts *op)
{
	unsigned char seed[SHA256_DIGEST_LENGTH];
	char text[96];

	h->n = n;
	snprintf(h->name, sizeof(h->name), "host-%u", n);
	snprintf(h->dir, sizeof(h->dir), "%s/hosts/%s", op->out, h->name);
	snprintf(text, sizeof(text), "gen_estate %" PRIu64 " %s", op->seed, h->name);
	SHA256((const unsigned char *)text, strlen(text), seed);
	for (int i = 0; i < 16; i++) {
		snprintf(h->machine_id + 2 * i, 3, "%02x", seed[16 + i]);
		snprintf(h->boot_id + 2 * i, 3, "%02x", seed[i] ^ seed[31 - i]);
	}
	/* a UUID's dashes */
	memmove(h->boot_id + 24, h->boot_id + 20, 12), h->boot_id[23] = '-';
	memmove(h->boot_id + 19, h->boot_id + 16, 4), h->boot_id[18] = '-';
	memmove(h->boot_id + 14, h->boot_id + 12, 4), h->boot_id[13] = '-';
	memmove(h->boot_id + 9, h->boot_id + 8, 4), h->boot_id[8] = '-';
	h->boot_id[36] = '\0';
	return kw_key_from_seed(seed, &h->key);
}

static int gen_host(unsigned n, const struct opts *op, unsigned plant_host)
{
	static const char *const subs[] = { "logs", "records", "policies", NULL };
	struct host h;
	char path[4200], *jwk_text = NULL;
	json_t *jwk;
	int e;

	if (host_init(&h, n, op)) {
		fprintf(stderr, "gen_estate: %s: no key\n", h.name);
		return -1;
	}
	e = mkdirs(h.dir, subs);
	snprintf(path, sizeof(path), "%s/policies/%s", h.dir, bundle_hex);
	e = e ?: write_text(path, bundle);
	jwk = kw_key_public_jwk(h.key);
	jwk_text = jwk ? json_dumps(jwk, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(jwk);
	snprintf(path, sizeof(path), "%s/trust/%s.jwk", op->out, h.name);
	e = e ?: jwk_text ? write_text(path, jwk_text) : -ENOMEM;
	free(jwk_text);
	for (unsigned s = 0; !e && s < op->sessions; s++)
		e = session(&h, s, op, n == plant_host && s == op->sessions / 2);
	kw_key_free(h.key);
	return e;
}

/* trust/hosts: each key signs for its own host only. */
static int trust_hosts(const struct opts *op)
{
	struct kw_buf b = { 0 };
	char path[4200], line[160];
	int e = 0;

	for (unsigned n = 1; !e && n <= op->hosts; n++) {
		struct host h;

		e = host_init(&h, n, op);
		kw_key_free(h.key);
		snprintf(line, sizeof(line), "%s.jwk hostname=%s machine_id=%s\n", h.name, h.name,
			 h.machine_id);
		e = e ?: kw_buf_puts(&b, line);
	}
	snprintf(path, sizeof(path), "%s/trust/hosts", op->out);
	e = e ?: write_text(path, b.data);
	kw_buf_free(&b);
	return e;
}

static int run_jobs(const struct opts *op)
{
	unsigned plant_host = op->hosts / 2 + 1, failed = 0;

	fflush(stdout);
	for (unsigned j = 0; j < op->jobs; j++) {
		pid_t pid = fork();

		if (pid < 0)
			return -1;
		if (pid == 0) {
			int e = 0;

			for (unsigned n = 1 + j; !e && n <= op->hosts; n += op->jobs)
				e = gen_host(n, op, plant_host);
			fflush(stdout);
			_exit(e ? 1 : 0);
		}
	}
	for (unsigned j = 0; j < op->jobs; j++) {
		int st;

		if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
			failed++;
	}
	return failed ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "out", required_argument, NULL, 'o' },      { "hosts", required_argument, NULL, 'H' },
		{ "sessions", required_argument, NULL, 'S' }, { "decisions", required_argument, NULL, 'N' },
		{ "jobs", required_argument, NULL, 'j' },     { "seed", required_argument, NULL, 'r' },
		{ 0 },
	};
	static const char *const subs[] = { "hosts", "trust", NULL };
	struct opts op = { .hosts = 20, .sessions = 5, .decisions = 2000, .jobs = 1, .seed = 1 };
	char path[4200], gen[64];
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'o': op.out = optarg; break;
		case 'H': op.hosts = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'S': op.sessions = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'N': op.decisions = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'j': op.jobs = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'r': op.seed = strtoull(optarg, NULL, 10); break;
		default: goto usage;
		}
	}
	if (!op.out || optind != argc || !op.hosts || !op.sessions || op.decisions < 8 || !op.jobs ||
	    op.hosts > 100000 || op.sessions > 100000 || op.decisions > 100000000)
		goto usage;
	if (op.jobs > op.hosts)
		op.jobs = op.hosts;
	if (kw_digest_buf(KW_SHA256, bundle, sizeof(bundle) - 1, bundle_hash))
		return 1;
	memcpy(bundle_hex, bundle_hash + 7, 64);
	if (mkdirs(op.out, subs)) {
		fprintf(stderr, "gen_estate: %s: %s\n", op.out, strerror(errno));
		return 1;
	}
	if (trust_hosts(&op) || run_jobs(&op))
		return 1;
	snprintf(path, sizeof(path), "%s/generated", op.out);
	snprintf(gen, sizeof(gen), "%u %u %u\n", op.hosts, op.sessions, op.decisions);
	return write_text(path, gen) ? 1 : 0;
usage:
	fprintf(stderr, "usage: gen_estate --out DIR [--hosts H] [--sessions S] [--decisions N (>= 8)] "
			"[--jobs J] [--seed X]\n");
	return 2;
}

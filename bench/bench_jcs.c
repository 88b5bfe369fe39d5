/* SPDX-License-Identifier: Apache-2.0 */
/* Canonical JSON throughput on a ~50 MB decision-log-like document:
 *   - jcs_canonicalize (parse + canonicalise untrusted text),
 *   - the emitter writing the same entries from C structs, hashed as it goes,
 * and, measured in the same run, jansson load + sorted compact dump and raw
 * SHA-256 over the same bytes.
 * Usage: bench_jcs [MEGABYTES [parse|emit]]   (default 50, everything; naming
 * one part runs only it, for profiling) */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "lib/buf.h"
#include "lib/digest.h"
#include "jcs/jcs.h"

struct entry {
	int64_t cgroup;
	char comm[16];
	const char *decision;
	bool enforced;
	char host[48];
	int64_t pid;
	int64_t port;
	const char *proto;
	char rule[32];
	int64_t seq;
	const char *tool;
	int64_t ts;
	int64_t uid;
};

static uint64_t rng_state = 0x2545F4914F6CDD1DULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

/* Wall-clock and this thread's CPU time: on a shared machine the CPU time
 * shows what contention hides. Each measurement keeps the best of its runs. */
struct clk {
	double wall, cpu;
};

static struct clk clk_now(void)
{
	struct timespec w, c;
	clock_gettime(CLOCK_MONOTONIC, &w);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
	return (struct clk){ (double)w.tv_sec + (double)w.tv_nsec / 1e9,
			     (double)c.tv_sec + (double)c.tv_nsec / 1e9 };
}

static void clk_best(struct clk *best, struct clk t0)
{
	struct clk t1 = clk_now();
	if (t1.wall - t0.wall < best->wall)
		best->wall = t1.wall - t0.wall;
	if (t1.cpu - t0.cpu < best->cpu)
		best->cpu = t1.cpu - t0.cpu;
}

#define CLK_NONE ((struct clk){ 1e9, 1e9 })

static const char *comms[] = { "curl", "python3", "node", "bash", "git", "caf\xc3\xa9-agent",
			       "wget", "ssh", "npm", "make", "\xe6\xb5\x8b\xe8\xaf\x95", "gcc" };
static const char *tools[] = { "net.connect", "net.bind", "net.sendmsg", "fs.read", "fs.write",
			       "dev.access", "sysctl.write" };

static void make_entry(struct entry *e, int64_t seq)
{
	uint64_t r = rng();
	e->cgroup = 1000 + (int64_t)(r % 50000);
	snprintf(e->comm, sizeof(e->comm), "%s", comms[(r >> 16) % 12]);
	e->decision = (r >> 20) % 4 ? "permit" : "deny";
	e->enforced = (r >> 22) & 1;
	r = rng();
	if (r % 8 == 0)
		snprintf(e->host, sizeof(e->host), "api-%u.example.org", (unsigned)(r >> 8) % 1000);
	else if (r % 8 == 1)
		snprintf(e->host, sizeof(e->host), "m\xc3\xbcnchen-%u.example", (unsigned)(r >> 8) % 100);
	else
		snprintf(e->host, sizeof(e->host), "10.%u.%u.%u", (unsigned)(r >> 8) & 255,
			 (unsigned)(r >> 16) & 255, (unsigned)(r >> 24) & 255);
	e->pid = 100 + (int64_t)((r >> 32) % 400000);
	e->port = (int64_t)((r >> 40) % 65536);
	e->proto = (r >> 56) & 1 ? "tcp" : "udp";
	r = rng();
	e->tool = tools[r % 7];
	snprintf(e->rule, sizeof(e->rule), "%s[%u]", e->tool, (unsigned)(r >> 8) % 16);
	e->seq = seq;
	e->ts = 1785000000000000LL + seq * 137 + (int64_t)((r >> 16) % 100);
	e->uid = (r >> 40) % 3 ? 1000 : 0;
}

/* The canonical entry, from the struct: members in RFC 8785 order. */
static int emit_entry(struct kw_buf *out, const struct entry *e)
{
	struct jcs_obj o;
	int rc = jcs_obj_begin(&o, out);
	rc = rc ?: jcs_obj_int(&o, "cgroup", e->cgroup);
	rc = rc ?: jcs_obj_strn_lossy(&o, "comm", e->comm, strlen(e->comm), NULL);
	rc = rc ?: jcs_obj_str(&o, "decision", e->decision);
	rc = rc ?: jcs_obj_bool(&o, "enforced", e->enforced);
	rc = rc ?: jcs_obj_str(&o, "host", e->host);
	rc = rc ?: jcs_obj_int(&o, "pid", e->pid);
	rc = rc ?: jcs_obj_int(&o, "port", e->port);
	rc = rc ?: jcs_obj_str(&o, "proto", e->proto);
	rc = rc ?: jcs_obj_str(&o, "rule", e->rule);
	rc = rc ?: jcs_obj_int(&o, "seq", e->seq);
	rc = rc ?: jcs_obj_str(&o, "tool", e->tool);
	rc = rc ?: jcs_obj_int(&o, "ts", e->ts);
	rc = rc ?: jcs_obj_int(&o, "uid", e->uid);
	return rc ?: jcs_obj_end(&o);
}

/* The same entry as untrusted text: members shuffled, some spacing, some
 * escapes a canonical writer removes. */
static void text_entry(struct kw_buf *out, const struct entry *e)
{
	char m[13][96];
	int n = 0;
	snprintf(m[n++], 96, "\"cgroup\":%lld", (long long)e->cgroup);
	snprintf(m[n++], 96, "\"comm\":\"%s\"", e->comm);
	snprintf(m[n++], 96, "\"decision\":\"%s\"", e->decision);
	snprintf(m[n++], 96, "\"enforced\":%s", e->enforced ? "true" : "false");
	snprintf(m[n++], 96, "\"host\":\"%s\"", e->host);
	snprintf(m[n++], 96, "\"pid\":%lld", (long long)e->pid);
	snprintf(m[n++], 96, "\"port\":%lld", (long long)e->port);
	if (e->seq % 16 == 0)
		snprintf(m[n++], 96, "\"prot\\u006f\":\"%s\"", e->proto);
	else
		snprintf(m[n++], 96, "\"proto\":\"%s\"", e->proto);
	snprintf(m[n++], 96, "\"rule\":\"%s\"", e->rule);
	snprintf(m[n++], 96, "\"seq\":%lld", (long long)e->seq);
	snprintf(m[n++], 96, "\"tool\":\"%s\"", e->tool);
	snprintf(m[n++], 96, "\"ts\":%lld", (long long)e->ts);
	snprintf(m[n++], 96, "\"uid\":%lld", (long long)e->uid);
	for (int i = n - 1; i > 0; i--) {
		int j = (int)(rng() % (uint64_t)(i + 1));
		char t[96];
		memcpy(t, m[i], 96);
		memcpy(m[i], m[j], 96);
		memcpy(m[j], t, 96);
	}
	bool spaced = e->seq % 4 == 0;
	kw_buf_putc(out, '{');
	for (int i = 0; i < n; i++) {
		if (i)
			kw_buf_puts(out, spaced ? ", " : ",");
		kw_buf_puts(out, m[i]);
	}
	kw_buf_putc(out, '}');
}

int main(int argc, char **argv)
{
	double mb = argc > 1 ? atof(argv[1]) : 50;
	size_t target = (size_t)(mb * 1e6);
	const char *only = argc > 2 ? argv[2] : NULL;
	bool run_parse = !only || !strcmp(only, "parse");
	bool run_emit = !only || !strcmp(only, "emit");

	/* The entries and the document. */
	size_t cap = target / 150 + 16, count = 0;
	struct entry *entries = malloc(cap * sizeof(*entries));
	struct kw_buf doc = {0};
	kw_buf_reserve(&doc, target + 4096);
	kw_buf_puts(&doc, "[\n");
	while (doc.len < target && count < cap) {
		if (count)
			kw_buf_puts(&doc, ",\n");
		make_entry(&entries[count], (int64_t)count);
		text_entry(&doc, &entries[count]);
		count++;
	}
	kw_buf_puts(&doc, "\n]\n");
	printf("document: %.1f MB, %zu decision entries (members shuffled, UTF-8, some escapes)\n",
	       (double)doc.len / 1e6, count);

	/* 1. Strict parse + canonicalise. */
	struct kw_buf canon = {0};
	struct jcs_error err;
	struct clk best = CLK_NONE;
	for (int i = 0; i < (run_parse ? 3 : 1); i++) {
		kw_buf_reset(&canon);
		struct clk t = clk_now();
		if (jcs_canonicalize(doc.data, doc.len, &canon, &err)) {
			fprintf(stderr, "bench_jcs: %zu:%zu: %s\n", err.line, err.column, err.message);
			return 1;
		}
		clk_best(&best, t);
	}
	if (run_parse)
		printf("jcs parse+canonicalize: %.1f MB/s (%.1f MB, best of 3; by CPU time %.1f MB/s)\n",
		       (double)doc.len / 1e6 / best.wall, (double)doc.len / 1e6,
		       (double)doc.len / 1e6 / best.cpu);

	/* 1b. A number-heavy document: 17-digit doubles take the slow path of
	 * the parser (strtod, then the shortest-digits search). Magnitudes stay
	 * within 2^53 - 1, the parser's integer rule. */
	if (run_parse) {
		struct kw_buf nums = {0}, ncanon = {0};
		kw_buf_putc(&nums, '[');
		for (size_t i = 0; nums.len < target / 5; i++) {
			double v;
			do {
				uint64_t bits = rng();
				memcpy(&v, &bits, sizeof(v));
			} while (v != v || v - v != 0 || v > (double)JCS_MAX_SAFE_INT ||
				 v < -(double)JCS_MAX_SAFE_INT); /* finite, in range */
			char t[40];
			snprintf(t, sizeof(t), "%s%.16e", i ? "," : "", v);
			kw_buf_puts(&nums, t);
		}
		kw_buf_putc(&nums, ']');
		struct clk nbest = CLK_NONE;
		for (int i = 0; i < 3; i++) {
			kw_buf_reset(&ncanon);
			struct clk t = clk_now();
			if (jcs_canonicalize(nums.data, nums.len, &ncanon, &err)) {
				fprintf(stderr, "bench_jcs: numbers: %s\n", err.message);
				return 1;
			}
			clk_best(&nbest, t);
		}
		printf("jcs parse+canonicalize, random doubles: %.1f MB/s (%.1f MB, best of 3; by CPU time "
		       "%.1f MB/s)\n",
		       (double)nums.len / 1e6 / nbest.wall, (double)nums.len / 1e6,
		       (double)nums.len / 1e6 / nbest.cpu);
		kw_buf_free(&nums);
		kw_buf_free(&ncanon);
	}

	/* 2. Emitter from C structs, streaming SHA-256 as the collector does:
	 * entries are appended to a write buffer that is hashed (and would be
	 * written) each time it passes 64 KiB. */
	struct kw_buf out = {0}, arr = {0};
	char digest[KW_DIGEST_STR_MAX];
	size_t emitted = 0;
	best = CLK_NONE;
	for (int round = 0; round < (run_emit ? 3 : 0); round++) {
		struct kw_digest d;
		if (kw_digest_init(&d, KW_SHA256))
			return 1;
		kw_buf_reset(&out);
		emitted = 0;
		struct clk t = clk_now();
		for (size_t i = 0; i < count; i++) {
			if (emit_entry(&out, &entries[i]) || kw_buf_putc(&out, '\n'))
				return 1;
			if (out.len >= 65536) {
				kw_digest_update(&d, out.data, out.len);
				emitted += out.len;
				kw_buf_reset(&out);
			}
		}
		kw_digest_update(&d, out.data, out.len);
		emitted += out.len;
		kw_digest_final(&d, digest);
		clk_best(&best, t);
	}
	if (run_emit)
		printf("jcs emitter + SHA-256: %.2f M entries/s, %.1f MB/s (%.1f MB of JSON Lines, "
		       "best of 3; by CPU time %.2f M entries/s)\n",
		       (double)count / best.wall / 1e6, (double)emitted / 1e6 / best.wall,
		       (double)emitted / 1e6, (double)count / best.cpu / 1e6);

	best = CLK_NONE;
	for (int round = 0; round < (run_emit ? 3 : 0); round++) {
		kw_buf_reset(&out);
		struct clk t = clk_now();
		for (size_t i = 0; i < count; i++) {
			if (emit_entry(&out, &entries[i]) || kw_buf_putc(&out, '\n'))
				return 1;
			if (out.len >= 65536)
				kw_buf_reset(&out);
		}
		clk_best(&best, t);
	}
	if (run_emit)
		printf("jcs emitter alone: %.2f M entries/s, %.1f MB/s (by CPU time %.2f M entries/s)\n",
		       (double)count / best.wall / 1e6, (double)emitted / 1e6 / best.wall,
		       (double)count / best.cpu / 1e6);

	/* The emitter and the parser agree byte for byte. */
	kw_buf_putc(&arr, '[');
	for (size_t i = 0; i < count; i++) {
		if (i)
			kw_buf_putc(&arr, ',');
		emit_entry(&arr, &entries[i]);
	}
	kw_buf_putc(&arr, ']');
	bool same = arr.len == canon.len && !memcmp(arr.data, canon.data, arr.len);
	printf("emitter output equals canonicalized document: %s\n", same ? "yes" : "NO");

	if (only)
		goto done;
	/* 3. Baselines. */
	best = CLK_NONE;
	for (int i = 0; i < 3; i++) {
		struct clk t = clk_now();
		json_error_t je;
		json_t *v = json_loadb(doc.data, doc.len, 0, &je);
		if (!v) {
			fprintf(stderr, "bench_jcs: jansson: %s\n", je.text);
			return 1;
		}
		char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
		clk_best(&best, t);
		free(s);
		json_decref(v);
	}
	printf("baseline jansson load + dump(COMPACT|SORT_KEYS): %.1f MB/s (not RFC 8785)\n",
	       (double)doc.len / 1e6 / best.wall);

	best = CLK_NONE;
	for (int i = 0; i < 3; i++) {
		struct clk t = clk_now();
		kw_digest_buf(KW_SHA256, doc.data, doc.len, digest);
		clk_best(&best, t);
	}
	printf("baseline raw SHA-256: %.1f MB/s\n", (double)doc.len / 1e6 / best.wall);
done:

	kw_buf_free(&doc);
	kw_buf_free(&canon);
	kw_buf_free(&out);
	kw_buf_free(&arr);
	free(entries);
	return same ? 0 : 1;
}

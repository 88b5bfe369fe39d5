/* SPDX-License-Identifier: Apache-2.0 */
/* The transparency log's speed.
 *   - appends: one entry per append (each publishes a signed checkpoint, with
 *     the fsyncs that make it crash-safe), on one open log; then batches of
 *     1,000. Baseline in the same run: one atomic file write (temporary file,
 *     fsync, rename, fsync of the folder) per operation, the floor under any
 *     durable append.
 *   - proofs: inclusion proofs made from the tiles of a 100,000-entry log, and
 *     verified (RFC 9162). Baseline: RFC 6962 node hashes per second (a proof
 *     of this tree is about 17 of them).
 * Usage: bench_tlog [SINGLE_APPENDS [TREE_SIZE]]   (default 2000 100000) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/buf.h"
#include "trace/key.h"
#include "tlog/log.h"
#include "tlog/merkle.h"
#include "tlog/tiles.h"

static char tmp[] = "/tmp/kw-bench-tlog.XXXXXX";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, int e)
{
	fprintf(stderr, "bench_tlog: %s: %s\n", what, strerror(e < 0 ? -e : e));
	exit(1);
}

/* A record-sized entry (a signed record is about 1.5 kB). */
static void entry(uint64_t i, char *buf, size_t *len)
{
	int n = snprintf(buf, 1600, "{\"entry\":%llu,\"pad\":\"", (unsigned long long)i);

	memset(buf + n, 'x', 1500);
	memcpy(buf + n + 1500, "\"}", 2);
	*len = (size_t)n + 1502;
}

int main(int argc, char **argv)
{
	long singles = argc > 1 ? atol(argv[1]) : 2000, size = argc > 2 ? atol(argv[2]) : 100000;
	uint8_t seed[32] = { 42 };
	struct kw_key *k;
	struct tlog_key key;
	struct tlog_log *l;
	char dir[128], path[160], buf[1600], cmd[200];
	size_t len;
	uint64_t first;
	double t0, t;
	int e;

	if (singles < 1 || size < 2)
		die("arguments", EINVAL);
	if (!mkdtemp(tmp))
		die("mkdtemp", errno);
	if (kw_key_from_seed(seed, &k) || tlog_key_from("bench.example/log", TLOG_SIG_ED25519, k, &key))
		die("key", EINVAL);

	/* Baseline: one durable atomic write per operation. */
	snprintf(path, sizeof(path), "%s/baseline", tmp);
	entry(0, buf, &len);
	t0 = now_s();
	for (long i = 0; i < singles; i++)
		if ((e = kw_write_file_atomic(path, buf, len, 0644)))
			die("baseline write", e);
	t = now_s() - t0;
	printf("baseline: atomic durable file write      %10.0f /s\n", (double)singles / t);

	snprintf(dir, sizeof(dir), "%s/log", tmp);
	if ((e = tlog_log_create(dir, &key)) || (e = tlog_log_open(dir, &key, &l)))
		die("log", e);
	t0 = now_s();
	for (long i = 0; i < singles; i++) {
		const void *p = buf;

		entry((uint64_t)i, buf, &len);
		if ((e = tlog_log_append(l, &p, &len, 1, &first)))
			die("append", e);
	}
	t = now_s() - t0;
	printf("append, 1 entry + signed checkpoint       %10.0f appends/s (%.2f ms each)\n",
	       (double)singles / t, t * 1e3 / (double)singles);
	{
		static char bufs[1000][1600];
		const void *p[1000];
		size_t lens[1000];
		long done = 0;

		t0 = now_s();
		while (done + (long)singles < size) {
			for (int i = 0; i < 1000; i++) {
				entry((uint64_t)(done + i), bufs[i], &lens[i]);
				p[i] = bufs[i];
			}
			if ((e = tlog_log_append(l, p, lens, 1000, &first)))
				die("batch append", e);
			done += 1000;
		}
		t = now_s() - t0;
		printf("append, batches of 1,000                  %10.0f entries/s (%ld entries)\n",
		       (double)done / t, done);
	}
	{
		uint64_t n = tlog_log_size(l);
		struct tlog_tiles tiles;
		struct tlog_hash root, leaf, (*paths)[TLOG_PROOF_MAX];
		size_t *counts;
		long proofs = n < 100000 ? (long)n : 100000;
		long bad = 0;
		int dfd = tlog_log_dirfd(l);

		paths = calloc((size_t)proofs, sizeof(*paths));
		counts = calloc((size_t)proofs, sizeof(*counts));
		if (!paths || !counts)
			die("memory", ENOMEM);
		tlog_tiles_init(&tiles, dfd, n);
		if ((e = tlog_tree_hash(tlog_tiles_read_node, &tiles, n, &root)))
			die("root", e);
		t0 = now_s();
		for (long i = 0; i < proofs; i++)
			if ((e = tlog_inclusion_proof(tlog_tiles_read_node, &tiles, (uint64_t)i, n, paths[i],
						      &counts[i])))
				die("proof", e);
		t = now_s() - t0;
		printf("inclusion proofs made from tiles          %10.0f /s (tree of %llu)\n",
		       (double)proofs / t, (unsigned long long)n);
		t0 = now_s();
		for (long i = 0; i < proofs; i++) {
			if (tlog_tiles_read_node(&tiles, 0, (uint64_t)i, &leaf))
				die("leaf", EIO);
			bad += !tlog_inclusion_verify((uint64_t)i, n, &leaf, paths[i], counts[i], &root);
		}
		t = now_s() - t0;
		printf("verify-inclusion (RFC 9162)               %10.0f /s (%ld failed)\n",
		       (double)proofs / t, bad);
		t0 = now_s();
		for (long i = 0; i < proofs * 17; i++)
			tlog_node_hash(&root, &leaf, &leaf);
		t = now_s() - t0;
		printf("baseline: RFC 6962 node hashes            %10.0f /s (%.0f per 17)\n",
		       (double)proofs * 17 / t, (double)proofs / t);
		free(paths);
		free(counts);
	}
	tlog_log_close(l);
	tlog_key_clear(&key);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd))
		return 1;
	return 0;
}

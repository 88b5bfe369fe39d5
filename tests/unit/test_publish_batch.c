/* SPDX-License-Identifier: Apache-2.0 */
/* Group commit of log appends (collector/publish_batch.h): a batch appends
 * every record that has an anchor form in one go, each gets a proof that
 * holds for its own entry under the new checkpoint, a record without one
 * fails alone; the batcher answers every one of many concurrent submitters
 * with its own proof. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector/publish_batch.h"
#include "tlog/anchor.h"
#include "tlog/log.h"
#include "tlog/merkle.h"
#include "tlog/note.h"
#include "tlog/proof.h"
#include "tlog/record_url.h"
#include "trace/key.h"

#define ORIGIN "batch.example/log"
#define MANY 8

static char tmp[] = "/tmp/kw-test-batch.XXXXXX";
static char dir[128];
static struct kw_key *k;
static struct tlog_key key;

struct rec {
	json_t *rec;
	char url[TLOG_RECORD_URL_MAX];
	struct kw_buf proof;
	char why[600];
	struct kw_publish_job job;
};

static void make(struct rec *r, int i, bool anchorable)
{
	char subject[64];

	snprintf(subject, sizeof(subject), "spiffe://batch.example/agent-%d", i);
	memset(r, 0, sizeof(*r));
	/* A real number has no anchor-v1 form (tlog/anchor.h). */
	r->rec = anchorable ? json_pack("{s:s, s:i}", "subject", subject, "iat", 1000 + i) :
			      json_pack("{s:s, s:f}", "subject", subject, "iat", 1.5);
	assert_non_null(r->rec);
	assert_int_equal(tlog_record_url(ORIGIN, r->rec, r->url), 0);
	json_object_set_new(r->rec, "transparency", json_string(r->url));
	json_object_set_new(r->rec, "signature", json_string("stand-in"));
	r->job = (struct kw_publish_job){ .rec = r->rec, .url = r->url, .proof = &r->proof,
					  .why = r->why, .whylen = sizeof(r->why) };
}

static void release(struct rec *r)
{
	json_decref(r->rec);
	kw_buf_free(&r->proof);
}

/* r's proof holds for r's own entry under a checkpoint signed by the log's
 * key, and the log serves the same proof at the URL's path. Returns the
 * entry's index. */
static uint64_t check_proof(const struct rec *r)
{
	struct tlog_proof *p = calloc(1, sizeof(*p));
	struct kw_buf entry = { 0 }, served = { 0 };
	struct tlog_note n;
	struct tlog_checkpoint cp;
	struct tlog_hash leaf;
	char path[600];
	uint64_t index;

	assert_non_null(p);
	assert_int_equal(tlog_proof_parse(r->proof.data, r->proof.len, p), 0);
	assert_int_equal(tlog_note_parse(p->checkpoint, p->checkpoint_len, &n), 0);
	assert_int_equal(tlog_checkpoint_parse(n.text, n.text_len, &cp), 0);
	assert_int_equal(tlog_note_verify(&n, &key, NULL), 0);
	assert_int_equal(anchor_claim_bytes(r->rec, &entry), 0);
	tlog_leaf_hash(entry.data, entry.len, &leaf);
	assert_true(tlog_inclusion_verify(p->index, cp.size, &leaf, p->path, p->count, &cp.root));
	snprintf(path, sizeof(path), "%s/" TLOG_PROOF_DIR "%s", dir, strrchr(r->url, '/'));
	assert_int_equal(kw_read_file(path, 1 << 20, &served), 0);
	assert_int_equal(served.len, r->proof.len);
	assert_memory_equal(served.data, r->proof.data, served.len);
	index = p->index;
	kw_buf_free(&entry);
	kw_buf_free(&served);
	free(p);
	return index;
}

static uint64_t log_size(void)
{
	struct tlog_log *l;
	uint64_t n;

	assert_int_equal(tlog_log_open(dir, &key, &l), 0);
	n = tlog_log_size(l);
	tlog_log_close(l);
	return n;
}

static int setup(void **state)
{
	uint8_t seed[32] = { 7 };

	(void)state;
	assert_non_null(mkdtemp(tmp));
	snprintf(dir, sizeof(dir), "%s/log", tmp);
	assert_int_equal(kw_key_from_seed(seed, &k), 0);
	assert_int_equal(tlog_key_from(ORIGIN, TLOG_SIG_ED25519, k, &key), 0);
	assert_int_equal(tlog_log_create(dir, &key), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[200];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	assert_int_equal(system(cmd), 0);
	kw_key_free(k);
	return 0;
}

static void test_batch(void **state)
{
	struct kw_publish pub = { .log_dir = dir, .log_key = &key };
	struct rec r[3];
	struct kw_publish_job *jobs[3];

	(void)state;
	make(&r[0], 0, true);
	make(&r[1], 1, false);
	make(&r[2], 2, true);
	for (int i = 0; i < 3; i++)
		jobs[i] = &r[i].job;
	kw_publish_logged_many(&pub, jobs, 3);
	assert_int_equal(r[0].job.ret, 0);
	assert_int_equal(r[1].job.ret, -EINVAL);
	assert_non_null(strstr(r[1].why, "anchor-v1"));
	assert_int_equal(r[2].job.ret, 0);
	/* one append of the two: consecutive entries, each its own */
	assert_int_equal(log_size(), 2);
	assert_int_equal(check_proof(&r[0]), 0);
	assert_int_equal(check_proof(&r[2]), 1);
	for (int i = 0; i < 3; i++)
		release(&r[i]);
}

struct submitter {
	struct kw_publish_batcher *b;
	struct rec *r;
	int ret;
};

static void *submit(void *arg)
{
	struct submitter *s = arg;

	s->ret = kw_publish_batcher_submit(s->b, &s->r->job);
	return NULL;
}

static void test_batcher(void **state)
{
	struct kw_publish pub = { .log_dir = dir, .log_key = &key };
	struct kw_publish_batcher b;
	struct rec r[MANY];
	struct submitter s[MANY];
	pthread_t t[MANY];
	uint64_t base = log_size(), seen = 0;

	(void)state;
	assert_int_equal(kw_publish_batcher_start(&b, &pub), 0);
	for (int i = 0; i < MANY; i++) {
		make(&r[i], 100 + i, true);
		s[i] = (struct submitter){ &b, &r[i], 1 };
		assert_int_equal(pthread_create(&t[i], NULL, submit, &s[i]), 0);
	}
	for (int i = 0; i < MANY; i++)
		pthread_join(t[i], NULL);
	kw_publish_batcher_stop(&b);
	assert_int_equal(b.jobs, MANY);
	assert_true(b.batches >= 1 && b.batches <= MANY);
	assert_int_equal(log_size(), base + MANY);
	for (int i = 0; i < MANY; i++) {
		uint64_t idx;

		assert_int_equal(s[i].ret, 0);
		idx = check_proof(&r[i]);
		/* every submitter its own entry */
		assert_true(idx >= base && idx < base + MANY);
		assert_false(seen & (1ull << (idx - base)));
		seen |= 1ull << (idx - base);
		release(&r[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_batch),
		cmocka_unit_test(test_batcher),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

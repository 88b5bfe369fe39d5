/* SPDX-License-Identifier: Apache-2.0 */
/* The checkpoint chain of a decision log against the log (docs/decision-log.md,
 * "Checkpoints"): every checkpoint's signature and link to the one before,
 * and for each one the log covers, its transcript prefix recomputed from the
 * log's first lines. Fed the log's lines in order (the log check's
 * on_entry), it holds one checkpoint and one running digest: constant memory. */
#ifndef KWITNESS_VERIFY_CHECKPOINT_H
#define KWITNESS_VERIFY_CHECKPOINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "collector/checkpoint.h"
#include "collector/transcript.h"
#include "trace/record.h"

struct verify_ckpt {
	/* --- results --- */
	enum kw_verify_reason problem; /* a CHECKPOINT_* reason, or OK */
	char why[256];
	uint64_t chain;                /* checkpoints read and linked */
	char head[KW_DIGEST_STR_MAX];  /* the last one's hash ("" before the first) */
	uint64_t head_lines;
	uint64_t vouched_n;            /* the last checkpoint the log's prefix matched */
	uint64_t vouched_lines;
	char vouched_hash[KW_DIGEST_STR_MAX];
	uint64_t log_lines;            /* whole lines of the log seen */
	bool beyond_log;               /* a checkpoint covers more than the log holds */
	bool torn;                     /* the checkpoint file ends inside a line (ignored) */
	/* The close entry's checkpoint members (has_close: the log has one). */
	bool has_close, close_sealed;
	char close_head[KW_DIGEST_STR_MAX]; /* "" when it names none */
	int64_t close_chain;           /* -1: absent */
	int64_t close_unvouched;       /* -1: absent */
	/* --- internal --- */
	const struct kw_key *key;
	FILE *f;
	struct kw_transcript tr;
	bool tr_live, have_next;
	struct kw_checkpoint next;
	char next_hash[KW_DIGEST_STR_MAX];
	char session[33];
	char line[KW_CHECKPOINT_LINE_MAX + 2];
};

/* Opens the checkpoint file at path and reads its first checkpoint. 0, or
 * -errno (the file cannot be opened: -ENOENT when there is none). */
int verify_ckpt_init(struct verify_ckpt *v, const struct kw_key *key, const char *path);
/* The same for the file beside the log (log_path + KW_CHECKPOINT_SUFFIX). */
int verify_ckpt_init_beside(struct verify_ckpt *v, const struct kw_key *key, const char *log_path);
/* The log check's on_entry: one canonical log line, in order. Always 0. */
int verify_ckpt_entry(void *ctx, const char *line, size_t len);
/* After the log: the rest of the chain (signatures and links only). */
void verify_ckpt_end(struct verify_ckpt *v);
void verify_ckpt_free(struct verify_ckpt *v);
/* After verify_ckpt_end, the chain against the log alone (no close entry:
 * a log being resumed or sealed): the problem found, CHECKPOINT_BEYOND_LOG
 * when a checkpoint covers lines the log no longer holds, or KW_VERIFY_OK;
 * why set. */
enum kw_verify_reason verify_ckpt_held(struct verify_ckpt *v);
/* The chain against the close entry the log ended with: the problem found
 * (chain or binding), or KW_VERIFY_OK; why set. */
enum kw_verify_reason verify_ckpt_bound(struct verify_ckpt *v);
/* kwitness verify --log LOG [--checkpoints FILE] without a record: every
 * entry through the last checkpoint the log holds. stop: where the
 * verification stopped (KW_VERIFY_OK: at the log's end; LOG_TRUNCATED: a
 * cut inside a line; CHECKPOINT_BEYOND_LOG: a checkpoint past the cut; or
 * the problem found); valid: no checkpoint or log problem but a cut. */
struct verify_cut {
	struct verify_ckpt ck;
	enum kw_verify_reason log_problem;
	char log_why[256];
	enum kw_verify_reason stop;
	bool valid;
};
/* 0, or -1 with err when a file cannot be read (ckpt_path NULL: LOG + suffix). */
int verify_log_checkpoints(const struct kw_key *key, const char *log_path, const char *ckpt_path,
			   struct verify_cut *out, char *err, size_t errlen);
/* One sentence on what the checkpoints vouch for, into out. */
void verify_ckpt_describe(const struct verify_ckpt *v, char *out, size_t outlen);

#endif

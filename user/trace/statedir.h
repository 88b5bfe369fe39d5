/* SPDX-License-Identifier: Apache-2.0 */
/* A kwitnessd state folder as its readers find it: records/<session>.json,
 * logs/<session>.jsonl, policies/<sha256 hex>, evidence/<sha256 hex>.json,
 * commit/<session>.json (a TPM commitment, docs/attestation.md).
 * Everything below the folder is opened through its folders' descriptors,
 * never through a link, and only regular files are returned (a FIFO or a
 * link planted in a copied folder is refused with a reason). */
#ifndef KWITNESS_STATEDIR_H
#define KWITNESS_STATEDIR_H

#include <stdbool.h>
#include <jansson.h>

#define KW_SESSION_ID_LEN 32

/* The folders' descriptors; -1 when one is missing. */
struct kw_state_dir {
	int records, logs, policies, evidence, commit;
};
#define KW_STATE_DIR_NONE { -1, -1, -1, -1, -1 }

/* Opens the folders of path (path itself may be reached through a link the
 * caller chose; nothing below it is). Returns 0, or -errno when it has no
 * records/ folder; the folders found stay open either way (close with
 * kw_state_dir_close). */
int kw_state_dir_open(const char *path, struct kw_state_dir *s);
void kw_state_dir_close(struct kw_state_dir *s);
/* The spool folder of a state folder: records kwitnessd wrote, for
 * `kwitness estate push` (docs/estate.md). */
#define KW_STATE_SPOOL "spool"
/* A session id: 32 lowercase hex digits (a spool entry's name). */
bool kw_is_session_id(const char *s);
/* "<32 lowercase hex>.json": a record file's name. */
bool kw_is_record_name(const char *name);
/* A regular file directly in dirfd (kw_open_regular_at); -ENOENT when the
 * folder is missing (dirfd < 0). */
int kw_state_open_file(int dirfd, const char *name);
/* Why kw_state_open_file or a read failed, as a phrase. */
const char *kw_state_open_error(int e);

/* The evidence of a record whose signature verified, found in its state
 * folder by its session id and bundle hash: the decision log
 * logs/<session>.jsonl (opened into *log_fd) and the policy bundle
 * policies/<hex> (read into *bundle). Returns 0, or the reason (a
 * KW_VERIFY_* code, log or policy missing or unreadable) with res's reason
 * and message set as `kwitness verify --dir` and `estate ingest` report
 * them; nothing is left open then. */
struct kw_buf;
struct kw_verify_result;
int kw_state_find_evidence(const struct kw_state_dir *st, const char *session,
			   const json_t *rec, int *log_fd, struct kw_buf *bundle,
			   struct kw_verify_result *res);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* Level 2: sign a record once and publish the record that was logged. The
 * order (docs/transparency.md):
 *   1. the record is built (the caller);
 *   2. `transparency` is set to the URL where its proof will be published;
 *   3. it is signed;
 *   4. its registry-anchor-v1 bytes are appended to the log;
 *   5. the witnesses cosign a checkpoint that includes it, and the checkpoint
 *      meets the witness policy;
 *   6. its tlog-proof is made (the caller writes RECORD.tlog-proof; the log
 *      also serves it at the URL).
 * When any step fails the record goes out without a URI: `transparency` is
 * removed and it is signed again, so no record names a proof that does not
 * exist. */
#ifndef KWITNESS_COLLECTOR_PUBLISH_H
#define KWITNESS_COLLECTOR_PUBLISH_H

#include <stddef.h>
#include <jansson.h>

#include "lib/buf.h"
#include "trace/key.h"
#include "tlog/cosign.h"
#include "tlog/note.h"
#include "tlog/policy.h"

struct kw_publish_witness {
	tlog_witness_submit submit;
	void *ctx;
};

struct kw_publish {
	/* A local log (log_dir, log_key with its private half) ... */
	const char *log_dir;
	const struct tlog_key *log_key;     /* its name is the log's origin */
	/* ... or a shared writer reached over HTTP (kwitness tlog serve --append):
	 * log_key is then the log's verifier key, and the writer logs, has the
	 * witnesses cosign and answers with the proof, which is checked here. */
	const char *remote;                 /* http://HOST:PORT[/PREFIX] */
	const char *token;                  /* its bearer token */
	const struct kw_publish_witness *witnesses;
	size_t nwitnesses;
	const struct tlog_policy *policy;   /* the quorum to meet; NULL: none */
};

/* Steps 2 to 6 on rec, an unsigned record. 0: rec is signed with its
 * transparency URL and logged, proof holds its tlog-proof. -errno: why says
 * which step failed; rec is still signed (without `transparency`) unless the
 * re-signing failed too (-EKEYREJECTED: do not publish rec at all). */
int kw_publish_record(json_t *rec, const struct kw_key *key, const struct kw_publish *pub,
		      struct kw_buf *proof, char *why, size_t whylen);

struct kw_verify_opts;
/* The same with the signing's self-check given (kw_record_sign_checked): the
 * record's RFC 8785 bytes, checked once by check, are left in text, the
 * record as logged or, after a logging failure, as signed again without
 * `transparency`. KW_SIGN_CHECK_FAILED when check rejected the record (why
 * holds the verifier's sentence). */
int kw_publish_record_checked(json_t *rec, const struct kw_key *key, const struct kw_publish *pub,
			      const struct kw_verify_opts *check, struct kw_buf *text,
			      struct kw_buf *proof, char *why, size_t whylen);

/* Steps 4 to 6 for a record already signed with its URL, on a local log (the
 * shared writer's side of a remote append). 0 with proof, or -errno. */
int kw_publish_logged(const json_t *rec, const struct kw_publish *pub, const char *url,
		      struct kw_buf *proof, char *why, size_t whylen);

#endif

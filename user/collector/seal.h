/* SPDX-License-Identifier: Apache-2.0 */
/* The last step of the pipeline: a session's record is built from what its
 * log and policy say, signed, checked against what was just signed (the
 * signature verifies, the transcript hash, count, bundle and image match),
 * and only then written, atomically. Used at close and when a collector
 * seals the logs a previous one left open. */
#ifndef KWITNESS_COLLECTOR_SEAL_H
#define KWITNESS_COLLECTOR_SEAL_H

#include <stddef.h>
#include <jansson.h>

#include "trace/key.h"
#include "trace/record.h"

/* Where sealing stopped: which kind of failure a caller reports. */
enum kw_seal_stage {
	KW_SEAL_DONE = 0,
	KW_SEAL_RECORD, /* build, sign, canonical form or self-check refused */
	KW_SEAL_WRITE,  /* the record could not be written */
	KW_SEAL_MEMORY, /* out of memory */
};

/* Seals in (in->iat is the signing time) with key into record_path (a new
 * file, mode 0644, written atomically, one line). Returns 0, with *record (if
 * record is not NULL) the signed record, a new reference; or -errno with a
 * sentence in why ("build: ...", "sign: ...", "self-check: ...", "PATH: ...")
 * and *stage. */
int kw_seal_record(const struct kw_record_input *in, const struct kw_key *key,
		   const char *record_path, json_t **record, enum kw_seal_stage *stage,
		   char *why, size_t whylen);

struct kw_publish;
/* The same with a transparency log (pub non-NULL, collector/publish.c): the
 * record is signed once with its transparency URL, logged and witnessed, and
 * its tlog-proof written beside it (record_path + ".tlog-proof") before the
 * record itself. Not being logged is not a sealing failure: the record then
 * goes out without transparency, and log_why says why (empty when logged). */
int kw_seal_record_logged(const struct kw_record_input *in, const struct kw_key *key,
			  const struct kw_publish *pub, const char *record_path, json_t **record,
			  enum kw_seal_stage *stage, char *why, size_t whylen, char *log_why,
			  size_t log_whylen);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* Record profiles: TRACE v0.2 (the default) and the TRACE v0.3 runtime-
 * evidence draft (schema/trace-claim-v0.3-draft.json of agentrust-io/
 * trace-spec at 05236bd), whose runtime.evidence carries the record's TPM
 * evidence inline (docs/record.md, "Record profiles"). */
#ifndef KWITNESS_PROFILE_V03_H
#define KWITNESS_PROFILE_V03_H

#include <stddef.h>
#include <jansson.h>

#define KW_TRACE_PROFILE_V03 "tag:agentrust-io.com,2026:trace-v0.3"
/* The inline evidence as the draft names it; what the quote bytes hold is
 * kwitness's choice (the draft leaves tpm2-quote's bytes undefined). */
#define KW_INLINE_EVIDENCE_FORMAT "tpm2-quote"
#define KW_INLINE_EVIDENCE_BINDS "cnf-key"

enum kw_record_profile {
	KW_PROFILE_V02 = 0,   /* "trace-v0.2": the default */
	KW_PROFILE_V03_DRAFT, /* "trace-v0.3-draft" */
};

/* "trace-v0.2" or "trace-v0.3-draft" (what --record-profile and the
 * config key record_profile take). 0, or -EINVAL. */
int kw_record_profile_parse(const char *name, enum kw_record_profile *out);
const char *kw_record_profile_name(enum kw_record_profile p);
/* The eat_profile a record of this profile carries. */
const char *kw_record_profile_tag(enum kw_record_profile p);
/* The profile an eat_profile names; -1 for any other value. */
int kw_record_profile_of(const json_t *record);

/* runtime.evidence for an evidence object (kwitness-tpm2-evidence-v1, as
 * kw_evidence_build makes it): {"binds":"cnf-key","format":"tpm2-quote",
 * "quote": base64url(RFC 8785 bytes of the evidence)}. NULL on failure. */
json_t *kw_inline_evidence_encode(const json_t *evidence);
/* The evidence object a record's runtime.evidence carries inline, or NULL
 * with why: none, another format, the by-reference form, or quote bytes
 * that are not base64url of a JSON object in RFC 8785 form. *present says
 * whether runtime.evidence exists. */
json_t *kw_inline_evidence_decode(const json_t *record, int *present, char *why, size_t whylen);

#endif

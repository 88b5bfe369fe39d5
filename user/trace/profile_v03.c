/* SPDX-License-Identifier: Apache-2.0 */
/* Record profiles and the inline evidence of the TRACE v0.3 draft, see
 * profile_v03.h. The quote bytes are the RFC 8785 form of the evidence
 * object an evidence file holds, so one parser (tpm/evidence.c) and one
 * appraisal (tpm/appraise.c) serve both. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base64.h"
#include "lib/buf.h"
#include "jcs/jcs.h"
#include "trace/profile_v03.h"
#include "trace/record.h"

static const struct {
	const char *name, *tag;
} profiles[] = {
	[KW_PROFILE_V02] = { "trace-v0.2", KW_TRACE_PROFILE },
	[KW_PROFILE_V03_DRAFT] = { "trace-v0.3-draft", KW_TRACE_PROFILE_V03 },
};
#define N_PROFILES (sizeof(profiles) / sizeof(profiles[0]))

int kw_record_profile_parse(const char *name, enum kw_record_profile *out)
{
	for (size_t i = 0; name && i < N_PROFILES; i++)
		if (!strcmp(name, profiles[i].name)) {
			*out = (enum kw_record_profile)i;
			return 0;
		}
	return -EINVAL;
}

const char *kw_record_profile_name(enum kw_record_profile p)
{
	return (unsigned)p < N_PROFILES ? profiles[p].name : profiles[0].name;
}

const char *kw_record_profile_tag(enum kw_record_profile p)
{
	return (unsigned)p < N_PROFILES ? profiles[p].tag : profiles[0].tag;
}

int kw_record_profile_of(const json_t *record)
{
	const json_t *v = json_object_get(record, "eat_profile");

	for (size_t i = 0; json_is_string(v) && i < N_PROFILES; i++)
		if (json_string_length(v) == strlen(profiles[i].tag) &&
		    !strcmp(json_string_value(v), profiles[i].tag))
			return (int)i;
	return -1;
}

json_t *kw_inline_evidence_encode(const json_t *evidence)
{
	struct kw_buf canon = { 0 };
	json_t *out = NULL;
	char *b64;

	if (!json_is_object(evidence) || jcs_dump(evidence, &canon))
		goto out;
	b64 = malloc(KW_B64_LEN(canon.len));
	if (!b64)
		goto out;
	kw_b64_encode(KW_B64_URL, (const uint8_t *)canon.data, canon.len, b64);
	out = json_pack("{s:s, s:s, s:s}", "format", KW_INLINE_EVIDENCE_FORMAT, "quote", b64, "binds",
			KW_INLINE_EVIDENCE_BINDS);
	free(b64);
out:
	kw_buf_free(&canon);
	return out;
}

json_t *kw_inline_evidence_decode(const json_t *record, int *present, char *why, size_t whylen)
{
	const json_t *ev = json_object_get(json_object_get(record, "runtime"), "evidence");
	const char *format = json_string_value(json_object_get(ev, "format"));
	const char *quote = json_string_value(json_object_get(ev, "quote"));
	struct kw_buf bytes = { 0 }, canon = { 0 };
	struct jcs_error jerr = { 0 };
	json_t *obj = NULL;
	size_t n, len;

	*present = ev != NULL;
	if (!ev) {
		snprintf(why, whylen, "the record carries no runtime.evidence");
		return NULL;
	}
	if (!format || strcmp(format, KW_INLINE_EVIDENCE_FORMAT)) {
		snprintf(why, whylen, "runtime.evidence.format is \"%.40s\", not \"%s\"",
			 format ? format : "(missing)", KW_INLINE_EVIDENCE_FORMAT);
		return NULL;
	}
	if (!quote) {
		snprintf(why, whylen, "runtime.evidence has no inline quote (the by-reference form is not appraised)");
		return NULL;
	}
	/* Bounded by the record, which its reader bounds (1 MiB in verify). */
	n = json_string_length(json_object_get(ev, "quote"));
	if (n == 0 || kw_buf_reserve(&bytes, n) ||
	    kw_b64_decode(KW_B64_URL, quote, n, (uint8_t *)bytes.data, bytes.cap, &len)) {
		snprintf(why, whylen, "runtime.evidence.quote is not base64url");
		goto out;
	}
	bytes.len = len;
	obj = jcs_parse(bytes.data, bytes.len, &jerr);
	/* One spelling: the bytes are the RFC 8785 form the producer signed. */
	if (!json_is_object(obj) || jcs_dump(obj, &canon) || canon.len != bytes.len ||
	    memcmp(canon.data, bytes.data, bytes.len)) {
		snprintf(why, whylen, "runtime.evidence.quote does not hold an evidence object in RFC 8785 form%s%.120s",
			 obj ? "" : ": ", obj ? "" : jerr.message);
		json_decref(obj);
		obj = NULL;
	}
out:
	kw_buf_free(&bytes);
	kw_buf_free(&canon);
	return obj;
}

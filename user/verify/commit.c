/* SPDX-License-Identifier: Apache-2.0 */
/* A committed session's TPM commitment, see commit.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jcs/jcs.h"
#include "lib/base64.h"
#include "lib/buf.h"
#include "trace/profile_v03.h"
#include "verify/commit.h"

static const char *str_at(const json_t *o, const char *a, const char *b)
{
	return json_string_value(json_object_get(json_object_get(o, a), b));
}

static int ak_of(const json_t *evidence, struct kw_buf *out)
{
	const char *s = json_string_value(json_object_get(evidence, "ak_public"));
	size_t len;

	if (!s || kw_buf_reserve(out, strlen(s) + 1) ||
	    kw_b64_decode(KW_B64_URL, s, strlen(s), (uint8_t *)out->data, out->cap, &len))
		return -EINVAL;
	out->len = len;
	return 0;
}

int verify_commitment(const json_t *rec, const char *session, const char *counter,
		      const json_t *cm, const json_t *evidence, struct kw_commit_result *res)
{
	struct kw_buf ak = { 0 };
	json_t *inline_ev = NULL;
	struct kw_commit_claim claim = {
		.session = session,
		.counter = counter,
		.bundle_hash = str_at(rec, "policy", "bundle_hash"),
		.image_digest = str_at(rec, "build_provenance", "digest"),
		.transcript_hash = str_at(rec, "tool_transcript", "hash"),
	};
	int ret;

	if (!evidence) { /* a trace-v0.3-draft record's own */
		char why[200];
		int present;

		evidence = inline_ev = kw_inline_evidence_decode(rec, &present, why, sizeof(why));
	}
	/* Without an AK there is nothing the certification could be checked
	 * against: any key can sign a structure that looks TPM-made. */
	if (cm && (ak_of(evidence, &ak) || !ak.len)) {
		ret = 0;
		memset(res, 0, sizeof(*res));
		res->reason = KW_COMMIT_AK_MISMATCH;
		snprintf(res->message, sizeof(res->message),
			 "no TPM evidence (the one the log's close entry names) to take the AK from");
	} else {
		ret = kw_commit_check(cm, &claim, &ak, res);
	}
	json_decref(inline_ev);
	kw_buf_free(&ak);
	return ret < 0 ? ret : 0;
}

/* A JSON object file of a state folder's dir: NULL when absent (*present
 * false) or unreadable (*present true). */
static json_t *read_json_at(int dir, const char *name, size_t max, bool *present)
{
	struct kw_buf b = { 0 };
	json_t *j = NULL;
	int fd = kw_state_open_file(dir, name), e;

	*present = fd != -ENOENT;
	if (fd < 0)
		return NULL;
	e = kw_read_fd(fd, max, &b);
	close(fd);
	if (!e)
		j = json_loadb(b.data ? b.data : "", b.len, JSON_REJECT_DUPLICATES, NULL);
	kw_buf_free(&b);
	if (j && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

int verify_state_commitment(const struct kw_state_dir *st, const json_t *rec,
			    const struct kw_log_check *lc, struct kw_verify_result *res)
{
	const char *platform = str_at(rec, "runtime", "platform");
	char session[KW_SESSION_ID_LEN + 1], counter[32], evname[80], name[80];
	struct kw_commit_result cr;
	json_t *cm = NULL, *ev = NULL;
	bool present;
	int ret;

	/* Only a record signed under a verified binding can be held to its
	 * commitment (as `verify --evidence --log`, which needs Level 1 evidence). */
	if (!platform || strcmp(platform, "tpm2") || !lc->tpm_counter.len)
		return 0;
	kw_log_field_string(&lc->session, session, sizeof(session));
	kw_log_field_string(&lc->tpm_counter, counter, sizeof(counter));
	kw_log_field_string(&lc->close_evidence, evname, sizeof(evname));
	if (kw_is_session_id(session)) {
		snprintf(name, sizeof(name), "%s.json", session);
		cm = read_json_at(st->commit, name, VERIFY_COMMIT_MAX, &present);
	} else {
		present = false;
	}
	if (!strncmp(evname, "sha256:", 7) && strlen(evname) == 71 &&
	    strspn(evname + 7, "0123456789abcdef") == 64) {
		bool ev_present;

		snprintf(name, sizeof(name), "%s.json", evname + 7);
		ev = read_json_at(st->evidence, name, KW_TPM_EVIDENCE_MAX, &ev_present);
	}
	if (present && !cm) {
		memset(&cr, 0, sizeof(cr));
		cr.reason = KW_COMMIT_MALFORMED;
		snprintf(cr.message, sizeof(cr.message), "commit/%s.json is not a JSON object",
			 session);
		ret = 0;
	} else {
		ret = verify_commitment(rec, session, counter, cm, ev, &cr);
	}
	json_decref(cm);
	json_decref(ev);
	if (ret < 0)
		return ret;
	if (cr.reason == KW_COMMIT_OK)
		return 0;
	_Static_assert(KW_VERIFY_TPM_COMMIT_REPLAY_MISMATCH - KW_VERIFY_TPM_COMMIT_MISSING ==
			       KW_COMMIT_REPLAY_MISMATCH - KW_COMMIT_MISSING,
		       "the verifier's reasons follow the commitment's");
	kw_verify_result_set(res, KW_VERIFY_TPM_COMMIT_MISSING + (cr.reason - KW_COMMIT_MISSING),
			     "%s", cr.message);
	res->warning[0] = '\0';
	return 1;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness verify --evidence with --log: a session that took a TPM counter
 * value at open (its open entry names "tpm_counter") was committed to the
 * TPM, and its commitment file must replay (tpm/commit.h). */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jcs/jcs.h"
#include "lib/base64.h"
#include "tpm/commit.h"
#include "cli_record.h"
#include "cmd_verify_commit.h"
#include "trace/profile_v03.h"

/* The log's first line, its open entry (the verifier already checked the
 * log hashes to the record's transcript). */
static json_t *open_entry(const char *log_path)
{
	FILE *f = fopen(log_path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	json_t *e = NULL;

	if (!f)
		return NULL;
	n = getline(&line, &cap, f);
	if (n > 0 && n < 1 << 20)
		e = json_loadb(line, (size_t)n, JSON_REJECT_DUPLICATES, NULL);
	free(line);
	fclose(f);
	if (e && !json_is_object(e)) {
		json_decref(e);
		e = NULL;
	}
	return e;
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

static const char *str_at(const json_t *o, const char *a, const char *b)
{
	return json_string_value(json_object_get(json_object_get(o, a), b));
}

int verify_commit(const char *record_path, const char *log_path, const json_t *evidence,
		  const char *commit_path, struct kw_commit_result *res)
{
	json_t *rec = NULL, *open = NULL, *cm = NULL, *inline_ev = NULL;
	struct kw_buf ak = { 0 };
	struct kw_commit_claim claim;
	char path[4096];
	const char *counter;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	res->reason = KW_COMMIT_OK;
	open = open_entry(log_path);
	counter = json_string_value(json_object_get(open, "tpm_counter"));
	if (!counter && !commit_path) {
		ret = 1; /* not committed, and not asked to be */
		goto out;
	}
	if (!commit_path) { /* beside the log: STATE/logs/X -> STATE/commit/<session>.json */
		char *copy = strdup(log_path);
		const char *session = json_string_value(json_object_get(open, "session"));

		if (!copy) {
			ret = -ENOMEM;
			goto out;
		}
		snprintf(path, sizeof(path), "%s/../commit/%.64s.json", dirname(copy),
			 session && !strchr(session, '/') ? session : "-");
		free(copy);
		commit_path = path;
	}
	rec = cli_read_json("verify", "record", record_path);
	cm = json_load_file(commit_path, JSON_REJECT_DUPLICATES, NULL);
	if (rec && !evidence) { /* a trace-v0.3-draft record's own, appraised already */
		char why[200];
		int present;

		evidence = inline_ev = kw_inline_evidence_decode(rec, &present, why, sizeof(why));
	}
	if (!rec || ak_of(evidence, &ak)) {
		ret = -EINVAL;
		goto out;
	}
	claim = (struct kw_commit_claim){
		.session = json_string_value(json_object_get(open, "session")),
		.counter = counter,
		.bundle_hash = str_at(rec, "policy", "bundle_hash"),
		.image_digest = str_at(rec, "build_provenance", "digest"),
		.transcript_hash = str_at(rec, "tool_transcript", "hash"),
	};
	ret = kw_commit_check(cm, &claim, &ak, res);
	if (ret > 0)
		ret = 0;
out:
	json_decref(inline_ev);
	json_decref(rec);
	json_decref(open);
	json_decref(cm);
	kw_buf_free(&ak);
	return ret;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness verify --evidence with --log: a session that took a TPM counter
 * value at open (its open entry names "tpm_counter") was committed to the
 * TPM, and its commitment file must replay (tpm/commit.h). */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jcs/jcs.h"
#include "tpm/commit.h"
#include "cli_record.h"
#include "cmd_verify_commit.h"
#include "verify/commit.h"

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

int verify_commit(const char *record_path, const char *log_path, const json_t *evidence,
		  const char *commit_path, struct kw_commit_result *res)
{
	json_t *rec = NULL, *open = NULL, *cm = NULL;
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
	if (!rec) {
		ret = -EINVAL;
		goto out;
	}
	if (!cm && access(commit_path, F_OK) == 0) { /* there, but not JSON: as verify --dir says */
		res->reason = KW_COMMIT_MALFORMED;
		snprintf(res->message, sizeof(res->message), "%.200s is not a JSON object", commit_path);
		goto out;
	}
	/* The one check verify --dir and estate ingest make (verify/commit.h). */
	ret = verify_commitment(rec, json_string_value(json_object_get(open, "session")), counter,
				cm, evidence, res);
out:
	json_decref(rec);
	json_decref(open);
	json_decref(cm);
	return ret;
}

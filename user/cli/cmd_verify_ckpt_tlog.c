/* SPDX-License-Identifier: Apache-2.0 */
/* The checkpoints' transparency proofs in kwitness verify, see
 * cmd_verify_ckpt_tlog.h. */
#include <inttypes.h>
#include <stdio.h>

#include "lib/text_safe.h"
#include "verify/checkpoint_tlog.h"
#include "cli_tlog.h"
#include "cmd_verify_ckpt_tlog.h"

struct each_ctx {
	json_t *list; /* NULL: print */
	uint64_t logged, missing;
};

static void each(void *arg, uint64_t n, bool present, const struct tlog_verdict *v)
{
	struct each_ctx *c = arg;
	char m[1700];

	c->logged += present && !v->step;
	c->missing += !present;
	if (c->list) {
		json_array_append_new(c->list, json_pack("{s:I, s:b, s:b, s:s, s:s}", "n", (json_int_t)n,
					       "proof", present, "valid", present && !v->step, "reason",
					       present ? v->code : "no_proof", "message",
					       present ? v->message : "no proof in the proofs file"));
		return;
	}
	if (!present)
		printf("checkpoint %" PRIu64 ": transparency: no proof (not logged)\n", n);
	else if (v->step)
		printf("checkpoint %" PRIu64 ": transparency: invalid: %s: step %d: %s\n", n, v->code,
		       v->step, kw_text_safe(v->message, m, sizeof(m)));
	else
		printf("checkpoint %" PRIu64 ": transparency: logged: %s\n", n,
		       kw_text_safe(v->message, m, sizeof(m)));
}

int cli_verify_ckpt_tlog(const char *policy_path, const char *ckpt_path, json_t *out,
			 const char *key)
{
	struct tlog_policy *pol = cli_tlog_policy_load("verify", "witness policy", policy_path);
	struct each_ctx c = { .list = out ? json_array() : NULL };
	uint64_t invalid = 0;
	char err[4400];
	int e;

	if (!pol) {
		json_decref(c.list);
		return 2;
	}
	e = verify_ckpt_tlog(pol, ckpt_path, NULL, each, &c, &invalid, err, sizeof(err));
	cli_tlog_policy_free(pol);
	if (e) {
		fprintf(stderr, "kwitness verify: %s\n", err);
		json_decref(c.list);
		return 2;
	}
	if (out)
		json_object_set_new(out, key, c.list);
	else
		printf("%s: %" PRIu64 " checkpoint(s) logged, %" PRIu64 " without a proof, %"
		       PRIu64 " invalid proof(s)\n", key, c.logged, c.missing, invalid);
	return invalid ? 1 : 0;
}

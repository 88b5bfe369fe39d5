/* SPDX-License-Identifier: Apache-2.0 */
/* Appraising the TPM evidence a TRACE v0.3 draft record carries inline
 * (runtime.evidence): decoded back into the evidence object an evidence file
 * holds, then the one appraisal, tpm/appraise.c. */
#include <stdio.h>
#include <string.h>

#include "jcs/jcs.h"
#include "trace/profile_v03.h"
#include "verify/verdict.h"

int verify_appraise_inline(const char *text, size_t len, const struct kw_appraise_opts *ao,
			   struct kw_appraise_result *res)
{
	json_t *rec = jcs_parse(text, len, NULL), *ev;
	char why[300];
	int present, a;

	ev = kw_inline_evidence_decode(rec, &present, why, sizeof(why));
	if (!ev) {
		json_decref(rec);
		memset(res, 0, sizeof(*res));
		res->step = KW_APPRAISE_EVIDENCE_MALFORMED;
		snprintf(res->message, sizeof(res->message), "%s", why);
		return 1;
	}
	/* The signed record as a whole: kw_appraise reads cnf and runtime. */
	a = kw_appraise(ev, rec, ao, res);
	json_decref(ev);
	json_decref(rec);
	return a;
}

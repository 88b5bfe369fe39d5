/* SPDX-License-Identifier: Apache-2.0 */
/* Reading evidence files back (evidence.c), for appraisal. */
#ifndef KWITNESS_TPM_EVIDENCE_H
#define KWITNESS_TPM_EVIDENCE_H

#include "tpm/tpm.h"

#define KW_EVIDENCE_MAX_CERTS 4

struct kw_evidence {
	struct kw_tpm_quote q;
	struct kw_buf ek_certs[KW_EVIDENCE_MAX_CERTS]; /* leaf first, DER */
	size_t n_ek_certs;
	const json_t *enrollment; /* borrowed from the evidence object; NULL: none */
};
/* 0, or -EINVAL with why. */
int kw_evidence_parse(const json_t *ev, struct kw_evidence *out, char *why, size_t whylen);
void kw_evidence_free(struct kw_evidence *e);

#endif

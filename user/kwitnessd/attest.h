/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESSD_ATTEST_H
#define KWITNESSD_ATTEST_H

#include "trace/record.h"

/* attest.c: the TPM binding (--tpm). A session keeps a copy of the binding
 * its record is signed under. */
struct kwd_runtime {
	bool bound;
	char evidence[KW_DIGEST_STR_MAX];
	char measurement[KW_DIGEST_STR_MAX];
	char nonce[KW_THUMBPRINT_MAX];
	char firmware_version[48];
};
struct kwd;
struct kwd_attest;
/* Opens the TPM, binds the signing key; 0 without --tpm. */
int kwd_attest_start(struct kwd *d, char *err, size_t errlen);
void kwd_attest_stop(struct kwd *d);
/* The binding now, quoting again when the key or the PCRs changed; rt is
 * unbound (software-only) without --tpm or when no binding can be verified. */
int kwd_attest_current(struct kwd *d, struct kwd_runtime *rt);
/* A copy of the bound evidence object when it is rt's (the record profile
 * trace-v0.3-draft carries it inline); NULL otherwise. */
json_t *kwd_attest_evidence(struct kwd *d, const struct kwd_runtime *rt);

struct kw_tpm;
/* The TPM, opened for one use with the binding's AK (kw_tpm_close after). */
int kwd_attest_tpm(struct kwd *d, struct kw_tpm **out, char *err, size_t errlen);

#endif

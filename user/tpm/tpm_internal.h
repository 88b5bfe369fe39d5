/* SPDX-License-Identifier: Apache-2.0 */
/* Shared inside user/tpm: TSS types and the helpers several files use. */
#ifndef KWITNESS_TPM_INTERNAL_H
#define KWITNESS_TPM_INTERNAL_H

#include <tss2/tss2_tpm2_types.h>

#include "tpm/tpm.h"

/* NV index of the RSA 2048 EK certificate (TCG EK Credential Profile). */
#define KW_TPM_NV_EK_CERT_RSA 0x01c00002
/* Persistent handle where provisioning usually leaves the RSA EK. */
#define KW_TPM_EK_PERSISTENT 0x81010001

/* 0x000b || SHA-256(marshalled TPMT_PUBLIC). */
int kw_tpm_name_of(const uint8_t *pub, size_t len, uint8_t name[34]);
/* The AK must be a restricted ECDSA P-256 signing key bound to its TPM. */
int kw_tpm_ak_check(const TPMT_PUBLIC *p, char *why, size_t whylen);
/* 1 when the ECDSA signature (r, s) over msg verifies with the AK. */
int kw_tpm_ecdsa_verify(const TPMT_PUBLIC *ak, const TPMS_SIGNATURE_ECC *sig, const void *msg,
			size_t len);
/* SHA-256 over the selected PCR values in index order. */
int kw_tpm_pcr_values_digest(const struct kw_tpm_quote *q, uint8_t out[32]);
/* The TSS logs parse errors to stderr unless told otherwise; kwitness
 * reports them itself. Call before any TSS function, from one thread. */
void kw_tss_quiet(void);
/* Lowercase hex into out (2n+1 bytes). */
void kw_hex(const uint8_t *p, size_t n, char *out);
/* p as a base64url JSON string (the scratch text is wiped), NULL when out of memory. */
json_t *kw_tpm_b64_json(const void *p, size_t n);
/* A non-empty base64url JSON string into out; 0 or -errno. */
int kw_tpm_unb64(const json_t *j, struct kw_buf *out);
int kw_unhex(const char *s, uint8_t *out, size_t n);

#endif

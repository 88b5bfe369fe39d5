/* SPDX-License-Identifier: Apache-2.0 */
/* The collector's TPM binding (user/tpm/binding.c): the signing key's
 * thumbprint in a checked quote, and the evidence file that holds it. */
#ifndef KWITNESS_TPM_BINDING_H
#define KWITNESS_TPM_BINDING_H

#include "tpm/tpm.h"

struct kw_tpm_binding {
	struct kw_pcr_selection sel;
	struct kw_buf ek_cert;         /* DER, from the TPM */
	bool ek_cert_missing;
	json_t *enrollment;            /* owned; NULL: the AK is not enrolled */
	json_t *ak;                    /* owned: the AK file (kw_tpm_ak_read) */
	char *evidence_dir;            /* NULL: keep the evidence in last_evidence */
	struct kw_buf last_evidence;
	json_t *evidence_object;       /* the bound evidence (kw_evidence_build), owned */
	/* The current binding, valid when bound. */
	bool bound;
	uint64_t generation;           /* counts new bindings */
	uint8_t nonce[32];             /* the thumbprint quoted */
	uint8_t pcr_digest[32];
	char evidence[KW_DIGEST_STR_MAX];   /* "sha256:" + hex(SHA-256(TPMS_ATTEST)) */
	char measurement[KW_DIGEST_STR_MAX];
	char nonce_b64[KW_THUMBPRINT_MAX];
	char firmware_version[48];
};

/* Takes enrollment (may be NULL) and ak (the AK file; the binding quotes
 * with that AK on every connection); checks the enrollment names this TPM's
 * EK and that AK. */
int kw_binding_init(struct kw_tpm_binding *b, struct kw_tpm *tpm,
		    const struct kw_pcr_selection *sel, const char *evidence_dir,
		    json_t *enrollment, json_t *ak, char *err, size_t errlen);
void kw_binding_free(struct kw_tpm_binding *b);
/* Quotes again on tpm when the key's thumbprint or the PCR values differ
 * from the bound ones (or nothing is bound yet); *changed says whether it
 * did. The TPM may be a new connection each time (a swtpm serves one
 * client at a time). */
int kw_binding_refresh(struct kw_tpm_binding *b, struct kw_tpm *tpm, const struct kw_key *key,
		       bool *changed, char *err, size_t errlen);
/* The RFC 7638 thumbprint's 32 raw bytes. */
int kw_key_thumbprint_raw(const struct kw_key *key, uint8_t out[32]);
/* The enrollment names this EK certificate and AK (no signature check). */
int kw_enrollment_check_names(const json_t *enr, const struct kw_buf *ek_der,
			      const uint8_t ak_name[34], char *why, size_t whylen);

#endif

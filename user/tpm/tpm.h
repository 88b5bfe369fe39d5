/* SPDX-License-Identifier: Apache-2.0 */
/* TPM 2.0 attestation of the record-signing key (Level 1): PCR selections,
 * quotes whose qualifyingData is the key's RFC 7638 thumbprint, evidence
 * files, AK enrollment by credential activation, and offline appraisal.
 * Device side: tpm2-tss (Esys, MU, TCTI loader); checks: OpenSSL. */
#ifndef KWITNESS_TPM_H
#define KWITNESS_TPM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "lib/buf.h"
#include "lib/digest.h"
#include "trace/key.h"

#define KW_TPM_PCR_COUNT 24
#define KW_TPM_DEFAULT_PCRS "sha256:0,1,2,3,4,5,6,7"
#define KW_TPM_EVIDENCE_FORMAT "kwitness-tpm2-evidence-v1"
#define KW_TPM_ENROLLMENT_KIND "kwitness.tpm-enrollment"
#define KW_TPM_AK_KIND "kwitness.tpm-ak"
/* Evidence and enrollment files are small; anything larger is refused. */
#define KW_TPM_EVIDENCE_MAX (256 * 1024)

/* --- PCR selections (pcr.c): one SHA-256 bank, PCRs 0..23 --- */
struct kw_pcr_selection {
	uint32_t mask; /* bit i: PCR i */
};
/* "sha256:0,1,2" or "sha256:0-7" (ranges and lists mix). 0 or -EINVAL. */
int kw_pcr_selection_parse(const char *s, struct kw_pcr_selection *out, char *err, size_t errlen);
/* The canonical form, "sha256:0,1,2,3". out holds at least 128 bytes. */
void kw_pcr_selection_format(const struct kw_pcr_selection *sel, char *out, size_t outlen);
unsigned kw_pcr_selection_count(const struct kw_pcr_selection *sel);

/* --- A quote as the evidence carries it (quote.c on the device side) --- */
struct kw_tpm_quote {
	struct kw_buf attest;     /* TPMS_ATTEST, as the TPM marshalled it */
	struct kw_buf signature;  /* TPMT_SIGNATURE, marshalled */
	struct kw_buf ak_public;  /* TPMT_PUBLIC of the AK, marshalled */
	struct kw_pcr_selection sel;
	uint8_t pcr[KW_TPM_PCR_COUNT][32]; /* values of the selected PCRs */
};
void kw_tpm_quote_free(struct kw_tpm_quote *q);

/* What a verified quote says, once checked (quote_check.c). */
struct kw_quote_facts {
	uint8_t extra[64];
	size_t extra_len;
	uint8_t pcr_digest[32];
	uint64_t firmware;
	char measurement[KW_DIGEST_STR_MAX];  /* "sha256:" + hex(pcrDigest) */
	char firmware_version[48];            /* "a.b.c.d" from TPMS_ATTEST */
	uint8_t ak_name[34];                  /* 0x000b || SHA-256(TPMT_PUBLIC) */
};
/* Checks a quote on its own: the AK public area is a restricted ECDSA
 * P-256 signing key that the TPM generated and cannot export, the attest
 * structure is a TPM-generated quote over exactly q->sel, the signature
 * over it verifies with the AK, and the PCR values hash to its pcrDigest.
 * Returns 0 (facts filled) or -EBADMSG with a reason in why and the failing
 * part in *part: 3 (signature, structure) or 6 (PCR values vs digest). */
int kw_quote_check(const struct kw_tpm_quote *q, struct kw_quote_facts *facts, int *part,
		   char *why, size_t whylen);
/* TPMS_ATTEST.firmwareVersion as the record's runtime.firmware_version. */
void kw_tpm_firmware_string(uint64_t fw, char out[48]);

/* --- The device (device.c, quote.c, enroll.c) --- */
struct kw_tpm;
/* tcti: "device:/dev/tpmrm0" or "swtpm:host=H,port=P" (also "mssim:").
 * 0 or -errno with a one-line message. */
int kw_tpm_open(const char *tcti, struct kw_tpm **out, char *err, size_t errlen);
void kw_tpm_close(struct kw_tpm *t);
/* The EK certificate (DER) from the TPM's NV index for the RSA 2048 EK. */
int kw_tpm_ek_cert(struct kw_tpm *t, struct kw_buf *der, char *err, size_t errlen);
/* Quote over sel with qualifyingData = nonce (32 bytes); fills q with the
 * quote, the AK public area and the PCR values read beside it. */
int kw_tpm_quote(struct kw_tpm *t, const struct kw_pcr_selection *sel, const uint8_t nonce[32],
		 struct kw_tpm_quote *q, char *err, size_t errlen);
/* SHA-256 over the selected PCR values as they are now. */
int kw_tpm_pcr_digest(struct kw_tpm *t, const struct kw_pcr_selection *sel, uint8_t out[32],
		      char *err, size_t errlen);
/* The attestation key (ak.c): an AK file is the AK's public area, its
 * private blob and its random authorisation value; whoever reads it can
 * quote with that AK, so it is kept owner-only (0600). kw_tpm_ak_create
 * makes a new AK on t (and loads it); kw_tpm_use_ak tells t which AK file
 * to load (held by reference); read refuses a file others may read. */
json_t *kw_tpm_ak_create(struct kw_tpm *t, char *err, size_t errlen);
void kw_tpm_use_ak(struct kw_tpm *t, const json_t *ak);
json_t *kw_tpm_ak_read(const char *path, char *err, size_t errlen);
int kw_tpm_ak_write(const char *path, const json_t *ak, char *err, size_t errlen);
/* The AK's name (0x000b || SHA-256 of its public area). */
int kw_tpm_ak_name(struct kw_tpm *t, uint8_t name[34], char *err, size_t errlen);

/* --- Enrollment (enroll.c): makes a new AK (*ak_out, the AK file's
 * content), ties it to the EK by credential activation and signs a
 * statement of it with the enrollment key, naming what the AK vouches for:
 * the host and its record-signing keys. ca_file: the EK CA the enroller
 * trusts. Returns the signed enrollment record or NULL. */
struct kw_enroll_subject {
	const char *machine_id;   /* the host's /etc/machine-id */
	const char *const *keys;  /* RFC 7638 thumbprints of its signing keys */
	size_t n_keys;
};
json_t *kw_tpm_enroll(struct kw_tpm *t, const char *ca_file, const struct kw_key *enroll_key,
		      const struct kw_enroll_subject *subj, json_t **ak_out, char *err,
		      size_t errlen);
/* Software TPM2_MakeCredential for an RSA EK (makecred.c): the blobs that
 * only the TPM holding that EK can open, and only for the object named name. */
int kw_make_credential(const uint8_t *ek_der, size_t ek_der_len, const uint8_t *name,
		       size_t name_len, const uint8_t *cred, size_t cred_len,
		       struct kw_buf *id_object, struct kw_buf *enc_secret, char *err, size_t errlen);

/* --- Evidence files (evidence.c) --- */
/* Builds the evidence object (every binary member base64url). enrollment may be NULL. */
json_t *kw_evidence_build(const struct kw_tpm_quote *q, const struct kw_buf *ek_certs,
			  size_t n_ek_certs, const json_t *enrollment);
/* "sha256:" + hex of SHA-256(TPMS_ATTEST): the evidence's name. */
int kw_evidence_digest(const struct kw_tpm_quote *q, char out[KW_DIGEST_STR_MAX]);

/* --- Appraisal (appraise.c), in this order --- */
enum kw_appraise_step {
	KW_APPRAISE_OK = 0,
	KW_APPRAISE_EVIDENCE_MALFORMED,  /* 0: the evidence or record cannot be read */
	KW_APPRAISE_EK_UNTRUSTED,        /* 1: EK certificate chain to the CA */
	KW_APPRAISE_AK_NOT_ENROLLED,     /* 2: AK bound to that EK by the enrollment */
	KW_APPRAISE_QUOTE_INVALID,       /* 3: quote signature by the AK */
	KW_APPRAISE_NONCE_MISMATCH,      /* 4: extraData = thumbprint(cnf.jwk) = runtime.nonce */
	KW_APPRAISE_MEASUREMENT_MISMATCH,/* 5: pcrDigest = runtime.measurement */
	KW_APPRAISE_PCRS_MISMATCH,       /* 6: PCR values (vs digest, vs reference) */
	KW_APPRAISE_EVIDENCE_NOT_LOGGED, /* 0: the quote is not the one the log names */
	KW_APPRAISE_AK_NOT_ENROLLED_FOR_KEY,  /* 2: the enrollment does not list the signer */
	KW_APPRAISE_AK_NOT_ENROLLED_FOR_HOST, /* 2: ... or names another host than the log */
};
struct kw_appraise_opts {
	const char *ca_file;             /* EK CA bundle (PEM) */
	const struct kw_key *enroll_key; /* trusted enrollment key; NULL: step 2 fails */
	const json_t *pcrs_ref;          /* {"sha256:N": "hex", ...}; NULL: not checked */
	/* From the decision log, when one is checked (NULL: no log): the close
	 * entry's evidence digest ("" when it names none), which SHA-256 of the
	 * quote's TPMS_ATTEST must equal, and the open entry's machine id, which
	 * the enrollment must name. */
	const char *logged_evidence;
	const char *logged_machine_id;
};
struct kw_appraise_result {
	enum kw_appraise_step step;
	char message[400];
	char measurement[KW_DIGEST_STR_MAX];
	char pcrs[128];
};
/* Appraises evidence for a record that kw_record_verify already accepted.
 * Returns 0 (Level 1), 1 (Level 0: res says the first failing step), -errno. */
int kw_appraise(const json_t *evidence, const json_t *record, const struct kw_appraise_opts *o,
		struct kw_appraise_result *res);
const char *kw_appraise_code(enum kw_appraise_step s);
/* The step number (0..6) of a result. */
int kw_appraise_step_number(enum kw_appraise_step s);
/* The level an appraisal gives a record, read from kw_appraise's return ret
 * and res: 1 (why ""), or 0 with why one sentence saying which step failed
 * ("TPM appraisal failed at step N: code: message"), or that the appraisal
 * could not be made (ret < 0). What the estate stores for a tpm2 record. */
int kw_appraise_level(int ret, const struct kw_appraise_result *res, char *why, size_t whylen);

/* Shared by enrollment and appraisal (ekcert.c): verifies the first DER
 * certificate against ca_file with the rest as intermediates. */
int kw_ek_chain_verify(const struct kw_buf *certs, size_t n, const char *ca_file, char *why,
		       size_t whylen);
/* Enrollment record checks (enrollment.c): signed by key, naming this EK
 * certificate and this AK. 0 or -EBADMSG with why. */
int kw_enrollment_check(const json_t *enr, const struct kw_key *key, const struct kw_buf *ek_der,
			const uint8_t ak_name[34], char *why, size_t whylen);
/* The enrollment lists this signing key's thumbprint / names this host's
 * machine id. 0 or -EBADMSG with why. */
int kw_enrollment_names_key(const json_t *enr, const char *thumbprint, char *why, size_t whylen);
int kw_enrollment_names_host(const json_t *enr, const char *machine_id, char *why, size_t whylen);

#endif

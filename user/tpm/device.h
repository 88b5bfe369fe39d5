/* SPDX-License-Identifier: Apache-2.0 */
/* The TPM connection shared by device.c, quote.c and enroll.c. */
#ifndef KWITNESS_TPM_DEVICE_H
#define KWITNESS_TPM_DEVICE_H

#include <stdbool.h>
#include <tss2/tss2_esys.h>

#include "tpm_internal.h"

struct kw_tpm {
	TSS2_TCTI_CONTEXT *tcti;
	ESYS_CONTEXT *ctx;
	json_t *ak_file;         /* the AK file (kw_tpm_use_ak); NULL: none */
	ESYS_TR ak;              /* ESYS_TR_NONE until kw_tpm_load_ak */
	uint8_t *ak_public;      /* marshalled TPMT_PUBLIC */
	size_t ak_public_len;
	ESYS_TR ek;              /* ESYS_TR_NONE until kw_tpm_load_ek */
	bool ek_transient;       /* created here: flushed at close */
};

void kw_tpm_rc_error(char *err, size_t errlen, const char *what, TSS2_RC rc);
/* Loads the AK of t->ak_file (ak.c). */
int kw_tpm_load_ak(struct kw_tpm *t, char *err, size_t errlen);
/* A primary key from tmpl in the endorsement hierarchy (empty auth, no
 * outside info, no PCRs); *pub is the caller's to Esys_Free (NULL: freed). */
TSS2_RC kw_tpm_create_endorsement_primary(struct kw_tpm *t, const TPM2B_PUBLIC *tmpl,
					   ESYS_TR *handle, TPM2B_PUBLIC **pub);
int kw_tpm_load_ek(struct kw_tpm *t, char *err, size_t errlen);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* Building the signed enrollment record (enrollment.c), used by enroll.c. */
#ifndef KWITNESS_TPM_ENROLLMENT_H
#define KWITNESS_TPM_ENROLLMENT_H

#include "tpm/tpm.h"

json_t *kw_enrollment_sign(const struct kw_buf *ek_der, const uint8_t ak_name[34],
			   const struct kw_enroll_subject *subj, const struct kw_key *key,
			   char *err, size_t errlen);

#endif

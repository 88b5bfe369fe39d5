/* PLACEHOLDER until the BPF-LSM part lands: no LSM class is provided. */
#include <errno.h>
#include <stdio.h>
#include "lsm.h"

uint32_t kw_lsm_prepare(struct kwitness_bpf *skel, char *why, size_t whylen)
{
	(void)skel;
	snprintf(why, whylen, "BPF-LSM programs are not built yet");
	return 0;
}

int kw_lsm_attach(struct kwitness_bpf *skel)
{
	(void)skel;
	return 0;
}

int kw_lsm_session_add(struct kwitness_bpf *skel, uint32_t slot, const struct kw_policy *pol)
{
	(void)skel; (void)slot;
	return pol->classes & (KW_CLASS_FS | KW_CLASS_EXEC | KW_CLASS_PROC | KW_CLASS_MOUNT |
			       KW_CLASS_UNIX) ? -EOPNOTSUPP : 0;
}

int kw_lsm_session_remove(struct kwitness_bpf *skel, uint32_t slot)
{
	(void)skel; (void)slot;
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* exec (BPF-LSM bprm_check_security): the binary, and a script's
 * interpreter, must be on exec.allow. */
#ifndef KWITNESS_LSM_EXEC_BPF_H
#define KWITNESS_LSM_EXEC_BPF_H

#include "lsm_path.bpf.h"

SEC("lsm/bprm_check_security")
int BPF_PROG(kw_lsm_bprm_check, struct linux_binprm *bprm, int ret)
{
	struct kw_ctx c;
	struct kw_path_ref p;

	if (ret || !kw_session_find(&c, KW_CLASS_EXEC))
		return ret;
	/* runs once per binary handler pass: a script's interpreter is judged too */
	p.mnt = BPF_CORE_READ(bprm, file, f_path.mnt);
	p.dentry = BPF_CORE_READ(bprm, file, f_path.dentry);
	p.leaf = NULL;
	return kw_path_hook(&c, KW_EV_FS_EXEC, KW_ACC_EXEC, KW_WANT(KW_PK_EXEC), &p, NULL, EACCES);
}

#endif

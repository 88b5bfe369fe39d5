/* SPDX-License-Identifier: Apache-2.0 */
#ifndef KWITNESSD_HARDEN_H
#define KWITNESSD_HARDEN_H

#include <stddef.h>

/* harden.c: no core dumps or same-uid ptrace, the key in locked memory and
 * out of the environment, folders only root can change. */
int kwd_harden_process(char *err, size_t errlen);
/* Bytes of the locked secure heap in use (the key, once loaded). */
size_t kwd_key_locked_bytes(void);
/* Wipes TRACE_PRIVATE_KEY_PEM, its bytes included, from the environment. */
void kwd_wipe_env_key(void);
/* 0 when path is a folder owned by root (or this user) that neither group nor
 * others can write, under folders that others cannot rename in (sticky
 * folders are fine); else -errno with a one-line err naming what is wrong. */
int kwd_check_dir(const char *what, const char *path, char *err, size_t errlen);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* Which build this is: the version (KW_VERSION, from `git describe` or the
 * VERSION file at build time) and the SHA-256 of the BPF objects built in. */
#ifndef KWITNESS_BPF_OBJECT_DIGEST_H
#define KWITNESS_BPF_OBJECT_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The object's bytes: the main one, or the one without kfunc externs
 * (load.c). */
const void *kw_bpf_object_bytes(bool nokfunc, size_t *size);
/* "sha256:<hex>" of that object into out (KW_DIGEST_STR_MAX): 0 or -errno. */
int kw_bpf_object_digest(bool nokfunc, char *out, size_t outlen);
/* The build's version string. */
const char *kw_version(void);
/* "PROG VERSION" and one line per BPF object, for --version: 0, or 1 when
 * a digest could not be computed. */
int kw_version_print(FILE *f, const char *prog);

#endif

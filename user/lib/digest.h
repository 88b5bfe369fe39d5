/* SPDX-License-Identifier: Apache-2.0 */
/* "sha256:<hex>" / "sha384:<hex>" digests through OpenSSL, one-shot or streaming. */
#ifndef KWITNESS_DIGEST_H
#define KWITNESS_DIGEST_H

#include <stdbool.h>
#include <stddef.h>

enum kw_digest_alg { KW_SHA256, KW_SHA384 };

/* "sha384:" + 96 hex digits + NUL. */
#define KW_DIGEST_STR_MAX 104

struct kw_digest {
	void *md_ctx; /* EVP_MD_CTX *, owned */
	enum kw_digest_alg alg;
};

/* Return 0 or -ENOMEM/-EIO. A context must be finished with kw_digest_final()
 * or released with kw_digest_free() (final also frees). */
int kw_digest_init(struct kw_digest *d, enum kw_digest_alg alg);
int kw_digest_update(struct kw_digest *d, const void *p, size_t n);
/* Writes the lowercase "alg:hex" string (NUL-terminated). */
int kw_digest_final(struct kw_digest *d, char out[KW_DIGEST_STR_MAX]);
void kw_digest_free(struct kw_digest *d);
/* A second context in the state of src (src goes on untouched): a hash of
 * what was fed so far without ending the stream. 0 or -ENOMEM/-EIO. */
int kw_digest_copy(struct kw_digest *dst, const struct kw_digest *src);
int kw_digest_buf(enum kw_digest_alg alg, const void *p, size_t n, char out[KW_DIGEST_STR_MAX]);
/* A regular file's content, read as a stream (opened without blocking, so a
 * FIFO named by mistake cannot hang it). 0, -EINVAL (not a regular file) or
 * -errno. */
int kw_digest_file(enum kw_digest_alg alg, const char *path, char out[KW_DIGEST_STR_MAX]);

/* True when s is exactly ^sha(256:[0-9a-f]{64}|384:[0-9a-f]{96})$. */
bool kw_digest_valid(const char *s);

#endif

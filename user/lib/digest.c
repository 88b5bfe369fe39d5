/* SPDX-License-Identifier: Apache-2.0 */
/* "sha256:<hex>" / "sha384:<hex>" digests through OpenSSL EVP. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "lib/digest.h"

static const EVP_MD *digest_md(enum kw_digest_alg alg)
{
	switch (alg) {
	case KW_SHA256:
		return EVP_sha256();
	case KW_SHA384:
		return EVP_sha384();
	}
	return NULL;
}

static const char *digest_prefix(enum kw_digest_alg alg)
{
	return alg == KW_SHA384 ? "sha384:" : "sha256:";
}

int kw_digest_init(struct kw_digest *d, enum kw_digest_alg alg)
{
	const EVP_MD *md = digest_md(alg);
	EVP_MD_CTX *ctx;

	d->md_ctx = NULL;
	d->alg = alg;
	if (!md)
		return -EINVAL;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	if (EVP_DigestInit_ex(ctx, md, NULL) != 1) {
		EVP_MD_CTX_free(ctx);
		return -EIO;
	}
	d->md_ctx = ctx;
	return 0;
}

int kw_digest_update(struct kw_digest *d, const void *p, size_t n)
{
	if (!d->md_ctx)
		return -EINVAL;
	if (n && EVP_DigestUpdate(d->md_ctx, p, n) != 1)
		return -EIO;
	return 0;
}

int kw_digest_final(struct kw_digest *d, char out[KW_DIGEST_STR_MAX])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	const char *prefix = digest_prefix(d->alg);
	size_t pl = strlen(prefix);
	int ret = 0;

	if (!d->md_ctx)
		return -EINVAL;
	if (EVP_DigestFinal_ex(d->md_ctx, md, &mdlen) != 1 || pl + 2 * mdlen + 1 > KW_DIGEST_STR_MAX) {
		ret = -EIO;
	} else {
		memcpy(out, prefix, pl);
		for (unsigned int i = 0; i < mdlen; i++) {
			out[pl + 2 * i] = hex[md[i] >> 4];
			out[pl + 2 * i + 1] = hex[md[i] & 0xf];
		}
		out[pl + 2 * mdlen] = '\0';
	}
	kw_digest_free(d);
	return ret;
}

void kw_digest_free(struct kw_digest *d)
{
	if (!d)
		return;
	EVP_MD_CTX_free(d->md_ctx);
	d->md_ctx = NULL;
}

int kw_digest_copy(struct kw_digest *dst, const struct kw_digest *src)
{
	EVP_MD_CTX *ctx;

	dst->md_ctx = NULL;
	dst->alg = src->alg;
	if (!src->md_ctx)
		return -EINVAL;
	ctx = EVP_MD_CTX_new();
	if (!ctx)
		return -ENOMEM;
	if (EVP_MD_CTX_copy_ex(ctx, src->md_ctx) != 1) {
		EVP_MD_CTX_free(ctx);
		return -EIO;
	}
	dst->md_ctx = ctx;
	return 0;
}

int kw_digest_buf(enum kw_digest_alg alg, const void *p, size_t n, char out[KW_DIGEST_STR_MAX])
{
	struct kw_digest d;
	int ret = kw_digest_init(&d, alg);

	if (ret)
		return ret;
	ret = kw_digest_update(&d, p, n);
	if (ret) {
		kw_digest_free(&d);
		return ret;
	}
	return kw_digest_final(&d, out);
}

static bool lower_hex_run(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
	}
	return s[n] == '\0';
}

bool kw_digest_valid(const char *s)
{
	if (!s)
		return false;
	if (!strncmp(s, "sha256:", 7))
		return strnlen(s + 7, 65) == 64 && lower_hex_run(s + 7, 64);
	if (!strncmp(s, "sha384:", 7))
		return strnlen(s + 7, 97) == 96 && lower_hex_run(s + 7, 96);
	return false;
}

int kw_digest_file(enum kw_digest_alg alg, const char *path, char out[KW_DIGEST_STR_MAX])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), e = 0;
	struct kw_digest d;
	struct stat st;
	char buf[65536];
	ssize_t n;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if ((e = kw_digest_init(&d, alg))) {
		close(fd);
		return e;
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (e = kw_digest_update(&d, buf, (size_t)n))) {
			e = e ?: -errno;
			break;
		}
	}
	close(fd);
	if (e) {
		kw_digest_free(&d);
		return e;
	}
	return kw_digest_final(&d, out);
}

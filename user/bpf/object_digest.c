// SPDX-License-Identifier: Apache-2.0
/* --version of both binaries: what was built, and which kernel programs it
 * carries, by the same SHA-256 that `sha256sum build/kwitness.bpf.o` gives. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/digest.h"
#include "version.h"
#include "object_digest.h"

const char *kw_version(void)
{
	return KW_VERSION;
}

int kw_bpf_object_digest(bool nokfunc, char *out, size_t outlen)
{
	size_t size = 0;
	const void *bytes = kw_bpf_object_bytes(nokfunc, &size);
	char hex[KW_DIGEST_STR_MAX];
	int e;

	if (!bytes || !size)
		return -ENOENT;
	e = kw_digest_buf(KW_SHA256, bytes, size, hex);
	if (e)
		return e;
	if (snprintf(out, outlen, "%s", hex) >= (int)outlen)
		return -ENAMETOOLONG;
	return 0;
}

int kw_version_print(FILE *f, const char *prog)
{
	static const struct {
		bool nokfunc;
		const char *file;
	} objects[] = { { false, "kwitness.bpf.o" }, { true, "kwitness-nokfunc.bpf.o" } };
	int status = 0;

	fprintf(f, "%s %s\n", prog, KW_VERSION);
	for (size_t i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
		char digest[KW_DIGEST_STR_MAX];

		if (kw_bpf_object_digest(objects[i].nokfunc, digest, sizeof(digest))) {
			status = 1;
			snprintf(digest, sizeof(digest), "unknown");
		}
		fprintf(f, "bpf %s %s\n", objects[i].file, digest);
	}
	return status;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The files a verification reads, see read.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlog/policy.h"
#include "verify/read.h"

int verify_read(const char *what, const char *path, size_t max, struct kw_buf *out, char *err,
		size_t errlen)
{
	int ret = kw_read_file(path, max, out);

	if (ret == -EFBIG)
		snprintf(err, errlen, "%s %s is larger than %zu bytes", what, path, max);
	else if (ret)
		snprintf(err, errlen, "cannot read %s %s: %s", what, path, strerror(-ret));
	return ret;
}

struct tlog_policy *verify_policy_load(const char *what, const char *path, char *err,
				       size_t errlen)
{
	struct kw_buf b = { 0 };
	struct tlog_policy *p = calloc(1, sizeof(*p));
	char why[300];

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (verify_read(what, path, TLOG_POLICY_FILE_MAX, &b, err, errlen)) {
		free(p);
		kw_buf_free(&b);
		return NULL;
	}
	if (tlog_policy_parse(b.data ? b.data : "", b.len, p, why, sizeof(why))) {
		snprintf(err, errlen, "%s: %s", path, why);
		free(p);
		p = NULL;
	}
	kw_buf_free(&b);
	return p;
}

void verify_policy_free(struct tlog_policy *p)
{
	if (p)
		tlog_policy_free(p);
	free(p);
}

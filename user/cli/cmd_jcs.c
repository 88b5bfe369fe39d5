/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness jcs [FILE]: prints the RFC 8785 canonical form of a JSON document. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "lib/messages.h"
#include "lib/buf.h"
#include "lib/mapped.h"
#include "jcs/jcs.h"

/* Larger documents are refused rather than read without bound. */
#define JCS_INPUT_MAX (256u << 20)

static void jcs_usage(FILE *f)
{
	fprintf(f, "usage: kwitness jcs [FILE]\n\n"
		   "Prints the RFC 8785 canonical form of the JSON document in FILE (standard\n"
		   "input when FILE is missing or \"-\") on standard output, with no trailing\n"
		   "newline. The document is refused (exit 1) when it is not strict JSON:\n"
		   "duplicate member names, invalid UTF-8, lone surrogates, NaN or Infinity,\n"
		   "integers outside +-(2^53-1), nesting deeper than %d, trailing content.\n"
		   "Input is limited to %u MiB.\n",
		JCS_MAX_DEPTH, JCS_INPUT_MAX >> 20);
}

struct jcs_job {
	const struct kw_mapped *in;
	struct kw_buf *out;
	struct jcs_error *err;
};

static int jcs_run(void *ctx)
{
	struct jcs_job *j = ctx;

	return jcs_canonicalize(j->in->data, j->in->len, j->out, j->err);
}

int cmd_jcs(int argc, char **argv)
{
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			jcs_usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--") && i + 1 < argc && !path) {
			path = argv[++i];
			continue;
		}
		if (a[0] == '-' && a[1] != '\0') {
			kw_usage_error("kwitness jcs", "unknown option '%s'", a);
			return 2;
		}
		if (path) {
			kw_usage_error("kwitness jcs", "only one FILE may be given");
			return 2;
		}
		path = a;
	}
	if (!path)
		path = "-";
	const char *name = strcmp(path, "-") ? path : "<stdin>";

	struct kw_mapped in = {0};
	struct kw_buf out = {0};
	int status = 1;
	/* Mapped, not read into new memory: its page faults were half the run. */
	int rc = kw_mapped_open(path, JCS_INPUT_MAX, &in);
	if (rc == -EFBIG) {
		fprintf(stderr, "kwitness jcs: %s: input larger than %u MiB\n", name,
			JCS_INPUT_MAX >> 20);
		goto out;
	}
	if (rc) {
		fprintf(stderr, "kwitness jcs: %s: %s\n", name, strerror(-rc));
		goto out;
	}
	struct jcs_error err;
	/* The output is about as long as the input: one allocation. */
	if (kw_buf_reserve(&out, in.len + 1)) {
		fprintf(stderr, "kwitness jcs: %s: %s\n", name, strerror(ENOMEM));
		goto out;
	}
	kw_buf_hint_huge(&out);
	struct jcs_job job = { &in, &out, &err };
	rc = kw_mapped_guard(&in, jcs_run, &job);
	if (rc == -ESTALE) {
		fprintf(stderr, "kwitness jcs: %s: the file was cut short while being read\n", name);
		goto out;
	}
	if (rc == -EINVAL) {
		fprintf(stderr, "kwitness jcs: %s:%zu:%zu: %s\n", name, err.line, err.column,
			err.message);
		goto out;
	}
	if (rc) {
		fprintf(stderr, "kwitness jcs: %s: %s\n", name, strerror(-rc));
		goto out;
	}
	rc = kw_write_all(STDOUT_FILENO, out.data, out.len);
	if (rc) {
		fprintf(stderr, "kwitness jcs: writing output: %s\n", strerror(-rc));
		goto out;
	}
	status = 0;
out:
	kw_mapped_free(&in);
	kw_buf_free(&out);
	return status;
}

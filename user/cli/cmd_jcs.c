/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness jcs [FILE]: prints the RFC 8785 canonical form of a JSON document. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
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

/* Output goes out this much at a time: the canonical form of a large
 * document is never held whole (fresh memory as large as the document is
 * zeroed by the kernel: 10-110 ms of system time for 25 MB on the test VM,
 * the most when no huge page was at hand). */
#define JCS_CHUNK (256u << 10)

struct jcs_job {
	const struct kw_mapped *in;
	struct kw_buf *out;
	const struct jcs_sink *sink;
	struct jcs_error *err;
	size_t handed; /* chunks the sink was given */
	int write_err; /* the first failed write to standard output */
};

static int jcs_run(void *ctx)
{
	struct jcs_job *j = ctx;

	return jcs_canonicalize_stream(j->in->data, j->in->len, j->out, j->sink, j->err);
}

static int jcs_discard(void *ctx, const char *data, size_t len)
{
	struct jcs_job *j = ctx;

	(void)data;
	(void)len;
	j->handed++;
	return 0;
}

static int jcs_to_stdout(void *ctx, const char *data, size_t len)
{
	struct jcs_job *j = ctx;
	int rc = kw_write_all(STDOUT_FILENO, data, len);

	j->handed++;
	if (rc && !j->write_err)
		j->write_err = rc;
	return rc;
}

/* One pass over the document with the job's sink; 0 or 1 (message printed).
 * again: this is the second pass, and output may already be out. */
static int jcs_pass(const char *name, struct kw_mapped *in, struct jcs_job *job, bool again)
{
	const char *changed = again ? "the file changed while being read: " : "";
	int rc = kw_mapped_guard(in, jcs_run, job);

	if (job->write_err) {
		fprintf(stderr, "kwitness jcs: writing output: %s\n", strerror(-job->write_err));
		return 1;
	}
	if (rc == -ESTALE) {
		fprintf(stderr, "kwitness jcs: %s: the file was cut short while being read\n", name);
		return 1;
	}
	if (rc == -EINVAL) {
		fprintf(stderr, "kwitness jcs: %s%s:%zu:%zu: %s\n", changed, name, job->err->line,
			job->err->column, job->err->message);
		return 1;
	}
	if (rc) {
		fprintf(stderr, "kwitness jcs: %s: %s\n", name, strerror(-rc));
		return 1;
	}
	return 0;
}

/* Prints the canonical form of in, or nothing when it is refused: every
 * refusal is found by the parse, so a first pass only checks (the output
 * it hands over is dropped, objects are not put in order) and a second pass
 * writes. A document of at most a chunk is parsed once, in order, unless
 * its output outgrew the chunk. */
static int jcs_print(const char *name, struct kw_mapped *in)
{
	struct kw_buf out = {0};
	struct jcs_error err;
	/* A small document is parsed in order at once: it usually fits. */
	struct jcs_sink sink = { jcs_discard, NULL, JCS_CHUNK, in->len > JCS_CHUNK };
	struct jcs_job job = { in, &out, &sink, &err, 0, 0 };
	int status;

	sink.ctx = &job;
	status = jcs_pass(name, in, &job, false);
	if (!status && (job.handed || sink.check_only)) {
		kw_buf_reset(&out);
		sink.write = jcs_to_stdout;
		sink.check_only = false;
		status = jcs_pass(name, in, &job, true);
	}
	if (!status) {
		int rc = kw_write_all(STDOUT_FILENO, out.data, out.len);

		if (rc) {
			fprintf(stderr, "kwitness jcs: writing output: %s\n", strerror(-rc));
			status = 1;
		}
	}
	kw_buf_free(&out);
	return status;
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
	int status = 1;
	/* A closed pipe is a write error with a message, not a silent death. */
	signal(SIGPIPE, SIG_IGN);
	/* Mapped, not read into new memory: its page faults were half the run. */
	int rc = kw_mapped_open(path, JCS_INPUT_MAX, &in);
	if (rc == -EFBIG)
		fprintf(stderr, "kwitness jcs: %s: input larger than %u MiB\n", name,
			JCS_INPUT_MAX >> 20);
	else if (rc)
		fprintf(stderr, "kwitness jcs: %s: %s\n", name, strerror(-rc));
	else
		status = jcs_print(name, &in);
	kw_mapped_free(&in);
	return status;
}

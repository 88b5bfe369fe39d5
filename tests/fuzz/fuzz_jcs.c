/* SPDX-License-Identifier: Apache-2.0 */
/* RFC 8785 canonicalisation of hostile text. Beyond "no crash": whatever is
 * accepted canonicalises to a fixed point (canonical text canonicalises to
 * itself), and jcs_parse agrees with jcs_canonicalize on what it accepts and
 * dumps the same bytes. The one documented exception (docs/canonical-json.md,
 * "The integer rule"): a double from 2^53 to 1e21 prints as a digit string
 * that the strict parser refuses as an unsafe integer literal. And one
 * documented difference (docs/canonical-json.md, the API): jcs_parse refuses
 * a member name holding U+0000, which a jansson tree cannot hold, although
 * jcs_canonicalize accepts it. jcs_canonicalize_stream, with a chunk size
 * taken from the input, accepts and refuses the same and its pieces join up
 * to the same bytes. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "jcs/jcs.h"

static int join(void *ctx, const char *data, size_t len)
{
	return kw_buf_append(ctx, data, len);
}

/* The stream's verdict and bytes against the one-shot ones (rc, once). */
static void check_stream(const char *text, size_t size, int rc, const struct kw_buf *once)
{
	struct kw_buf joined = { 0 }, rest = { 0 };
	struct jcs_sink sink = { join, &joined, size ? (unsigned char)text[0] % 64 : 0, false };
	int src = jcs_canonicalize_stream(text, size, &rest, &sink, NULL);

	if (src != -ENOMEM && rc != -ENOMEM) {
		if (src != rc)
			abort(); /* the stream and the one-shot parse disagree */
		if (!rc && (kw_buf_append(&joined, rest.data, rest.len) == 0) &&
		    (joined.len != once->len || memcmp(joined.data, once->data, once->len)))
			abort(); /* the pieces are not the canonical form */
	}
	kw_buf_free(&joined);
	kw_buf_free(&rest);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kw_buf once = { 0 }, twice = { 0 }, dumped = { 0 };
	struct jcs_error err;
	const char *text = (const char *)data;
	json_t *tree;
	int rc;

	rc = jcs_canonicalize(text, size, &once, &err);
	check_stream(text, size, rc, &once);
	tree = jcs_parse(text, size, &err);
	if (rc == -ENOMEM || (!tree && rc == 0 && !strcmp(err.message, "out of memory")))
		goto out;
	if (rc == 0 && !tree && strstr(err.message, "NUL byte in object key"))
		goto out;
	if ((rc == 0) != (tree != NULL))
		abort(); /* the two entry points disagree on validity */
	if (rc == 0) {
		rc = jcs_canonicalize(once.data, once.len, &twice, &err);
		if (rc && !strstr(err.message, "integer outside"))
			abort(); /* canonical form is refused */
		if (!rc && (twice.len != once.len || memcmp(twice.data, once.data, once.len)))
			abort(); /* canonical form is not a fixed point */
		if (jcs_dump(tree, &dumped) == 0 &&
		    (dumped.len != once.len || memcmp(dumped.data, once.data, once.len)))
			abort(); /* the tree dumps differently from the text */
	}
out:
	json_decref(tree);
	kw_buf_free(&once);
	kw_buf_free(&twice);
	kw_buf_free(&dumped);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Attestations, on what arrives from outside: the first byte picks one, the
 * rest is its input. 0: a DSSE envelope (checked against a fixed key; a
 * payload that verifies goes through the in-toto statement check and the
 * subject lookup); 1: decision log lines, one per newline, into the session
 * summary an attestation states. Each input is its own allocation, so a
 * read past its end is caught. Property: an envelope kwitness signs over
 * the input verifies and gives the input back. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "attest/dsse.h"
#include "attest/intoto.h"
#include "attest/summary.h"
#include "jcs/jcs.h"

static struct kw_key *key;

static void envelope(const char *p, size_t n)
{
	struct kw_buf body = { 0 };
	json_t *env = jcs_parse(p, n, NULL), *st;
	char why[300];

	if (env && dsse_verify(env, DSSE_INTOTO_PAYLOAD_TYPE, key, &body, why, sizeof(why)) == 0 &&
	    (st = jcs_parse(body.data ? body.data : "", body.len, NULL))) {
		if (!intoto_check(st, why, sizeof(why)))
			(void)intoto_subject_with(st, "sha256:0000000000000000000000000000000000000000000000000000000000000000");
		json_decref(st);
	}
	json_decref(env);
	/* Round trip: the input signed here verifies and comes back whole. */
	env = dsse_sign(DSSE_INTOTO_PAYLOAD_TYPE, p, n, key);
	if (!env || dsse_verify(env, DSSE_INTOTO_PAYLOAD_TYPE, key, &body, why, sizeof(why)) ||
	    body.len != n || (n && memcmp(body.data, p, n)))
		abort();
	json_decref(env);
	kw_buf_free(&body);
}

static void lines(const char *p, size_t n)
{
	struct attest_summary s;
	const char *end = p + n;

	if (attest_summary_init(&s))
		return;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *line = malloc(len + 1);

		if (!line)
			break;
		memcpy(line, p, len);
		line[len] = 0;
		(void)attest_summary_entry(&s, line, len);
		free(line);
		p += len + 1;
	}
	attest_summary_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t seed[32] = { 7 };
	char *in;

	if (!key && kw_key_from_seed(seed, &key))
		abort();
	if (size < 1)
		return 0;
	in = malloc(size - 1 ? size - 1 : 1);
	if (!in)
		return 0;
	memcpy(in, data + 1, size - 1);
	if (data[0] % 2 == 0)
		envelope(in, size - 1);
	else
		lines(in, size - 1);
	free(in);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The tool transcript: SHA-256 of "[" + canonical entries joined by "," + "]",
 * streamed (the collector, one entry at a time) or read back from a log. */
#ifndef KWITNESS_COLLECTOR_TRANSCRIPT_H
#define KWITNESS_COLLECTOR_TRANSCRIPT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/digest.h"

/* Entries are short (about 200 bytes): they are gathered here and hashed a
 * few kilobytes at a time, not with two digest calls per entry. */
#define KW_TRANSCRIPT_STAGE 4096

struct kw_transcript {
	struct kw_digest digest;
	uint64_t count;
	size_t staged;
	unsigned char stage[KW_TRANSCRIPT_STAGE];
};
int kw_transcript_init(struct kw_transcript *t);
/* entry: one canonical JSON entry (no newline). */
int kw_transcript_append(struct kw_transcript *t, const char *entry, size_t len);
/* lines: whole log lines, each one canonical entry ending in '\n', hashed as
 * entries. Overwrites each '\n' with ',' (for a caller done with the bytes,
 * such as a log chunk already written): one hash update per chunk, no copy.
 * -EINVAL when the last byte is not '\n'. */
int kw_transcript_append_lines(struct kw_transcript *t, char *lines, size_t len);
int kw_transcript_final(struct kw_transcript *t, char hash[KW_DIGEST_STR_MAX], uint64_t *count);
/* The hash kw_transcript_final would give if the transcript ended here, from
 * a copy of the running digest: t goes on. With *count, the entries so far.
 * 0 or -errno. */
int kw_transcript_prefix(const struct kw_transcript *t, char hash[KW_DIGEST_STR_MAX],
			 uint64_t *count);
/* Reads decisions from text: a JSON array, or JSON Lines (one value per
 * non-empty line), canonicalises each entry and hashes the transcript.
 * Returns 0, or -EINVAL with a message in err. */
int kw_transcript_from_text(const char *text, size_t len, char hash[KW_DIGEST_STR_MAX],
			    uint64_t *count, char *err, size_t errlen);

#endif

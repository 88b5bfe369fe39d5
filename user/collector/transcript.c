/* SPDX-License-Identifier: Apache-2.0 */
/* The tool transcript: SHA-256 of "[" + canonical entries joined by "," + "]",
 * which is exactly the RFC 8785 form of the decision array, hashed while the
 * entries stream past so a long log never has to be held twice. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jcs/jcs.h"
#include "collector/transcript.h"

int kw_transcript_init(struct kw_transcript *t)
{
	int ret;

	t->count = 0;
	t->staged = 0;
	ret = kw_digest_init(&t->digest, KW_SHA256);
	if (ret)
		return ret;
	t->stage[t->staged++] = '[';
	return 0;
}

static int transcript_flush(struct kw_transcript *t)
{
	int ret = kw_digest_update(&t->digest, t->stage, t->staged);

	t->staged = 0;
	return ret;
}

int kw_transcript_append(struct kw_transcript *t, const char *entry, size_t len)
{
	int ret;

	if (len + 1 > KW_TRANSCRIPT_STAGE - t->staged) {
		ret = transcript_flush(t);
		if (ret)
			return ret;
	}
	if (t->count)
		t->stage[t->staged++] = ',';
	if (len + 1 > KW_TRANSCRIPT_STAGE) {
		/* an entry longer than the stage goes straight to the hash */
		ret = transcript_flush(t);
		if (!ret)
			ret = kw_digest_update(&t->digest, entry, len);
		if (ret)
			return ret;
	} else {
		memcpy(t->stage + t->staged, entry, len);
		t->staged += len;
	}
	t->count++;
	return 0;
}

int kw_transcript_append_lines(struct kw_transcript *t, char *lines, size_t len)
{
	uint64_t n = 0;
	char *p = lines, *end = lines + len, *nl;
	int ret;

	if (!len)
		return 0;
	if (lines[len - 1] != '\n')
		return -EINVAL;
	/* the stage ends with '[' (first entry) or the last entry: one
	 * separator, then the lines go to the hash in place, each newline
	 * standing for the comma that joins it to the next entry */
	if (t->count && t->staged == KW_TRANSCRIPT_STAGE) {
		ret = transcript_flush(t);
		if (ret)
			return ret;
	}
	if (t->count)
		t->stage[t->staged++] = ',';
	ret = transcript_flush(t);
	if (ret)
		return ret;
	while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
		*nl = ',';
		n++;
		p = nl + 1;
	}
	ret = kw_digest_update(&t->digest, lines, len - 1);
	if (ret)
		return ret;
	t->count += n;
	return 0;
}

int kw_transcript_final(struct kw_transcript *t, char hash[KW_DIGEST_STR_MAX], uint64_t *count)
{
	int ret = 0;

	if (t->staged == KW_TRANSCRIPT_STAGE)
		ret = transcript_flush(t);
	if (!ret) {
		t->stage[t->staged++] = ']';
		ret = transcript_flush(t);
	}
	if (ret) {
		kw_digest_free(&t->digest);
		return ret;
	}
	if (count)
		*count = t->count;
	return kw_digest_final(&t->digest, hash);
}

int kw_transcript_prefix(const struct kw_transcript *t, char hash[KW_DIGEST_STR_MAX],
			 uint64_t *count)
{
	struct kw_digest copy;
	int ret = kw_digest_copy(&copy, &t->digest);

	if (ret)
		return ret;
	ret = kw_digest_update(&copy, t->stage, t->staged);
	if (!ret)
		ret = kw_digest_update(&copy, "]", 1);
	if (ret) {
		kw_digest_free(&copy);
		return ret;
	}
	if (count)
		*count = t->count;
	return kw_digest_final(&copy, hash);
}

/* Canonicalises one entry (a JSON object) and appends it. */
static int transcript_add_value(struct kw_transcript *t, const json_t *entry, struct kw_buf *scratch,
				const char *where, size_t index, char *err, size_t errlen)
{
	int ret;

	if (!json_is_object(entry)) {
		snprintf(err, errlen, "%s %zu: a decision entry must be a JSON object", where, index);
		return -EINVAL;
	}
	kw_buf_reset(scratch);
	ret = jcs_dump(entry, scratch);
	if (ret) {
		snprintf(err, errlen, "%s %zu: cannot canonicalise (%s)", where, index, strerror(-ret));
		return ret;
	}
	return kw_transcript_append(t, scratch->data, scratch->len);
}

static int transcript_from_array(struct kw_transcript *t, const char *text, size_t len,
				 struct kw_buf *scratch, char *err, size_t errlen)
{
	struct jcs_error jerr = { 0 };
	json_t *arr = jcs_parse(text, len, &jerr);
	size_t i;
	json_t *v;
	int ret = 0;

	if (!arr) {
		snprintf(err, errlen, "decisions: line %zu column %zu: %s", jerr.line, jerr.column,
			 jerr.message);
		return -EINVAL;
	}
	if (!json_is_array(arr)) {
		json_decref(arr);
		snprintf(err, errlen, "decisions: not a JSON array");
		return -EINVAL;
	}
	json_array_foreach(arr, i, v) {
		ret = transcript_add_value(t, v, scratch, "decisions: entry", i, err, errlen);
		if (ret)
			break;
	}
	json_decref(arr);
	return ret;
}

static bool line_is_blank(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r')
			return false;
	return true;
}

static int transcript_from_lines(struct kw_transcript *t, const char *text, size_t len,
				 struct kw_buf *scratch, char *err, size_t errlen)
{
	size_t pos = 0, lineno = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		struct jcs_error jerr = { 0 };
		json_t *v;
		int ret;

		lineno++;
		if (!line_is_blank(text + pos, n)) {
			v = jcs_parse(text + pos, n, &jerr);
			if (!v) {
				snprintf(err, errlen, "decisions: line %zu column %zu: %s", lineno,
					 jerr.column, jerr.message);
				return -EINVAL;
			}
			ret = transcript_add_value(t, v, scratch, "decisions: line", lineno, err, errlen);
			json_decref(v);
			if (ret)
				return ret;
		}
		pos += n + (nl ? 1 : 0);
	}
	return 0;
}

int kw_transcript_from_text(const char *text, size_t len, char hash[KW_DIGEST_STR_MAX],
			    uint64_t *count, char *err, size_t errlen)
{
	struct kw_transcript t;
	struct kw_buf scratch = { 0 };
	size_t i = 0;
	int ret;

	if (errlen)
		err[0] = '\0';
	ret = kw_transcript_init(&t);
	if (ret)
		return ret;
	while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
		i++;
	/* Entries are objects, so a leading '[' can only mean one JSON array. */
	if (i < len && text[i] == '[')
		ret = transcript_from_array(&t, text, len, &scratch, err, errlen);
	else
		ret = transcript_from_lines(&t, text, len, &scratch, err, errlen);
	kw_buf_free(&scratch);
	if (ret) {
		kw_digest_free(&t.digest);
		return ret;
	}
	return kw_transcript_final(&t, hash, count);
}

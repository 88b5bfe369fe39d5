/* SPDX-License-Identifier: Apache-2.0 */
/* RFC 8785 JSON Canonicalization Scheme: a strict parser that writes canonical
 * bytes, a canonical writer for jansson trees, and an emitter for the hot path. */
#ifndef KWITNESS_JCS_H
#define KWITNESS_JCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "lib/buf.h"

/* Documented nesting limit: deeper input is refused (arrays + objects). */
#define JCS_MAX_DEPTH 128
/* The largest magnitude a number may have in a document kwitness reads or
 * writes: 2^53 - 1. Doubles from 2^53 up are all integers, so the rule is
 * "no integer beyond +-(2^53-1)", whatever the spelling (docs/canonical-json.md). */
#define JCS_MAX_SAFE_INT 9007199254740991LL
/* Enough for any ECMAScript number string plus NUL ("-1.2345678901234567e-308"). */
#define JCS_NUMBER_MAX 32

/* Where and why input was refused. line and column are 1-based; column counts
 * bytes. offset is the 0-based byte offset. */
struct jcs_error {
	size_t line;
	size_t column;
	size_t offset;
	char message[160];
};

/* Parses untrusted JSON text and writes its RFC 8785 form to out (appended).
 * Refuses: invalid UTF-8, lone surrogates (also escaped), duplicate member
 * names (compared after unescaping), NaN/Infinity, numbers that overflow to
 * infinity, numbers whose magnitude exceeds JCS_MAX_SAFE_INT however they are
 * written (9007199254740992, 1e16, 9007199254740992.0), trailing content,
 * nesting deeper than JCS_MAX_DEPTH.
 * Returns 0, -EINVAL with err filled (err may be NULL), or -ENOMEM. */
int jcs_canonicalize(const char *text, size_t len, struct kw_buf *out,
		     struct jcs_error *err);

/* Where jcs_canonicalize_stream() hands output that is final. */
struct jcs_sink {
	/* Returns 0 or a negative errno, which stops the parse and is returned. */
	int (*write)(void *ctx, const char *data, size_t len);
	void *ctx;
	size_t chunk; /* hand output over once at least this much is final */
	/* The sink drops what it is given (a pass that only checks): objects'
	 * members are then handed over in input order, not rearranged. */
	bool check_only;
};

/* jcs_canonicalize() that keeps out small: whenever no object is open (between
 * the elements of arrays, which is where a large document's bulk is) and out
 * holds at least sink->chunk bytes, out's whole contents go to sink->write and
 * out is emptied. What remains at the end stays in out for the caller. A
 * refusal can come after output was handed over: to print nothing for a
 * refused document, run it once with a check_only sink, then again. Same
 * checks and bytes as jcs_canonicalize(); also returns the sink's errors. */
int jcs_canonicalize_stream(const char *text, size_t len, struct kw_buf *out,
			    const struct jcs_sink *sink, struct jcs_error *err);

/* Working memory kept between jcs_canonicalize_with() calls, so that
 * canonicalising many small documents (log lines) allocates nothing after
 * the first. Zero-initialise; release with jcs_scratch_free(). It grows to
 * what the largest document needed. */
struct jcs_scratch {
	void *members;
	size_t cap;
	struct kw_buf keys, perm;
};
int jcs_canonicalize_with(struct jcs_scratch *scratch, const char *text, size_t len,
			  struct kw_buf *out, struct jcs_error *err);
void jcs_scratch_free(struct jcs_scratch *scratch);

/* Applies every check of jcs_canonicalize() and then returns the value as a
 * jansson tree (new reference), or NULL with err filled. Use this for every
 * untrusted document that will be read member by member. */
json_t *jcs_parse(const char *text, size_t len, struct jcs_error *err);

/* Writes the RFC 8785 form of a jansson tree to out (appended). Returns 0, or
 * -EINVAL for a non-finite real, an integer or real outside +-JCS_MAX_SAFE_INT,
 * or a string that is not valid UTF-8; -ENOMEM. */
int jcs_dump(const json_t *value, struct kw_buf *out);

/* ECMAScript Number.prototype.toString of v (shortest round trip, ES exponent
 * rules, -0 -> "0"), for any finite double: the integer rule belongs to
 * documents, not to this formatter. Returns the length written to out
 * (NUL-terminated), or 0 when v is NaN or infinite. */
size_t jcs_format_double(double v, char out[JCS_NUMBER_MAX]);

/* --- Emitter: canonical JSON straight from C values, no parse. ---------------
 * The caller writes object members in RFC 8785 order (for ASCII keys that is
 * strcmp order); debug builds assert it. Strings must be UTF-8: the plain
 * writers return -EILSEQ otherwise, the _lossy writer replaces each invalid
 * byte with U+FFFD and reports that it did (kernel strings such as comm or a
 * path are bytes, not text). */
struct jcs_obj {
	struct kw_buf *out;
	bool first;
	const char *last_key; /* debug builds: the order check (same layout either way) */
};

int jcs_write_string(struct kw_buf *out, const char *s, size_t n);
/* Returns 0, 1 when a replacement happened, or -ENOMEM. */
int jcs_write_string_lossy(struct kw_buf *out, const char *s, size_t n);
/* -EINVAL outside +-JCS_MAX_SAFE_INT. */
int jcs_write_int(struct kw_buf *out, int64_t v);

int jcs_obj_begin(struct jcs_obj *o, struct kw_buf *out);
int jcs_obj_str(struct jcs_obj *o, const char *key, const char *val);
int jcs_obj_strn(struct jcs_obj *o, const char *key, const char *val, size_t n);
/* Like jcs_obj_strn but lossy; *replaced (may be NULL) is set when U+FFFD was used. */
int jcs_obj_strn_lossy(struct jcs_obj *o, const char *key, const char *val, size_t n,
		       bool *replaced);
int jcs_obj_int(struct jcs_obj *o, const char *key, int64_t v);
int jcs_obj_bool(struct jcs_obj *o, const char *key, bool v);
/* Writes the key and leaves the value to the caller (nested object/array). */
int jcs_obj_key(struct jcs_obj *o, const char *key);
int jcs_obj_end(struct jcs_obj *o);

/* --- Writers into room the caller reserved: for an emitter that reserves a
 * whole object's worst case once (kw_buf_reserve) instead of checking room
 * per member. Each returns the end of what it wrote (no NUL). */

/* Room jcs_string_at needs for n bytes: every byte a \u00xx escape, the
 * quotes, and at least 18 (short strings are stored 16 bytes at a time). */
static inline size_t jcs_string_room(size_t n)
{
	return n < 3 ? 18 : n * 6 + 2;
}
/* s[0..n) as a canonical JSON string, quotes included. Invalid UTF-8: with
 * lossy each bad byte becomes U+FFFD (*replaced, may be NULL, is set),
 * without it NULL is returned. n must be below SIZE_MAX / 6. */
char *jcs_string_at(char *o, const char *s, size_t n, bool lossy, bool *replaced);
/* v in decimal. Needs 20 bytes of room, and at least 8 even for fewer
 * digits: bytes past the digits may be written. */
char *jcs_u64_at(char *o, uint64_t v);

#endif

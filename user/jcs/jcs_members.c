/* SPDX-License-Identifier: Apache-2.0 */
/* Object members in canonical order: when an object closes, its members are
 * sorted by their names' UTF-16 code units, duplicates refused, and the
 * object's bytes rearranged only if the input order differed. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "jcs_internal.h"
#include "jcs_parser.h"

static inline int member_cmp(struct jcs_parser *ps, const struct jcs_member *a, const struct jcs_member *b)
{
	if (a->prefix != b->prefix)
		return a->prefix < b->prefix ? -1 : 1;
	return jcs_utf16_cmp(jcs_key_of(ps, a), a->key_len, jcs_key_of(ps, b), b->key_len);
}

/* memcpy for short spans that may write (and read) up to 15 bytes past n. */
static inline void copy_blocks(char *dst, const char *src, size_t n)
{
#ifdef __SSE2__
	for (size_t i = 0; i < n; i += 16)
		_mm_storeu_si128((__m128i *)(void *)(dst + i),
				 _mm_loadu_si128((const __m128i *)(const void *)(src + i)));
#else
	memcpy(dst, src, n);
#endif
}

struct sort_ctx {
	struct jcs_parser *ps;
	const struct jcs_member *m;
};

static int order_cmp_r(const void *a, const void *b, void *ctx)
{
	const struct sort_ctx *c = ctx;
	return member_cmp(c->ps, &c->m[*(const uint32_t *)a], &c->m[*(const uint32_t *)b]);
}

/* Refuses member m as a duplicate. The name goes into the message with
 * controls shown as '?' and cut at a character boundary: messages end up on
 * terminals and in logs. */
static int duplicate(struct jcs_parser *ps, const struct jcs_member *m)
{
	const unsigned char *k = (const unsigned char *)jcs_key_of(ps, m);
	char name[64];
	size_t n = m->key_len < 60 ? m->key_len : 60;
	if (n < m->key_len)
		while (n > 0 && (k[n] & 0xC0) == 0x80)
			n--;
	for (size_t i = 0; i < n; i++)
		name[i] = k[i] < 0x20 || k[i] == 0x7f ? '?' : (char)k[i];
	name[n] = '\0';
	return jcs_fail(ps, ps->begin + m->in_off, "duplicate member name \"%s%s\"", name,
		    n < m->key_len ? "..." : "");
}

/* Sorts the members of the object that just closed, refuses duplicate
 * names and rewrites the object's bytes in canonical order. */
int jcs_finish_object(struct jcs_parser *ps, size_t base)
{
	const struct jcs_member *m = ps->m + base;
	size_t n = ps->m_len - base;
	bool sorted = true;
	for (size_t i = 1; i < n; i++) {
		int c = member_cmp(ps, &m[i - 1], &m[i]);
		if (c == 0)
			return duplicate(ps, &m[i]);
		if (c > 0)
			sorted = false;
	}
	if (sorted)
		return 0;
	if (n > UINT32_MAX)
		return -ENOMEM;

	/* Sort indexes, not the members themselves. */
	uint32_t small[32], *ord = small;
	if (n > 32 && !(ord = malloc(n * sizeof(*ord))))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		ord[i] = i;
	if (n <= 24) {
		for (size_t i = 1; i < n; i++) {
			uint32_t t = ord[i];
			size_t j = i;
			while (j > 0 && member_cmp(ps, &m[ord[j - 1]], &m[t]) > 0) {
				ord[j] = ord[j - 1];
				j--;
			}
			ord[j] = t;
		}
	} else {
		struct sort_ctx ctx = { ps, m };
		qsort_r(ord, n, sizeof(*ord), order_cmp_r, &ctx);
	}
	int rc = 0;
	size_t dup = SIZE_MAX;
	for (size_t i = 1; i < n; i++)
		if (member_cmp(ps, &m[ord[i - 1]], &m[ord[i]]) == 0) {
			/* Report the later of the equal names, the first such. */
			size_t a = m[ord[i - 1]].in_off, b = m[ord[i]].in_off;
			size_t later = a > b ? a : b;
			if (later < dup)
				dup = later;
		}
	if (dup != SIZE_MAX) {
		const struct jcs_member *d = NULL;
		for (size_t i = 0; i < n && !d; i++)
			if (m[i].in_off == dup)
				d = &m[i];
		rc = duplicate(ps, d);
		goto out;
	}
	if (ps->sink && ps->sink->check_only)
		goto out; /* the bytes are dropped: their order does not matter */

	size_t region = m[0].start, region_len = m[n - 1].end - region;
	kw_buf_reset(&ps->perm);
	/* 16 bytes of slack on both sides: members are copied in whole
	 * 16-byte blocks, the overshoot lands where the next member or the
	 * closing brace will be written. */
	if (kw_buf_append(&ps->perm, ps->out->data + region, region_len) ||
	    kw_buf_reserve(&ps->perm, 16) || kw_buf_reserve(ps->out, 16)) {
		rc = -ENOMEM;
		goto out;
	}
	char *o = ps->out->data + region;
	for (size_t i = 0; i < n; i++) {
		const struct jcs_member *x = &m[ord[i]];
		if (i)
			*o++ = ',';
		size_t len = x->end - x->start;
		copy_blocks(o, ps->perm.data + (x->start - region), len);
		o += len;
	}
out:
	if (ord != small)
		free(ord);
	return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* ECMAScript Number.prototype.toString for IEEE-754 doubles (RFC 8785
 * section 3.2.2.3): the shortest digit string that reads back as the same
 * double, the closest one when several have that length (the even one on a
 * tie), laid out with the ECMAScript exponent rules.
 *
 * The digits come from glibc's correctly rounded printf and strtod: the
 * correctly rounded p-digit decimal is the closest p-digit decimal to v, so the
 * smallest p whose rounding reads back as v gives ECMAScript's digits. One
 * exception is handled: at a power of two the gap below v is half the gap
 * above, so a p-digit decimal just above v may read back when the closest one
 * (below) does not. Only digits and exponents pass through printf and strtod,
 * never a decimal point, so the locale does not matter. Integers below 2^53
 * (most numbers kwitness meets) take a direct path. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jcs/jcs.h"
#include "jcs_internal.h"

size_t jcs_number_layout(bool neg, const char *d, int k, int n, char *out)
{
	char *p = out;
	if (neg)
		*p++ = '-';
	if (k <= n && n <= 21) {
		/* Integer: digits then n - k zeros. */
		memcpy(p, d, (size_t)k);
		p += k;
		for (int i = k; i < n; i++)
			*p++ = '0';
	} else if (0 < n && n <= 21) {
		memcpy(p, d, (size_t)n);
		p += n;
		*p++ = '.';
		memcpy(p, d + n, (size_t)(k - n));
		p += k - n;
	} else if (-6 < n && n <= 0) {
		*p++ = '0';
		*p++ = '.';
		for (int i = 0; i < -n; i++)
			*p++ = '0';
		memcpy(p, d, (size_t)k);
		p += k;
	} else {
		int e = n - 1;
		*p++ = d[0];
		if (k > 1) {
			*p++ = '.';
			memcpy(p, d + 1, (size_t)(k - 1));
			p += k - 1;
		}
		*p++ = 'e';
		*p++ = e < 0 ? '-' : '+';
		p += jcs_put_u64((uint64_t)(e < 0 ? -e : e), p);
	}
	*p = '\0';
	return (size_t)(p - out);
}

/* Reads "d.ddde[+-]X" digits into d (no dot) and returns the exponent. */
static int parse_sci(const char *s, char *d, int *k)
{
	int n = 0;
	/* Digits only: the decimal point is whatever the locale says. */
	for (; *s && *s != 'e'; s++)
		if (*s >= '0' && *s <= '9')
			d[n++] = *s;
	*k = n;
	return atoi(s + 1);
}

/* Does d[0..k) * 10^(e - k + 1) read back as v? */
static bool reads_back(const char *d, int k, int e, double v)
{
	char s[48];
	char *p = s;
	memcpy(p, d, (size_t)k);
	p += k;
	*p++ = 'e';
	snprintf(p, sizeof(s) - (size_t)(p - s), "%d", e - k + 1);
	return strtod(s, NULL) == v;
}

/* Rounds the 17 correctly rounded digits d17 (exponent e17) to p digits
 * into d; returns the exponent (it grows when rounding carries out). */
static int round_digits(double v, const char *d17, int e17, int p, char *d)
{
	memcpy(d, d17, (size_t)p);
	if (p >= 17)
		return e17; /* nothing to round */
	const char *tail = d17 + p;
	int tl = 17 - p;
	bool half = tail[0] == '5';
	for (int i = 1; half && i < tl; i++)
		half = tail[i] == '0';
	if (half) {
		/* 17 digits cannot tell whether v is above, below or at the
		 * midpoint: ask printf for exactly p digits. */
		char s[40];
		int k;
		snprintf(s, sizeof(s), "%.*e", p - 1, v);
		return parse_sci(s, d, &k);
	}
	if (tail[0] < '5')
		return e17;
	int i = p - 1;
	while (i >= 0 && d[i] == '9')
		d[i--] = '0';
	if (i >= 0) {
		d[i]++;
		return e17;
	}
	d[0] = '1'; /* 99..9 -> 100..0 */
	return e17 + 1;
}

/* The shortest digits for v (> 0, finite): fills d, *k, returns n. */
static int shortest_digits(double v, char *d, int *k)
{
	char s[40], d17[20];
	int k17;
	snprintf(s, sizeof(s), "%.16e", v);
	int e17 = parse_sci(s, d17, &k17);

	uint64_t bits;
	memcpy(&bits, &v, sizeof(bits));
	bool pow2 = (bits & ((1ULL << 52) - 1)) == 0;

	int best = 17, best_e = e17;
	char cand[20];
	if (!pow2) {
		/* The gaps either side of v are equal, so whether the closest
		 * p-digit decimal reads back is monotone in p: search for the
		 * smallest p by bisection. */
		int lo = 1, hi = 17, mid = 15;
		/* Short decimals rarely get here (the parser formats literals of
		 * up to 15 digits itself), so the first probe is at 15. */
		for (; lo < hi; mid = (lo + hi) / 2) {
			int e = round_digits(v, d17, e17, mid, cand);
			if (reads_back(cand, mid, e, v))
				hi = mid;
			else
				lo = mid + 1;
		}
		best = lo;
		best_e = round_digits(v, d17, e17, best, d);
	} else {
		for (int p = 1; p <= 17; p++) {
			int e = round_digits(v, d17, e17, p, cand);
			if (reads_back(cand, p, e, v)) {
				best = p;
				best_e = e;
				memcpy(d, cand, (size_t)p);
				break;
			}
			/* The closest is below v: the next p-digit decimal up may
			 * fall in the wider gap above v. */
			char up[20];
			memcpy(up, cand, (size_t)p);
			int ue = e, i = p - 1;
			while (i >= 0 && up[i] == '9')
				up[i--] = '0';
			if (i >= 0) {
				up[i]++;
			} else {
				up[0] = '1';
				ue++;
			}
			if (reads_back(up, p, ue, v)) {
				/* Only valid when the rounding was below v. */
				char below[48];
				snprintf(below, sizeof(below), "%.*se%d", p, cand, e - p + 1);
				if (strtod(below, NULL) < v) {
					best = p;
					best_e = ue;
					memcpy(d, up, (size_t)p);
					break;
				}
			}
		}
	}
	while (best > 1 && d[best - 1] == '0')
		best--;
	*k = best;
	return best_e + 1;
}

/* Common cases of both: NaN/Infinity (0), zero, integers below 2^53. */
static size_t format_simple(double v, char out[JCS_NUMBER_MAX], bool *done)
{
	*done = true;
	if (!isfinite(v)) {
		out[0] = '\0';
		return 0;
	}
	if (v == 0) { /* also -0 */
		out[0] = '0';
		out[1] = '\0';
		return 1;
	}
	double a = v < 0 ? -v : v;
	if (a < 9007199254740992.0 && a == (double)(uint64_t)a) {
		char *p = out;
		if (v < 0)
			*p++ = '-';
		p += jcs_put_u64((uint64_t)a, p);
		*p = '\0';
		return (size_t)(p - out);
	}
	*done = false;
	return 0;
}

size_t jcs_format_double(double v, char out[JCS_NUMBER_MAX])
{
	bool done;
	size_t n = format_simple(v, out, &done);
	if (done)
		return n;
	char d[20];
	int k;
	int e = shortest_digits(v < 0 ? -v : v, d, &k);
	return jcs_number_layout(v < 0, d, k, e, out);
}

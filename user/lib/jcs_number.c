/* SPDX-License-Identifier: Apache-2.0 */
/* ECMAScript Number.prototype.toString for IEEE-754 doubles (RFC 8785
 * section 3.2.2.3): the shortest digit string that reads back as the same
 * double, the closest one when several have that length (the even one on a
 * tie), laid out with the ECMAScript exponent rules.
 *
 * jcs_format_double() finds the digits with the Ryu algorithm (Ulf Adams,
 * "Ryu: fast float-to-string conversion", PLDI 2018; its reference code is
 * Apache-2.0), implemented here in its published structure: the rounding
 * interval of v is scaled by a power of ten held in 125 bits, then digits are
 * removed while the interval still tells the candidates apart, tracking exact
 * values where they can occur so bounds and ties (to even) are right. The two
 * tables of powers of five are not stored but computed once, exactly, with a
 * small big-number routine.
 *
 * jcs_format_double_reference() gets the same answer another way, from
 * glibc's correctly rounded printf and strtod: the correctly rounded p-digit
 * decimal is the closest p-digit decimal to v, so the smallest p whose
 * rounding reads back as v gives ECMAScript's digits. One exception is
 * handled: at a power of two the gap below v is half the gap above, so a
 * p-digit decimal just above v may read back when the closest one (below)
 * does not. Only digits and exponents pass through printf and strtod, never
 * a decimal point, so the locale does not matter. It is about twenty times
 * slower and serves the tests as an independent oracle. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kwitness/jcs.h"
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
		int lo = 1, hi = 17;
		while (lo < hi) {
			int mid = (lo + hi) / 2;
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

size_t jcs_format_double_reference(double v, char out[JCS_NUMBER_MAX])
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

/* --- Ryu ----------------------------------------------------------------- */

typedef unsigned __int128 u128;

#define POW5_INV_BITS 125
#define POW5_BITS 125
#define POW5_INV_COUNT 342 /* 10^q for the largest doubles */
#define POW5_COUNT 326     /* 5^i for the smallest */

/* 2^k / 5^q rounded up, and 5^i, each to 125 bits, as {low, high} words. */
static uint64_t pow5_inv[POW5_INV_COUNT][2];
static uint64_t pow5[POW5_COUNT][2];
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

/* Bit length of 5^e (e >= 0), log10(2^e), log10(5^e): exact in the ranges used. */
static inline int32_t pow5_bits(int32_t e)
{
	return ((e * 1217359) >> 19) + 1;
}

static inline uint32_t log10_pow2(int32_t e)
{
	return (uint32_t)((e * 78913) >> 18);
}

static inline uint32_t log10_pow5(int32_t e)
{
	return (uint32_t)((e * 732923) >> 20);
}

/* Big numbers for building the tables: little-endian 32-bit limbs. */
#define BIG_LIMBS 36 /* 1152 bits */
#define BIG_TOP 1100 /* 2^BIG_TOP / 5^q keeps every bit the table needs */

struct big {
	uint32_t l[BIG_LIMBS];
};

static void big_mul5(struct big *b)
{
	uint64_t c = 0;
	for (int i = 0; i < BIG_LIMBS; i++) {
		c += (uint64_t)b->l[i] * 5;
		b->l[i] = (uint32_t)c;
		c >>= 32;
	}
}

static void big_div5(struct big *b)
{
	uint64_t r = 0;
	for (int i = BIG_LIMBS - 1; i >= 0; i--) {
		uint64_t cur = r << 32 | b->l[i];
		b->l[i] = (uint32_t)(cur / 5);
		r = cur % 5;
	}
}

static int big_bit_length(const struct big *b)
{
	for (int i = BIG_LIMBS - 1; i >= 0; i--)
		if (b->l[i])
			return i * 32 + 32 - __builtin_clz(b->l[i]);
	return 0;
}

/* floor(b / 2^from) mod 2^128; a negative from shifts left. */
static u128 big_bits(const struct big *b, int from)
{
	u128 r = 0;
	for (int bit = 127; bit >= 0; bit--) {
		int at = from + bit;
		unsigned v = at >= 0 && at < BIG_LIMBS * 32 ? (b->l[at / 32] >> (at % 32)) & 1 : 0;
		r = r << 1 | v;
	}
	return r;
}

static void build_tables(void)
{
	struct big b = { { 1 } };
	for (int i = 0; i < POW5_COUNT; i++) {
		/* 5^i truncated (or padded) to exactly 125 bits. */
		u128 v = big_bits(&b, big_bit_length(&b) - POW5_BITS);
		pow5[i][0] = (uint64_t)v;
		pow5[i][1] = (uint64_t)(v >> 64);
		big_mul5(&b);
	}
	/* floor(2^n / 5^q) = floor(floor(2^BIG_TOP / 5^q) / 2^(BIG_TOP - n)),
	 * and floor(2^BIG_TOP / 5^q) is BIG_TOP divided by 5, q times. */
	memset(&b, 0, sizeof(b));
	b.l[BIG_TOP / 32] = 1u << (BIG_TOP % 32);
	for (int q = 0; q < POW5_INV_COUNT; q++) {
		int n = pow5_bits(q) - 1 + POW5_INV_BITS;
		u128 v = big_bits(&b, BIG_TOP - n) + 1;
		pow5_inv[q][0] = (uint64_t)v;
		pow5_inv[q][1] = (uint64_t)(v >> 64);
		big_div5(&b);
	}
}

/* (m * mul) >> j for the 128-bit mul, j >= 64. */
static inline uint64_t mul_shift(uint64_t m, const uint64_t mul[2], int32_t j)
{
	u128 lo = (u128)m * mul[0], hi = (u128)m * mul[1];
	return (uint64_t)(((lo >> 64) + hi) >> (j - 64));
}

static inline uint32_t pow5_factor(uint64_t v)
{
	uint32_t c = 0;
	while (v && v % 5 == 0) { /* v is never 0 here; no endless loop if it were */
		v /= 5;
		c++;
	}
	return c;
}

/* The shortest, closest decimal of the positive finite double with these
 * bits: v = *digits * 10^*exp10. */
static void shortest_decimal(uint64_t bits, uint64_t *digits, int32_t *exp10)
{
	uint64_t frac = bits & ((1ULL << 52) - 1);
	uint32_t bexp = (uint32_t)(bits >> 52) & 0x7FF;
	int32_t e2;
	uint64_t m2;
	if (bexp == 0) {
		e2 = 1 - 1023 - 52 - 2;
		m2 = frac;
	} else {
		e2 = (int32_t)bexp - 1023 - 52 - 2;
		m2 = (1ULL << 52) | frac;
	}
	/* The interval of reals that read back as v, times 4: (mm, mp) around
	 * mv, bounds included when the significand is even (ties to even). The
	 * gap below is half as wide at a power of two (mm_shift = 0). */
	bool accept_bounds = (m2 & 1) == 0;
	uint64_t mv = 4 * m2;
	uint32_t mm_shift = frac != 0 || bexp <= 1;
	uint64_t vr, vp, vm;
	int32_t e10;
	bool vm_trailing_zeros = false, vr_trailing_zeros = false;

	if (e2 >= 0) {
		uint32_t q = log10_pow2(e2) - (e2 > 3);
		e10 = (int32_t)q;
		int32_t k = POW5_INV_BITS + pow5_bits((int32_t)q) - 1;
		int32_t i = -e2 + (int32_t)q + k;
		vr = mul_shift(mv, pow5_inv[q], i);
		vp = mul_shift(mv + 2, pow5_inv[q], i);
		vm = mul_shift(mv - 1 - mm_shift, pow5_inv[q], i);
		if (q <= 21) {
			/* Only here can the scaled values be exact: find out. */
			if (mv % 5 == 0)
				vr_trailing_zeros = pow5_factor(mv) >= q;
			else if (accept_bounds)
				vm_trailing_zeros = pow5_factor(mv - 1 - mm_shift) >= q;
			else
				vp -= pow5_factor(mv + 2) >= q;
		}
	} else {
		uint32_t q = log10_pow5(-e2) - (-e2 > 1);
		e10 = (int32_t)q + e2;
		int32_t i = -e2 - (int32_t)q;
		int32_t k = pow5_bits(i) - POW5_BITS;
		int32_t j = (int32_t)q - k;
		vr = mul_shift(mv, pow5[i], j);
		vp = mul_shift(mv + 2, pow5[i], j);
		vm = mul_shift(mv - 1 - mm_shift, pow5[i], j);
		if (q <= 1) {
			vr_trailing_zeros = true;
			if (accept_bounds)
				vm_trailing_zeros = mm_shift == 1;
			else
				--vp;
		} else if (q < 63) {
			vr_trailing_zeros = (mv & ((1ULL << q) - 1)) == 0;
		}
	}

	/* Remove digits while the interval still holds two candidates. */
	int32_t removed = 0;
	unsigned last = 0;
	uint64_t out;
	if (vm_trailing_zeros || vr_trailing_zeros) {
		/* Exact values involved (rare): track them for bounds and ties. */
		while (vp / 10 > vm / 10) {
			vm_trailing_zeros &= vm % 10 == 0;
			vr_trailing_zeros &= last == 0;
			last = (unsigned)(vr % 10);
			vr /= 10;
			vp /= 10;
			vm /= 10;
			removed++;
		}
		if (vm_trailing_zeros) {
			while (vm % 10 == 0) {
				vr_trailing_zeros &= last == 0;
				last = (unsigned)(vr % 10);
				vr /= 10;
				vp /= 10;
				vm /= 10;
				removed++;
			}
		}
		if (vr_trailing_zeros && last == 5 && vr % 2 == 0)
			last = 4; /* exactly halfway: to even */
		out = vr + ((vr == vm && (!accept_bounds || !vm_trailing_zeros)) || last >= 5);
	} else {
		bool round_up = false;
		while (vp / 10 > vm / 10) {
			round_up = vr % 10 >= 5;
			vr /= 10;
			vp /= 10;
			vm /= 10;
			removed++;
		}
		out = vr + (vr == vm || round_up);
	}
	*digits = out;
	*exp10 = e10 + removed;
}

size_t jcs_format_double(double v, char out[JCS_NUMBER_MAX])
{
	bool done;
	size_t n = format_simple(v, out, &done);
	if (done)
		return n;
	pthread_once(&tables_once, build_tables);
	uint64_t bits, digits;
	int32_t e10;
	memcpy(&bits, &v, sizeof(bits));
	shortest_decimal(bits & ~(1ULL << 63), &digits, &e10);
	char d[24];
	int k = (int)jcs_put_u64(digits, d);
	while (k > 1 && d[k - 1] == '0') {
		k--;
		e10++;
	}
	return jcs_number_layout(v < 0, d, k, e10 + k, out);
}

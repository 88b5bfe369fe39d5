/* SPDX-License-Identifier: Apache-2.0 */
/* PCR selections: one SHA-256 bank, written "sha256:0,1,2" or "sha256:0-7". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tpm/tpm.h"

static int bad(char *err, size_t errlen, const char *s, const char *why)
{
	snprintf(err, errlen, "PCR selection '%.64s': %s", s, why);
	return -EINVAL;
}

static int parse_index(const char **p, unsigned *out)
{
	char *end;
	unsigned long v;

	if (**p < '0' || **p > '9')
		return -EINVAL;
	v = strtoul(*p, &end, 10);
	if (end - *p > 2 || v >= KW_TPM_PCR_COUNT)
		return -EINVAL;
	*p = end;
	*out = (unsigned)v;
	return 0;
}

int kw_pcr_selection_parse(const char *s, struct kw_pcr_selection *out, char *err, size_t errlen)
{
	const char *p;
	unsigned lo, hi;

	out->mask = 0;
	if (!s || strncmp(s, "sha256:", 7))
		return bad(err, errlen, s ? s : "", "must start with sha256: (the only bank supported)");
	p = s + 7;
	for (;;) {
		if (parse_index(&p, &lo))
			return bad(err, errlen, s, "expected a PCR index 0..23");
		hi = lo;
		if (*p == '-') {
			p++;
			if (parse_index(&p, &hi) || hi < lo)
				return bad(err, errlen, s, "bad range (expected LOW-HIGH within 0..23)");
		}
		for (unsigned i = lo; i <= hi; i++)
			out->mask |= 1u << i;
		if (*p == '\0')
			break;
		if (*p != ',')
			return bad(err, errlen, s, "expected ',' between PCR indexes");
		p++;
	}
	return 0;
}

void kw_pcr_selection_format(const struct kw_pcr_selection *sel, char *out, size_t outlen)
{
	size_t n = (size_t)snprintf(out, outlen, "sha256:");
	bool first = true;

	for (unsigned i = 0; i < KW_TPM_PCR_COUNT && n < outlen; i++) {
		if (!(sel->mask & (1u << i)))
			continue;
		n += (size_t)snprintf(out + n, outlen - n, "%s%u", first ? "" : ",", i);
		first = false;
	}
}

unsigned kw_pcr_selection_count(const struct kw_pcr_selection *sel)
{
	return (unsigned)__builtin_popcount(sel->mask);
}

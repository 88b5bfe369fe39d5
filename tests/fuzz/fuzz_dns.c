/* SPDX-License-Identifier: Apache-2.0 */
/* DNS messages as kwitnessd's resolver meets them: a query from a sandbox
 * (parsed, then answered REFUSED) and an upstream's response (parsed against
 * the query it answers, and against a fixed question). Checks the parsers'
 * promises: names are bounded and NUL-terminated, counts within bounds, a
 * reply is the question's length. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/dns_wire.h"

static void check_answer(const struct kw_dns_answer *a)
{
	if (a->n_addrs > KW_DNS_MAX_ADDRS || a->n_cnames > KW_DNS_MAX_CNAMES)
		abort();
	for (size_t i = 0; i < a->n_addrs; i++)
		if (a->addrs[i].family != 4 && a->addrs[i].family != 6)
			abort();
	for (size_t i = 0; i < a->n_cnames; i++)
		if (strnlen(a->cnames[i], KW_NAME_MAX + 1) > KW_NAME_MAX)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t fixed[] = { 0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
					 3, 'a', 'p', 'i', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e',
					 3, 'o', 'r', 'g', 0, 0, 1, 0, 1 };
	struct kw_dns_question q, fq;
	struct kw_dns_answer *a = malloc(sizeof(*a));
	uint8_t reply[KW_DNS_MSG_MAX];
	const char *why;

	if (!a)
		return 0;
	if (kw_dns_parse_query(data, size, &q, &why) == 0) {
		if (q.end > size || strnlen(q.name, sizeof(q.name)) > KW_NAME_MAX)
			abort();
		if (kw_dns_reply_rcode(data, &q, KW_DNS_REFUSED, reply, sizeof(reply)) != q.end)
			abort();
		if (kw_dns_parse_query(reply, q.end, &fq, &why) == 0)
			abort(); /* a reply is never taken for a query */
		/* the input as an answer to itself */
		if (kw_dns_parse_answer(data, size, &q, a, &why) == 0)
			check_answer(a);
	} else if (!why) {
		abort();
	}
	if (kw_dns_parse_query(fixed, sizeof(fixed), &fq, &why))
		abort();
	if (kw_dns_parse_answer(data, size, &fq, a, &why) == 0)
		check_answer(a);
	else if (!why)
		abort();
	free(a);
	return 0;
}

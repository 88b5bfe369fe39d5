/* SPDX-License-Identifier: Apache-2.0 */
/* estate ingest and estate verify: every gap in a host's TPM counter
 * sequence, one "missing:" line each (estate/gaps.h). */
#include <inttypes.h>
#include <stdio.h>

#include "estate/gaps.h"
#include "lib/text_safe.h"
#include "estate_cli.h"

static void print_gap(void *ctx, const struct estate_gap *g)
{
	char line[1024];

	(void)ctx;
	estate_gap_text(g, line, sizeof(line));
	kw_text_fput(stdout, line); /* host names are the host's word */
	putchar('\n');
}

int cli_estate_print_gaps(struct estate_db *db, const char *cmd, uint64_t *n)
{
	char err[600];

	if (estate_counter_gaps(db, print_gap, NULL, n, err, sizeof(err))) {
		fprintf(stderr, "kwitness %s: counter gaps not checked: %s\n", cmd, err);
		return -1;
	}
	if (*n)
		printf("counter gaps: %" PRIu64 " (sessions that took a TPM counter value and are not stored)\n", *n);
	return 0;
}

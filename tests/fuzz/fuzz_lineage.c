/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness log tree's reader (user/trace/lineage.c): any bytes as a decision
 * log, forged proc entries included (a parent cycle, a self parent, refs
 * that are not strings, huge argv, NULs). It must not crash, leak or loop.
 * The same bytes as a /proc/PID/stat line (kwitnessd reads a sandbox
 * process's, whose comm it chose): the start time parser must not read
 * past them. */
#include <stdint.h>
#include <stdio.h>

#include "collector/proc_stat.h"
#include "trace/lineage.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *in, *out;

	unsigned long long ticks;

	if (!size)
		return 0;
	kw_proc_stat_starttime((const char *)data, size, &ticks);
	in = fmemopen((void *)data, size, "r");
	out = fopen("/dev/null", "w");
	if (in && out)
		kw_log_tree(in, "fuzz", out);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	return 0;
}

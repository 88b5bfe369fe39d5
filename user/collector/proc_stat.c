// SPDX-License-Identifier: Apache-2.0
/* See proc_stat.h. */
#include <errno.h>
#include <limits.h>

#include "collector/proc_stat.h"

int kw_proc_stat_starttime(const char *buf, size_t n, unsigned long long *ticks)
{
	size_t i, end = n;
	unsigned long long v = 0;
	int field = 2;

	while (end > 0 && buf[end - 1] != ')')
		end--;
	if (!end)
		return -EINVAL;
	/* after comm: " S ppid ..."; field 22 follows the 20th space */
	for (i = end; i < n && field < 22; i++)
		if (buf[i] == ' ')
			field++;
	if (field < 22 || i >= n || buf[i] < '0' || buf[i] > '9')
		return -EINVAL;
	for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) {
		if (v > (ULLONG_MAX - (unsigned)(buf[i] - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (unsigned)(buf[i] - '0');
	}
	if (i < n && buf[i] != ' ' && buf[i] != '\n')
		return -EINVAL;
	*ticks = v;
	return 0;
}

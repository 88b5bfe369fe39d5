/* SPDX-License-Identifier: Apache-2.0 */
/* TRACE levels, see kwitness/level.h. */
#include <string.h>

#include "trace/level.h"

static const char *const names[] = {
	[KW_LEVEL_0] = "Level 0",
	[KW_LEVEL_0_LOGGED] = "Level 0, logged",
	[KW_LEVEL_1] = "Level 1",
	[KW_LEVEL_2] = "Level 2",
};

enum kw_level kw_level_of(bool tpm, bool logged)
{
	if (tpm)
		return logged ? KW_LEVEL_2 : KW_LEVEL_1;
	return logged ? KW_LEVEL_0_LOGGED : KW_LEVEL_0;
}

int kw_level_number(enum kw_level l)
{
	return l == KW_LEVEL_2 ? 2 : l == KW_LEVEL_1 ? 1 : 0;
}

const char *kw_level_name(enum kw_level l)
{
	return (unsigned)l < sizeof(names) / sizeof(names[0]) ? names[l] : names[KW_LEVEL_0];
}

int kw_level_parse(const char *name)
{
	for (unsigned i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return (int)i;
	return -1;
}

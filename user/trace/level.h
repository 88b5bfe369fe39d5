/* SPDX-License-Identifier: Apache-2.0 */
/* The TRACE level a verified record reaches. Levels build on each other:
 * Level 1 is appraised TPM evidence; Level 2 is Level 1 and a record whose
 * inclusion in a witnessed transparency log was checked offline. A logged
 * record without Level 1 is "Level 0, logged", never Level 2. `kwitness
 * verify` and the estate database both name levels through this. */
#ifndef KWITNESS_LEVEL_H
#define KWITNESS_LEVEL_H

#include <stdbool.h>

enum kw_level { KW_LEVEL_0, KW_LEVEL_0_LOGGED, KW_LEVEL_1, KW_LEVEL_2 };

/* tpm: every appraisal step held; logged: every transparency step held. */
enum kw_level kw_level_of(bool tpm, bool logged);
/* 0, 0, 1, 2. */
int kw_level_number(enum kw_level l);
/* "Level 0", "Level 0, logged", "Level 1", "Level 2". */
const char *kw_level_name(enum kw_level l);
/* The level a name above gives; -1 for any other text. */
int kw_level_parse(const char *name);

#endif

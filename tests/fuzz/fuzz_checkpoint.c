/* SPDX-License-Identifier: Apache-2.0 */
/* A checkpoint line read back (kw_checkpoint_read): kwitness verify and a
 * restarted collector read checkpoint files that anyone with root could
 * have edited. Any bytes: no crash, no overread; a line accepted is
 * canonical, and signing its parsed checkpoint again gives the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "collector/checkpoint.h"
#include "trace/key.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kw_key *key;
	struct kw_checkpoint c;
	struct kw_buf again = { 0 };
	char hash[KW_DIGEST_STR_MAX], hash2[KW_DIGEST_STR_MAX], why[256];
	char *line;

	if (!key) {
		uint8_t seed[32];

		memset(seed, 7, sizeof(seed)); /* the corpus is signed with this key */
		if (kw_key_from_seed(seed, &key))
			abort();
	}
	line = malloc(size ? size : 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	if (kw_checkpoint_read(line, size, key, &c, hash, why, sizeof(why)) == KW_CHECKPOINT_OK) {
		/* Ed25519 is deterministic: the same members sign to the same line */
		if (kw_checkpoint_sign(&c, key, &again, hash2) || again.len != size ||
		    memcmp(again.data, line, size) || strcmp(hash, hash2))
			abort();
	}
	kw_buf_free(&again);
	free(line);
	return 0;
}

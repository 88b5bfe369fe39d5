/* SPDX-License-Identifier: Apache-2.0 */
/* A segment manifest line read back (kw_segment_read): kwitness verify,
 * estate ingest and prune read manifests that anyone with root could have
 * edited. Any bytes: no crash, no overread; a line accepted is canonical,
 * and writing its parsed segment again gives the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "trace/logsegment.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kw_segment s;
	struct kw_buf again = { 0 };
	char *line = malloc(size ? size : 1);

	if (!line)
		return 0;
	memcpy(line, data, size);
	if (kw_segment_read(line, size, &s) == 0) {
		if (kw_segment_line(&s, &again) || again.len != size || memcmp(again.data, line, size))
			abort();
	}
	kw_buf_free(&again);
	free(line);
	return 0;
}

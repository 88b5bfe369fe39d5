/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness oci-hook's pod identity (user/cli/oci_identity.c) over hostile
 * config.json annotations: an accepted identity holds only bounded printable
 * ASCII names, and a sandbox id made from it is a spiffe:// URI of SPIFFE path
 * text; a refusal has a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/oci_identity.h"

static void printable(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (!n || n > max)
		abort();
	for (; *s; s++)
		if (*s < 0x21 || *s > 0x7e)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oci_identity id;
	char err[512] = "", sid[1024];
	json_error_t jerr;
	json_t *ann = json_loadb((const char *)data, size, 0, &jerr);

	if (!ann)
		return 0;
	if (oci_identity_read(ann, "c0ffee", &id, err, sizeof(err))) {
		if (!err[0])
			abort();
		json_decref(ann);
		return 0;
	}
	for (int i = 0; i < KW_WL_N; i++)
		if (id.v[i])
			printable(id.v[i], i == KW_WL_CONTAINER_IMAGE ? 1024 : 253);
	if (oci_identity_is_pod(&id)) {
		if (!oci_identity_sandbox_id(&id, OCI_DEFAULT_POD_SANDBOX_ID, sid, sizeof(sid), err,
					     sizeof(err))) {
			if (strncmp(sid, "spiffe://kwitness.local/ns/", 27))
				abort();
			for (const char *c = sid + 9; *c; c++)
				if (!(strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					     "0123456789.-_/", *c)))
					abort();
			if (strstr(sid, "/../") || strstr(sid, "/./"))
				abort();
		} else if (!err[0]) {
			abort();
		}
	}
	json_decref(ann);
	return 0;
}

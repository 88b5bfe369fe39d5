/* SPDX-License-Identifier: Apache-2.0 */
/* A decision log line, as `kwitness log export --format ocsf` reads it from
 * a file it was given: parsed (RFC 8785 checks) and mapped to an OCSF event.
 * A decision of a known tool always maps, to an event that names its class
 * and carries the entry's bytes and hash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export/ocsf.h"
#include "jcs/jcs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct kw_ocsf_context ctx = { .session = "0123456789abcdef0123456789abcdef",
					     .record_hash = "sha256:00", .hostname = "h" };
	struct jcs_error err;
	json_t *entry = jcs_parse((const char *)data, size, &err), *ev;
	const char *tool;

	if (!entry)
		return 0;
	ev = json_is_object(entry) ? kw_ocsf_event(entry, &ctx) : NULL;
	tool = json_string_value(json_object_get(entry, "tool"));
	if (ev) {
		if (!json_integer_value(json_object_get(ev, "class_uid")) ||
		    json_integer_value(json_object_get(ev, "class_uid")) != kw_ocsf_class(tool) ||
		    !json_is_string(json_object_get(ev, "raw_data")) ||
		    !json_object_get(ev, "raw_data_hash"))
			abort();
		json_decref(ev);
	}
	json_decref(entry);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The live stream's and the exports' settings, see export_config.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tlog/http.h"
#include "export_config.h"

static int queue_size(const char *v, unsigned *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || end == v || *v == '-' || n < KWD_EXPORT_QUEUE_MIN ||
	    n > KWD_EXPORT_QUEUE_MAX)
		return -EINVAL;
	*out = (unsigned)n;
	return 0;
}

static int endpoint(struct kwd_export_config *x, const char *v)
{
	struct http_url u;

	/* plain http:// (an OpenTelemetry Collector on this host, or behind
	 * a TLS proxy): the decisions are also in the signed log */
	if (strlen(v) >= sizeof(x->otlp_endpoint) || http_url_parse(v, &u))
		return -EINVAL;
	snprintf(x->otlp_endpoint, sizeof(x->otlp_endpoint), "%s", v);
	return 0;
}

bool kwd_export_config_key(struct kwd_export_config *x, const char *key, const char *val, int *e,
			   char *err, size_t errlen, const char *file, unsigned lineno)
{
	const char *why = NULL;

	if (!strcmp(key, "watch_queue")) {
		*e = queue_size(val, &x->watch_queue);
		why = "a number of entries from 16 to 1048576";
	} else if (!strcmp(key, "otlp_queue")) {
		*e = queue_size(val, &x->otlp_queue);
		why = "a number of entries from 16 to 1048576";
	} else if (!strcmp(key, "otlp_endpoint")) {
		*e = endpoint(x, val);
		why = "an http://HOST[:PORT]/PATH URL (such as http://127.0.0.1:4318/v1/logs)";
	} else if (!strcmp(key, "otlp_decisions")) {
		*e = strcmp(val, "all") && strcmp(val, "deny") ? -EINVAL : 0;
		x->otlp_all = !strcmp(val, "all");
		why = "all or deny";
	} else {
		return false;
	}
	if (*e)
		snprintf(err, errlen, "%s:%u: %s must be %s", file, lineno, key, why);
	return true;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Control requests: strict JSON (the jcs parser's checks), a known op, and
 * for open and close every field bounded and well-formed. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/digest.h"
#include "jcs/jcs.h"
#include "policy/policy.h"
#include "client/protocol.h"

static int fail(struct kw_request_error *err, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct kw_request_error *err, const char *code, const char *fmt, ...)
{
	va_list ap;

	snprintf(err->code, sizeof(err->code), "%s", code);
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	/* Messages quote client input: keep them printable ASCII. */
	for (char *p = err->message; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
			*p = '?';
	return -EINVAL;
}

/* *out is NULL when the optional field is absent. */
static int get_str(const json_t *req, const char *key, bool required, const char **out,
		   struct kw_request_error *err)
{
	json_t *v = json_object_get(req, key);

	*out = NULL;
	if (!v)
		return required ? fail(err, KW_ERR_MISSING_FIELD, "%s: required", key) : 0;
	if (!json_is_string(v))
		return fail(err, KW_ERR_INVALID_FIELD, "%s: must be a string", key);
	if (json_string_length(v) == 0 || json_string_length(v) > KW_PROTO_MAX_FIELD ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return fail(err, KW_ERR_INVALID_FIELD, "%s: 1 to %d characters, no NUL", key,
			    KW_PROTO_MAX_FIELD);
	*out = json_string_value(v);
	return 0;
}

const char *const kw_workload_fields[KW_WL_N] = {
	[KW_WL_POD_NAMESPACE] = KW_F_POD_NAMESPACE, [KW_WL_POD_NAME] = KW_F_POD_NAME,
	[KW_WL_POD_UID] = KW_F_POD_UID, [KW_WL_POD_SANDBOX_ID] = KW_F_POD_SANDBOX_ID,
	[KW_WL_CONTAINER_NAME] = KW_F_CONTAINER_NAME, [KW_WL_CONTAINER_ID] = KW_F_CONTAINER_ID,
	[KW_WL_CONTAINER_IMAGE] = KW_F_CONTAINER_IMAGE,
};

static bool workload_field(const char *key)
{
	for (int i = 0; i < KW_WL_N; i++)
		if (!strcmp(key, kw_workload_fields[i]))
			return true;
	return false;
}

static int parse_open(const json_t *doc, struct kw_request *r, struct kw_request_error *err)
{
	static const char *const known[] = { KW_F_OP, KW_F_CGROUP, KW_F_SANDBOX_ID,
					     KW_F_IMAGE_DIGEST, KW_F_POLICY, KW_F_MODEL_PROVIDER,
					     KW_F_MODEL_ID, KW_F_DATA_CLASS, KW_F_CHECKPOINT_INTERVAL,
					     KW_F_LOG_SEGMENT_BYTES };
	const char *key;
	json_t *v, *pv;
	int e;

	if ((e = get_str(doc, KW_F_CGROUP, true, &r->cgroup, err)) ||
	    (e = get_str(doc, KW_F_SANDBOX_ID, true, &r->sandbox_id, err)))
		return e;
	if (strncmp(r->sandbox_id, "spiffe://", 9) && strncmp(r->sandbox_id, "did:", 4))
		return fail(err, KW_ERR_INVALID_FIELD, "sandbox_id: a spiffe:// or did: URI is required");
	if ((e = get_str(doc, KW_F_IMAGE_DIGEST, true, &r->image_digest, err)))
		return e;
	if (!kw_digest_valid(r->image_digest))
		return fail(err, KW_ERR_INVALID_FIELD, "image_digest: sha256:<64 hex> or sha384:<96 hex>");
	if ((e = get_str(doc, KW_F_MODEL_PROVIDER, false, &r->model_provider, err)) ||
	    (e = get_str(doc, KW_F_MODEL_ID, false, &r->model_id, err)) ||
	    (e = get_str(doc, KW_F_DATA_CLASS, false, &r->data_class, err)))
		return e;
	for (int i = 0; i < KW_WL_N; i++)
		if ((e = get_str(doc, kw_workload_fields[i], false, &r->workload[i], err)))
			return e;
	pv = json_object_get(doc, KW_F_CHECKPOINT_INTERVAL);
	r->checkpoint_interval = -1;
	if (pv && (!json_is_integer(pv) || json_integer_value(pv) < 0 ||
		   json_integer_value(pv) > 1000000000))
		return fail(err, KW_ERR_INVALID_FIELD, "checkpoint_interval: seconds, 0 to 1000000000");
	if (pv)
		r->checkpoint_interval = json_integer_value(pv);
	pv = json_object_get(doc, KW_F_LOG_SEGMENT_BYTES);
	r->log_segment_bytes = -1;
	if (pv && (!json_is_integer(pv) || json_integer_value(pv) < 0 ||
		   (json_integer_value(pv) > 0 && json_integer_value(pv) < 4096) ||
		   json_integer_value(pv) > (json_int_t)1 << 40))
		return fail(err, KW_ERR_INVALID_FIELD, "log_segment_bytes: 0 or 4096 to 2^40");
	if (pv)
		r->log_segment_bytes = json_integer_value(pv);
	pv = json_object_get(doc, KW_F_POLICY);
	if (!pv)
		return fail(err, KW_ERR_MISSING_FIELD, "policy: required (the bundle text as a string)");
	if (!json_is_string(pv))
		return fail(err, KW_ERR_INVALID_FIELD, "policy: the bundle text as a JSON string");
	if (json_string_length(pv) > KW_POLICY_MAX_BYTES)
		return fail(err, KW_ERR_POLICY_INVALID, "policy: larger than %d bytes",
			    KW_POLICY_MAX_BYTES);
	r->policy = json_string_value(pv);
	r->policy_len = json_string_length(pv);
	json_object_foreach((json_t *)doc, key, v) {
		bool ok = workload_field(key);

		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			ok = ok || !strcmp(key, known[i]);
		if (!ok)
			return fail(err, KW_ERR_UNKNOWN_FIELD, "%.64s: not an open field", key);
	}
	return 0;
}

int kw_request_parse(const char *line, size_t len, struct kw_request *req,
		     struct kw_request_error *err)
{
	struct jcs_error jerr;
	const char *op;
	json_t *doc;
	int e = 0;

	memset(req, 0, sizeof(*req));
	memset(err, 0, sizeof(*err));
	doc = jcs_parse(line, len, &jerr);
	if (!doc)
		return fail(err, KW_ERR_MALFORMED_JSON, "line %zu column %zu: %s", jerr.line,
			    jerr.column, jerr.message);
	if (!json_is_object(doc)) {
		json_decref(doc);
		return fail(err, KW_ERR_MALFORMED_REQUEST, "a request is a JSON object");
	}
	req->doc = doc;
	op = json_string_value(json_object_get(doc, KW_F_OP));
	if (!op)
		e = fail(err, KW_ERR_MISSING_FIELD, "op: a string is required");
	else if (!strcmp(op, KW_OP_OPEN)) {
		req->op = KW_REQ_OPEN;
		e = parse_open(doc, req, err);
	} else if (!strcmp(op, KW_OP_CLOSE)) {
		json_t *kill = json_object_get(doc, KW_F_KILL);

		req->op = KW_REQ_CLOSE;
		e = get_str(doc, KW_F_SESSION, true, &req->session, err);
		if (!e && kill && !json_is_boolean(kill))
			e = fail(err, KW_ERR_INVALID_FIELD, "kill: true or false");
		req->kill = json_is_true(kill);
	} else if (!strcmp(op, KW_OP_STATUS))
		req->op = KW_REQ_STATUS;
	else if (!strcmp(op, KW_OP_LIST))
		req->op = KW_REQ_LIST;
	else if (!strcmp(op, KW_OP_PING))
		req->op = KW_REQ_PING;
	else if (!strcmp(op, KW_OP_WATCH)) {
		json_t *den = json_object_get(doc, KW_F_DENIALS_ONLY);

		req->op = KW_REQ_WATCH;
		e = get_str(doc, KW_F_SESSION, false, &req->session, err);
		if (!e && den && !json_is_boolean(den))
			e = fail(err, KW_ERR_INVALID_FIELD, "denials_only: true or false");
		req->denials_only = json_is_true(den);
	} else
		e = fail(err, KW_ERR_UNKNOWN_OP,
			 "unknown op '%.64s' (open, close, status, list, ping, watch)",
			 op);
	if (e)
		kw_request_free(req);
	return e;
}

void kw_request_free(struct kw_request *req)
{
	json_decref(req->doc);
	memset(req, 0, sizeof(*req));
}

/* SPDX-License-Identifier: Apache-2.0 */
/* TRACE v0.2 Trust Record schema (trace-claim.json, draft 2020-12) written out
 * (and, for a record whose eat_profile is the v0.3 draft's, that draft's
 * runtime.evidence, tests/vectors/trace-spec/trace-claim-v0.3-draft.json)
 * in C: one table per object of the schema, every object closed where the
 * schema says additionalProperties:false. An error names the JSON path and
 * the rule that failed, e.g. "$.runtime.platform: enum (not a known platform)". */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "trace/record.h"
#include "trace/uri.h"
#include "record_internal.h"

enum field_type { F_STRING, F_INTEGER, F_OBJECT };

enum field_rule {
	R_NONE = 0,
	R_DIGEST,    /* ^sha(256:[0-9a-f]{64}|384:[0-9a-f]{96})$ */
	R_URI,       /* format: uri (RFC 3986, uri.c) */
	R_MINLEN1,   /* minLength: 1 */
	R_SUBJECT,   /* ^(spiffe://|did:) */
	R_SIGNATURE, /* ^[A-Za-z0-9_-]+$ */
};

struct schema_ctx {
	char *why;
	size_t whylen;
	unsigned flags;
	bool v03; /* eat_profile is the v0.3 draft's: runtime.evidence is allowed */
};

struct field;
typedef int (*object_check)(struct schema_ctx *c, const json_t *obj, const char *path);

struct field {
	const char *name;
	enum field_type type;
	bool required;
	enum field_rule rule;
	const char *const *enumv; /* NULL-terminated; const is a one-value enum */
	bool has_min, has_max;
	long long min, max;
	object_check check; /* for F_OBJECT */
};

static int fail(struct schema_ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (c->whylen) {
		va_start(ap, fmt);
		vsnprintf(c->why, c->whylen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* One const per profile (the schemas' own): a record that names neither is
 * held to v0.2's. */
static const char *const profile_v02[] = { KW_TRACE_PROFILE, NULL };
static const char *const profile_v03[] = { KW_TRACE_PROFILE_V03, NULL };
static const char *const evidence_formats[] = { "tdx-quote-v4", "sev-snp-report-v2", "tpm2-quote",
						"nvidia-gpu-attestation-report", NULL };
static const char *const collaterals[] = { "embedded", "required", NULL };
static const char *const binds[] = { "cnf-key", "weights-digest", "manifest-digest", "nonce",
				      "unspecified", NULL };
static const char *const platforms[] = { "intel-tdx", "amd-sev-snp", "azure-cvm-sev-snp",
					 "nvidia-h100", "nvidia-blackwell", "aws-nitro",
					 "arm-cca", "google-confidential-space", "tpm2",
					 "software-only", NULL };
static const char *const enforcement_modes[] = { "enforce", "advisory", "silent", "declared", NULL };
static const char *const origin_kinds[] = { "self", "third-party-control-plane", "log-import", NULL };
static const char *const depths[] = { "surface", "builder", "transitive", NULL };
static const char *const appraisal_statuses[] = { "affirming", "warning", "contraindicated", "none",
						  NULL };

/* JSON Schema counts 1.0 as an integer; jansson keeps it a real. */
bool kw_json_integer(const json_t *v, long long *out)
{
	if (json_is_integer(v)) {
		*out = json_integer_value(v);
		return true;
	}
	if (json_is_real(v)) {
		double d = json_real_value(v);

		if (d >= -9007199254740991.0 && d <= 9007199254740991.0 && d == (double)(long long)d) {
			*out = (long long)d;
			return true;
		}
	}
	return false;
}

static bool is_alpha(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static bool is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

/* path is the parent's; the member is f->name (the full path is formatted only
 * on failure: validation runs on every verify). */
static int check_string(struct schema_ctx *c, const struct field *f, const json_t *v, const char *path)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v);
	bool has_nul = strlen(s) != n;

	if (f->enumv) {
		size_t i;

		for (i = 0; f->enumv[i]; i++)
			if (!has_nul && !strcmp(s, f->enumv[i]))
				break;
		if (!f->enumv[i]) {
			if (!f->enumv[1])
				return fail(c, "%s.%s: const (must be \"%s\")", path, f->name, f->enumv[0]);
			return fail(c, "%s.%s: enum (\"%.60s\" is not an allowed value)", path, f->name, s);
		}
	}
	switch (f->rule) {
	case R_NONE:
		break;
	case R_DIGEST:
		if (has_nul || !kw_digest_valid(s))
			return fail(c, "%s.%s: pattern (must be sha256:<64 lowercase hex> or sha384:<96 lowercase hex>)",
				    path, f->name);
		break;
	case R_URI: {
		struct kw_uri_error ue;
		char what[160];

		if (!kw_uri_valid(s, n, &ue)) {
			kw_uri_describe(s, n, &ue, what, sizeof(what));
			return fail(c, "%s.%s: format uri (not an RFC 3986 URI: %s)", path, f->name, what);
		}
		break;
	}
	case R_MINLEN1:
		if (n < 1)
			return fail(c, "%s.%s: minLength 1 (must not be empty)", path, f->name);
		break;
	case R_SUBJECT:
		if (strncmp(s, "spiffe://", 9) && strncmp(s, "did:", 4))
			return fail(c, "%s.%s: pattern (must start with spiffe:// or did:)", path, f->name);
		break;
	case R_SIGNATURE:
		if (n == 0)
			return fail(c, "%s.%s: pattern (must be non-empty base64url)", path, f->name);
		for (size_t i = 0; i < n; i++)
			if (!is_alpha(s[i]) && !is_digit(s[i]) && s[i] != '-' && s[i] != '_')
				return fail(c, "%s.%s: pattern (must be base64url characters only)", path, f->name);
		break;
	}
	return 0;
}

static int check_fields(struct schema_ctx *c, const json_t *obj, const char *path,
			const struct field *fields, size_t nfields, bool closed)
{
	char sub[256];
	const char *name;
	json_t *v;
	int ret;

	if (!json_is_object(obj))
		return fail(c, "%s: type (must be an object)", path);
	if (closed) {
		json_object_foreach((json_t *)obj, name, v) {
			size_t i;

			for (i = 0; i < nfields; i++)
				if (!strcmp(name, fields[i].name))
					break;
			if (i == nfields)
				return fail(c, "%s: additionalProperties false (member \"%.60s\" is not allowed)",
					    path, name);
		}
	}
	for (size_t i = 0; i < nfields; i++) {
		const struct field *f = &fields[i];
		long long iv;

		v = json_object_get(obj, f->name);
		if (!v) {
			if (f->required)
				return fail(c, "%s: required (member \"%s\" is missing)", path, f->name);
			continue;
		}
		switch (f->type) {
		case F_STRING:
			if (!json_is_string(v))
				return fail(c, "%s.%s: type (must be a string)", path, f->name);
			ret = check_string(c, f, v, path);
			if (ret)
				return ret;
			break;
		case F_INTEGER:
			if (!kw_json_integer(v, &iv))
				return fail(c, "%s.%s: type (must be an integer)", path, f->name);
			if (f->has_min && iv < f->min)
				return fail(c, "%s.%s: minimum %lld", path, f->name, f->min);
			if (f->has_max && iv > f->max)
				return fail(c, "%s.%s: maximum %lld", path, f->name, f->max);
			break;
		case F_OBJECT:
			snprintf(sub, sizeof(sub), "%s.%s", path, f->name);
			ret = f->check(c, v, sub);
			if (ret)
				return ret;
			break;
		}
	}
	return 0;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define STR(nm, req) { .name = nm, .type = F_STRING, .required = req }
#define STR_RULE(nm, req, r) { .name = nm, .type = F_STRING, .required = req, .rule = r }
#define STR_ENUM(nm, req, e) { .name = nm, .type = F_STRING, .required = req, .enumv = e }
#define INT_MIN_(nm, req, lo) { .name = nm, .type = F_INTEGER, .required = req, .has_min = true, .min = lo }
#define OBJ(nm, req, fn) { .name = nm, .type = F_OBJECT, .required = req, .check = fn }

static int check_model(struct schema_ctx *c, const json_t *o, const char *path)
{
	static const struct field f[] = {
		STR("provider", true), STR("model_id", true), STR("version", false),
		STR_RULE("weights_digest", false, R_DIGEST), STR_RULE("aibom_uri", false, R_URI),
	};
	return check_fields(c, o, path, f, N(f), true);
}

/* v0.3 draft: the evidence inline (quote) or by reference (quote_digest),
 * exactly one of the two (the draft's oneOf). */
static int check_runtime_evidence(struct schema_ctx *c, const json_t *o, const char *path)
{
	static const struct field f[] = {
		STR_ENUM("format", true, evidence_formats), STR_RULE("quote", false, R_SIGNATURE),
		STR_RULE("quote_digest", false, R_DIGEST), STR_RULE("quote_uri", false, R_URI),
		STR_ENUM("collateral", false, collaterals), STR_RULE("collateral_uri", false, R_URI),
		STR_ENUM("binds", false, binds),
	};
	int ret = check_fields(c, o, path, f, N(f), true);

	if (ret)
		return ret;
	if (!json_object_get(o, "quote") == !json_object_get(o, "quote_digest"))
		return fail(c, "%s: oneOf (exactly one of \"quote\" and \"quote_digest\")", path);
	return 0;
}

static int check_runtime(struct schema_ctx *c, const json_t *o, const char *path)
{
	static const struct field f[] = {
		STR_ENUM("platform", true, platforms), STR_RULE("measurement", true, R_DIGEST),
		STR_RULE("rim_uri", false, R_URI), STR("nonce", false), STR("firmware_version", false),
		OBJ("evidence", false, check_runtime_evidence),
	};
	/* v0.2 has no evidence member: its table stops before it. */
	return check_fields(c, o, path, f, N(f) - !c->v03, true);
}

static int check_policy(struct schema_ctx *c, const json_t *o, const char *path)
{
	static const struct field f[] = {
		STR_RULE("bundle_hash", true, R_DIGEST), STR_ENUM("enforcement_mode", true, enforcement_modes),
		STR("version", false), STR_RULE("policy_uri", false, R_URI),
	};
	return check_fields(c, o, path, f, N(f), true);
}

static int check_tool_transcript(struct schema_ctx *c, const json_t *o, const char *path)
{
	static const struct field f[] = {
		STR_RULE("hash", true, R_DIGEST), INT_MIN_("call_count", false, 0),
		STR_RULE("transcript_uri", false, R_URI),
	};
	return check_fields(c, o, path, f, N(f), true);
}

static int check_delegation(struct schema_ctx *c, const json_t *o, const char *path)
{
	static const struct field f[] = {
		STR_RULE("parent_record_hash", true, R_DIGEST), STR_RULE("credential_id", true, R_MINLEN1),
	};
	return check_fields(c, o, path, f, N(f), true);
}

static int check_origin(struct schema_ctx *c, const json_t *o, const char *path)
{
	static const struct field f[] = {
		STR_ENUM("kind", true, origin_kinds), STR_RULE("producer", true, R_MINLEN1),
		STR_RULE("source_event_id", false, R_MINLEN1), INT_MIN_("ingested_at", false, 1700000000),
	};
	return check_fields(c, o, path, f, N(f), true);
}

static int check_build_provenance(struct schema_ctx *c, const json_t *o, const char *path)
{
	static const struct field f[] = {
		{ .name = "slsa_level", .type = F_INTEGER, .required = true, .has_min = true, .min = 0,
		  .has_max = true, .max = 3 },
		STR("builder", false), STR_RULE("digest", true, R_DIGEST),
		STR_RULE("provenance_uri", false, R_URI), STR_ENUM("provenance_depth", false, depths),
	};
	return check_fields(c, o, path, f, N(f), true);
}

static int check_appraisal(struct schema_ctx *c, const json_t *o, const char *path)
{
	static const struct field f[] = {
		STR_ENUM("status", true, appraisal_statuses), STR_RULE("verifier", true, R_URI),
		STR_RULE("policy_ref", false, R_URI),
		{ .name = "timestamp", .type = F_INTEGER },
		STR_ENUM("provenance_depth_verified", false, depths),
	};
	return check_fields(c, o, path, f, N(f), true);
}

/* cnf.jwk is open (a JWK may carry kid, alg, use, ...), but must hold key
 * material for its type, and never a private member. */
static int check_jwk(struct schema_ctx *c, const json_t *o, const char *path)
{
	static const struct field f[] = {
		STR("kty", true), STR("crv", false), STR("x", false), STR("y", false), STR("kid", false),
	};
	const char *kty;
	int ret = check_fields(c, o, path, f, N(f), false);

	if (ret)
		return ret;
	kty = json_string_value(json_object_get(o, "kty"));
	if (!strcmp(kty, "OKP") || !strcmp(kty, "EC")) {
		bool ec = kty[0] == 'E';

		if (!json_object_get(o, "crv"))
			return fail(c, "%s: required (%s keys need member \"crv\")", path, kty);
		if (!json_object_get(o, "x"))
			return fail(c, "%s: required (%s keys need member \"x\")", path, kty);
		if (ec && !json_object_get(o, "y"))
			return fail(c, "%s: required (EC keys need member \"y\")", path);
	}
	if (kw_jwk_has_private_member(o))
		return fail(c, "%s: private key member not allowed (d, p, q, dp, dq, qi, k)", path);
	return 0;
}

static int check_cnf(struct schema_ctx *c, const json_t *o, const char *path)
{
	static const struct field f[] = { OBJ("jwk", true, check_jwk) };

	return check_fields(c, o, path, f, N(f), true);
}

int kw_schema_check(const json_t *record, unsigned flags, char *why, size_t whylen)
{
	struct field f[] = {
		STR_ENUM("eat_profile", true,
			 kw_record_profile_of(record) == KW_PROFILE_V03_DRAFT ? profile_v03 : profile_v02),
		INT_MIN_("iat", true, 1700000000),
		STR_RULE("subject", true, R_SUBJECT),
		OBJ("model", true, check_model),
		OBJ("runtime", true, check_runtime),
		OBJ("policy", true, check_policy),
		STR("data_class", true),
		OBJ("tool_transcript", false, check_tool_transcript),
		OBJ("delegation", false, check_delegation),
		OBJ("origin", false, check_origin),
		OBJ("build_provenance", true, check_build_provenance),
		OBJ("appraisal", true, check_appraisal),
		STR_RULE("transparency", false, R_URI),
		OBJ("cnf", !(flags & KW_SCHEMA_ALLOW_NO_CNF), check_cnf),
		STR_RULE("signature", false, R_SIGNATURE),
	};
	struct schema_ctx c = { .why = why, .whylen = whylen, .flags = flags,
				.v03 = kw_record_profile_of(record) == KW_PROFILE_V03_DRAFT };
	const json_t *origin, *kind, *platform;
	int ret;

	if (whylen)
		why[0] = '\0';
	ret = check_fields(&c, record, "$", f, N(f), true);
	if (ret)
		return ret;
	/* The schema's allOf: evidence assembled by someone else has no hardware root. */
	origin = json_object_get(record, "origin");
	kind = json_object_get(origin, "kind");
	if (kind && (!strcmp(json_string_value(kind), "third-party-control-plane") ||
		     !strcmp(json_string_value(kind), "log-import"))) {
		platform = json_object_get(json_object_get(record, "runtime"), "platform");
		if (strcmp(json_string_value(platform), "software-only"))
			return fail(&c, "$.runtime.platform: const software-only (origin.kind \"%s\" cannot carry a hardware platform)",
				    json_string_value(kind));
	}
	return 0;
}

int kw_schema_validate(const json_t *record, char *why, size_t whylen)
{
	return kw_schema_check(record, 0, why, whylen);
}

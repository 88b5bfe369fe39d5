/* SPDX-License-Identifier: Apache-2.0 */
/* kwitnessd --tpm: the signing key bound to a TPM 2.0 quote. At start the
 * binding is made and checked (a TPM that cannot be reached stops the start);
 * at each session open and close it is refreshed, so a changed key or PCR
 * value gets a new quote and new evidence before a record is signed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "jcs/jcs.h"
#include "tpm/binding.h"
#include "attest.h"
#include "commit.h"
#include "hostinfo.h"
#include "kwd.h"
#include "util.h"

/* The TPM is opened for each use and closed after it: a swtpm serves one
 * connection at a time, and others (an operator's tools) share the TPM. */
struct kwd_attest {
	struct kw_tpm_binding b;
};

static json_t *read_enrollment(const char *path, char *err, size_t errlen)
{
	struct kw_buf text = { 0 };
	json_t *v = NULL;
	int e = kw_read_file(path, KW_TPM_EVIDENCE_MAX, &text);

	if (e)
		snprintf(err, errlen, "TPM enrollment %s: %s", path, strerror(-e));
	else if (!json_is_object(v = jcs_parse(text.data ? text.data : "", text.len, NULL))) {
		snprintf(err, errlen, "TPM enrollment %s is not a JSON object", path);
		json_decref(v);
		v = NULL;
	}
	kw_buf_free(&text);
	return v;
}

/* A given enrollment must vouch for this host and this signing key, so a
 * wrong file stops the start instead of making evidence that never
 * appraises. */
static int enrollment_fits(const struct kwd *d, const json_t *enr, char *err, size_t errlen)
{
	struct kwd_hostinfo host;
	char tp[KW_THUMBPRINT_MAX], why[300];

	if (!enr)
		return 0;
	kwd_hostinfo_read(&host);
	if (kw_key_thumbprint(d->key, tp) || kw_enrollment_names_key(enr, tp, why, sizeof(why)) ||
	    kw_enrollment_names_host(enr, host.machine_id, why, sizeof(why))) {
		snprintf(err, errlen, "the enrollment does not vouch for this host's signing key: %s", why);
		return -EINVAL;
	}
	return 0;
}

int kwd_attest_start(struct kwd *d, char *err, size_t errlen)
{
	struct kw_pcr_selection sel;
	struct kwd_attest *a;
	struct kw_tpm *tpm;
	json_t *enr = NULL, *ak;
	char dir[4096];
	bool changed;
	int e;

	if (!d->cfg.tpm)
		return 0;
	e = kw_pcr_selection_parse(d->cfg.tpm_pcrs ? d->cfg.tpm_pcrs : KW_TPM_DEFAULT_PCRS, &sel,
				   err, errlen);
	if (e)
		return e;
	if (d->cfg.tpm_enrollment && !(enr = read_enrollment(d->cfg.tpm_enrollment, err, errlen)))
		return -EINVAL;
	if (snprintf(dir, sizeof(dir), "%s/evidence", d->cfg.state_dir) >= (int)sizeof(dir)) {
		json_decref(enr);
		return -ENAMETOOLONG;
	}
	a = calloc(1, sizeof(*a));
	if (!a) {
		json_decref(enr);
		return -ENOMEM;
	}
	d->attest = a;
	e = kw_tpm_open(d->cfg.tpm, &tpm, err, errlen);
	if (e) {
		json_decref(enr);
		return e;
	}
	ak = d->cfg.tpm_ak ? kw_tpm_ak_read(d->cfg.tpm_ak, err, errlen) : NULL;
	if (!d->cfg.tpm_ak)
		snprintf(err, errlen, "--tpm needs --tpm-ak FILE (kwitness tpm enroll --ak-out)");
	if (!ak || enrollment_fits(d, enr, err, errlen)) {
		json_decref(ak);
		kw_tpm_close(tpm);
		json_decref(enr);
		return -EINVAL;
	}
	e = kw_binding_init(&a->b, tpm, &sel, dir, enr, ak, err, errlen);
	e = e ?: kw_binding_refresh(&a->b, tpm, d->key, &changed, err, errlen);
	e = e ?: kwd_commit_start(d, tpm, err, errlen);
	kw_tpm_close(tpm);
	if (e)
		return e;
	if (a->b.ek_cert_missing)
		kwd_log(d, LOG_WARNING, "TPM: no EK certificate in NV; evidence will not appraise");
	if (!a->b.enrollment)
		kwd_log(d, LOG_WARNING, "TPM: no enrollment given (--tpm-enrollment); evidence will not appraise");
	kwd_log(d, LOG_INFO, "TPM: signing key bound, measurement %s, evidence %s", a->b.measurement,
		a->b.evidence);
	return 0;
}

void kwd_attest_stop(struct kwd *d)
{
	kwd_commit_stop(d);
	if (!d->attest)
		return;
	kw_binding_free(&d->attest->b);
	free(d->attest);
	d->attest = NULL;
}

json_t *kwd_attest_evidence(struct kwd *d, const struct kwd_runtime *rt)
{
	const struct kw_tpm_binding *b = d->attest ? &d->attest->b : NULL;

	/* A copy: the worker thread reads it while the binding may move on. */
	if (!b || !b->bound || !rt->bound || strcmp(b->evidence, rt->evidence))
		return NULL;
	return json_deep_copy(b->evidence_object);
}

int kwd_attest_current(struct kwd *d, struct kwd_runtime *rt)
{
	struct kw_tpm_binding *b;
	struct kw_tpm *tpm;
	char err[512];
	bool changed;
	int e;

	memset(rt, 0, sizeof(*rt));
	if (!d->attest)
		return 0;
	b = &d->attest->b;
	e = kw_tpm_open(d->cfg.tpm, &tpm, err, sizeof(err));
	if (!e) {
		e = kw_binding_refresh(b, tpm, d->key, &changed, err, sizeof(err));
		kw_tpm_close(tpm);
	}
	if (e) {
		kwd_log(d, LOG_ERR, "TPM: no verified binding: %s", err);
		return e;
	}
	if (changed)
		kwd_log(d, LOG_INFO, "TPM: new binding, measurement %s, evidence %s", b->measurement,
			b->evidence);
	rt->bound = true;
	snprintf(rt->evidence, sizeof(rt->evidence), "%s", b->evidence);
	snprintf(rt->measurement, sizeof(rt->measurement), "%s", b->measurement);
	snprintf(rt->nonce, sizeof(rt->nonce), "%s", b->nonce_b64);
	snprintf(rt->firmware_version, sizeof(rt->firmware_version), "%s", b->firmware_version);
	return 0;
}

int kwd_attest_tpm(struct kwd *d, struct kw_tpm **out, char *err, size_t errlen)
{
	int e;

	*out = NULL;
	if (!d->attest) {
		snprintf(err, errlen, "no TPM (--tpm)");
		return -ENODEV;
	}
	e = kw_tpm_open(d->cfg.tpm, out, err, errlen);
	if (!e)
		kw_tpm_use_ak(*out, d->attest->b.ak);
	return e;
}

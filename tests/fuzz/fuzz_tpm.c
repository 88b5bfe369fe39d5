/* SPDX-License-Identifier: Apache-2.0 */
/* TPM appraisal of hostile evidence, as `kwitness verify --log --evidence`
 * runs it: the input is RECORD and EVIDENCE separated by 0x1e, appraised
 * under the committed vectors' EK CA and enrollment key (tests/vectors/tpm,
 * see PROVENANCE), with the log's evidence digest and machine id set, so
 * the enrollment's signing_keys and machine_id and the logged-quote check
 * run on every input that gets that far. Level 1 needs every step. A
 * RECORD alone is a TRACE v0.3 draft record whose inline evidence is
 * decoded and appraised. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jcs/jcs.h"
#include "tpm/tpm.h"
#include "trace/profile_v03.h"

/* tests/vectors/tpm/ek-ca.pem */
static const char ca_pem[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIDMzCCAhugAwIBAgIUR3UfkNc01M2JCRtGB3Cmisdh7rswDQYJKoZIhvcNAQEL\n"
	"BQAwIDEeMBwGA1UEAwwVa3dpdG5lc3MgdmVjdG9yIEVLIENBMCAXDTI2MTIwMjAw\n"
	"NDkxNFoYDzIxMjYxMTA4MDA0OTE0WjAgMR4wHAYDVQQDDBVrd2l0bmVzcyB2ZWN0\n"
	"b3IgRUsgQ0EwggEiMA0GCSqGSIb3DQEBAQUAA4IBDwAwggEKAoIBAQCi+lzajKPw\n"
	"UQtWSxdMQBwdUr91EI5QlRBGpJkANvDZl7dQYzjx+la+dPhyuNYksV4OSpWxoqeA\n"
	"s1XmdydgR7eQdj63k8S1C7h2J+cRbnxeVg+9HeDevS057xv43UcqoglSUUug5xfB\n"
	"ZbfcoXCs05Xpagjb3vl7RW8ONUM7KXxJjT5Ht7INxxKnGvzFuxkW4BGF3fbCgN7/\n"
	"TLuJcCJaDR/CymuGunx9Fcfc7I+v529FIAoTISmQA/1TjfCPAzLQ2ZJouJAFH0UE\n"
	"D1REHKts/ift+bz6zc+6D2jU7Qxfhgk4e/RJ1JWDeTnOT/zQ+ahbeNeBRAfiOAQg\n"
	"LGj79Wna+ZtZAgMBAAGjYzBhMB0GA1UdDgQWBBTh299Olwaj7+nln0ODNp9P/hbc\n"
	"HTAfBgNVHSMEGDAWgBTh299Olwaj7+nln0ODNp9P/hbcHTAPBgNVHRMBAf8EBTAD\n"
	"AQH/MA4GA1UdDwEB/wQEAwIBBjANBgkqhkiG9w0BAQsFAAOCAQEAd0A78FjfZBG4\n"
	"69tn+bF7Xn5VAGo7nfERgiQBe7ysyIYfapE2qg6KJlCR2+SntLox3LDedDHvFFA/\n"
	"qhRAcx/eKGflodsPv3+Odt728TmTqwIUwb+FPTczPL1uwJZ6dmp2PWR2dk6CJSpe\n"
	"9jUQ+ID/Nv8oZDPuS3L1CMW8SsOfZpE86rtzw1zXuSR5PaDvDCAuVFxkGeYA+uRy\n"
	"OqUfhRk3X9ddq4f+lxNdU5MdtDuq/eTVmfO1Y9zwOMBn/SBYDFzUOGeC3h/wehRg\n"
	"78zHb4uWVCroGgsLJqETRL0DFyyLJH08QxnJXxzLHPFwF6MOf7DKwSabmW9EuzkU\n"
	"kFS3JDSBZg==\n"
	"-----END CERTIFICATE-----\n";
static const char enroll_jwk[] =
	"{\"crv\":\"Ed25519\",\"kty\":\"OKP\",\"x\":\"B8WGkYPIiqpLQo_QQ_b6FQus_u0yVJu-gJtYKIIQ-Us\"}";

static char ca_path[64];
static struct kw_key *enroll_key;

static void remove_ca(void)
{
	unlink(ca_path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	json_t *jwk = jcs_parse(enroll_jwk, strlen(enroll_jwk), NULL);
	int fd;

	(void)argc;
	(void)argv;
	snprintf(ca_path, sizeof(ca_path), "/tmp/kwitness-fuzz-tpm-ca.XXXXXX");
	fd = mkstemp(ca_path);
	if (fd < 0 || write(fd, ca_pem, sizeof(ca_pem) - 1) != (ssize_t)(sizeof(ca_pem) - 1) ||
	    !jwk || kw_key_from_jwk(jwk, &enroll_key))
		abort();
	close(fd);
	atexit(remove_ca);
	json_decref(jwk);
	return 0;
}

/* A RECORD alone (no 0x1e): its inline runtime.evidence (TRACE v0.3 draft)
 * decoded and appraised, as `kwitness verify --tpm-ca` without --evidence. */
static int inline_one(const uint8_t *data, size_t size, struct kw_appraise_opts *o)
{
	json_t *rec = jcs_parse((const char *)data, size, NULL), *ev;
	struct kw_appraise_result res;
	char why[300];
	int present, ret;

	ev = kw_inline_evidence_decode(rec, &present, why, sizeof(why));
	if (ev && !json_is_object(ev))
		abort();
	if (ev) {
		o->logged_evidence = NULL;
		ret = kw_appraise(ev, rec, o, &res);
		if (ret < 0 && ret != -ENOMEM && ret != -EIO)
			abort();
	}
	json_decref(ev);
	json_decref(rec);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *sep = memchr(data, 0x1e, size);
	struct kw_appraise_opts o = {
		.ca_file = ca_path,
		.enroll_key = enroll_key,
		.logged_evidence = "sha256:0000000000000000000000000000000000000000000000000000000000000000",
		.logged_machine_id = "0123456789abcdef0123456789abcdef",
	};
	struct kw_appraise_result res;
	json_t *rec, *ev;
	int ret;

	if (!sep)
		return inline_one(data, size, &o);
	rec = jcs_parse((const char *)data, (size_t)(sep - data), NULL);
	ev = jcs_parse((const char *)sep + 1, size - (size_t)(sep - data) - 1, NULL);
	if (rec && ev) {
		/* Once with the log's digest (never this quote's: step 0 stops it),
		 * once without a log, so the later steps run too. */
		ret = kw_appraise(ev, rec, &o, &res);
		if (ret == 0)
			abort();
		o.logged_evidence = NULL;
		ret = kw_appraise(ev, rec, &o, &res);
		if (ret < 0 && ret != -ENOMEM && ret != -EIO)
			abort();
		if (ret == 0 && res.step != KW_APPRAISE_OK)
			abort();
	}
	json_decref(rec);
	json_decref(ev);
	return 0;
}

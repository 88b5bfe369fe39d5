/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness oci-hook's pod identity (user/cli/oci_identity.c): the fields
 * read from containerd's CRI annotations (as containerd 1.6 writes them),
 * CRI-O's and podman's; kwitness annotations fill only what the runtime left
 * out and never rename; hostile values are refused; the SPIFFE sandbox id
 * template expands only SPIFFE path text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cli/oci_identity.h"

static json_t *ann(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	assert_non_null(j);
	return j;
}

#define CRI "{\"io.kubernetes.cri.container-type\":\"container\"," \
	"\"io.kubernetes.cri.sandbox-id\":\"5b1e\"," \
	"\"io.kubernetes.cri.sandbox-name\":\"web-7d9f\"," \
	"\"io.kubernetes.cri.sandbox-namespace\":\"team-a\"," \
	"\"io.kubernetes.cri.sandbox-uid\":\"0f3c-11\"," \
	"\"io.kubernetes.cri.container-name\":\"agent\"," \
	"\"io.kubernetes.cri.image-name\":\"registry.example/agent:1.2\""

static void cri_fields(void **st)
{
	json_t *a = ann(CRI "}");
	struct oci_identity id;
	char err[256], sid[1024];

	(void)st;
	assert_int_equal(oci_identity_read(a, "c0ffee", &id, err, sizeof(err)), 0);
	assert_string_equal(id.v[KW_WL_POD_NAMESPACE], "team-a");
	assert_string_equal(id.v[KW_WL_POD_NAME], "web-7d9f");
	assert_string_equal(id.v[KW_WL_POD_UID], "0f3c-11");
	assert_string_equal(id.v[KW_WL_POD_SANDBOX_ID], "5b1e");
	assert_string_equal(id.v[KW_WL_CONTAINER_NAME], "agent");
	assert_string_equal(id.v[KW_WL_CONTAINER_ID], "c0ffee");
	assert_string_equal(id.v[KW_WL_CONTAINER_IMAGE], "registry.example/agent:1.2");
	assert_false(id.runtime_sandbox);
	assert_true(oci_identity_is_pod(&id));
	assert_int_equal(oci_identity_sandbox_id(&id, OCI_DEFAULT_POD_SANDBOX_ID, sid, sizeof(sid),
						 err, sizeof(err)), 0);
	assert_string_equal(sid, "spiffe://kwitness.local/ns/team-a/pod/web-7d9f/container/agent");
	assert_int_equal(oci_identity_sandbox_id(&id, "spiffe://prod.example/k8s/{namespace}/"
						 "{pod_uid}/{container_id}", sid, sizeof(sid),
						 err, sizeof(err)), 0);
	assert_string_equal(sid, "spiffe://prod.example/k8s/team-a/0f3c-11/c0ffee");
	json_decref(a);
}

static void cri_sandbox_container(void **st)
{
	json_t *a = ann("{\"io.kubernetes.cri.container-type\":\"sandbox\","
			"\"io.kubernetes.cri.sandbox-name\":\"web\"}");
	struct oci_identity id;
	char err[256];

	(void)st;
	assert_int_equal(oci_identity_read(a, "5b1e", &id, err, sizeof(err)), 0);
	assert_true(id.runtime_sandbox);
	assert_false(oci_identity_is_pod(&id)); /* no container name */
	json_decref(a);
}

static void crio_and_podman(void **st)
{
	/* CRI-O's names */
	json_t *a = ann("{\"io.kubernetes.pod.namespace\":\"ns1\",\"io.kubernetes.pod.name\":\"p\","
			"\"io.kubernetes.pod.uid\":\"u\",\"io.kubernetes.container.name\":\"c\","
			"\"io.kubernetes.cri-o.SandboxID\":\"s\",\"io.kubernetes.cri-o.ImageName\":\"i\","
			"\"io.kubernetes.cri-o.ContainerType\":\"container\"}");
	struct oci_identity id;
	char err[256];

	(void)st;
	assert_int_equal(oci_identity_read(a, "c", &id, err, sizeof(err)), 0);
	assert_string_equal(id.v[KW_WL_POD_NAMESPACE], "ns1");
	assert_string_equal(id.v[KW_WL_CONTAINER_IMAGE], "i");
	assert_true(oci_identity_is_pod(&id));
	json_decref(a);
	/* podman 4.3's kube play: the infra id only; the names from kwitness
	 * annotations */
	a = ann("{\"io.kubernetes.cri-o.SandboxID\":\"infra1\",\"io.kwitness.pod-name\":\"kp\","
		"\"io.kwitness.pod-namespace\":\"default\"}");
	assert_int_equal(oci_identity_read(a, "c2", &id, err, sizeof(err)), 0);
	assert_string_equal(id.v[KW_WL_POD_SANDBOX_ID], "infra1");
	assert_string_equal(id.v[KW_WL_POD_NAME], "kp");
	assert_null(id.v[KW_WL_CONTAINER_NAME]);
	assert_false(oci_identity_is_pod(&id));
	json_decref(a);
	/* nothing at all: only the container id */
	assert_int_equal(oci_identity_read(NULL, "c3", &id, err, sizeof(err)), 0);
	assert_string_equal(id.v[KW_WL_CONTAINER_ID], "c3");
	assert_null(id.v[KW_WL_POD_NAME]);
}

static void refused(const char *text, const char *why)
{
	json_t *a = ann(text);
	struct oci_identity id;
	char err[256] = "";

	if (oci_identity_read(a, "c", &id, err, sizeof(err)) != -1)
		fail_msg("accepted %s", text);
	if (!strstr(err, why))
		fail_msg("%s: said \"%s\", not \"%s\"", text, err, why);
	json_decref(a);
}

static void hostile(void **st)
{
	(void)st;
	/* a pod author's kwitness annotation cannot rename what CRI named */
	refused(CRI ",\"io.kwitness.pod-name\":\"other\"}",
		"annotation io.kwitness.pod-name: the runtime already names it "
		"(io.kubernetes.cri.sandbox-name)");
	refused(CRI ",\"io.kwitness.container-name\":\"x\"}", "cannot rename");
	/* the same name twice is no contradiction */
	{
		json_t *a = ann(CRI ",\"io.kwitness.pod-name\":\"web-7d9f\"}");
		struct oci_identity id;
		char err[256];

		assert_int_equal(oci_identity_read(a, "c", &id, err, sizeof(err)), 0);
		json_decref(a);
	}
	refused("{\"io.kubernetes.cri.sandbox-name\":\"a\",\"io.kubernetes.pod.name\":\"b\"}",
		"name different values");
	refused("{\"io.kubernetes.cri.sandbox-name\":\"a\\nb\"}", "not a name");
	refused("{\"io.kubernetes.cri.sandbox-name\":\"a b\"}", "not a name");
	refused("{\"io.kubernetes.cri.sandbox-name\":\"\"}", "not a name");
	refused("{\"io.kwitness.pod-name\":\"\\u00e9\"}", "not a name");
	{
		char big[400];

		memset(big, 'a', 300);
		snprintf(big + 300, sizeof(big) - 300, "\"}");
		char text[500];
		snprintf(text, sizeof(text), "{\"io.kubernetes.cri.sandbox-name\":\"%s", big);
		refused(text, "not a name");
	}
}

static void template_refusals(void **st)
{
	json_t *a = ann("{\"io.kubernetes.cri.sandbox-namespace\":\"team-a\","
			"\"io.kubernetes.cri.sandbox-name\":\"we/b\","
			"\"io.kubernetes.cri.container-name\":\"..\"}");
	struct oci_identity id;
	char err[256], sid[64];

	(void)st;
	assert_int_equal(oci_identity_read(a, "c", &id, err, sizeof(err)), 0);
	assert_int_equal(oci_identity_sandbox_id(&id, "spiffe://t/{pod}", sid, sizeof(sid), err,
						 sizeof(err)), -1);
	assert_non_null(strstr(err, "not SPIFFE path text"));
	assert_int_equal(oci_identity_sandbox_id(&id, "spiffe://t/{container}", sid, sizeof(sid),
						 err, sizeof(err)), -1);
	assert_int_equal(oci_identity_sandbox_id(&id, "spiffe://t/{pod_uid}", sid, sizeof(sid),
						 err, sizeof(err)), -1);
	assert_non_null(strstr(err, "do not give"));
	assert_int_equal(oci_identity_sandbox_id(&id, "spiffe://t/{podname}", sid, sizeof(sid),
						 err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown {name}"));
	assert_int_equal(oci_identity_sandbox_id(&id, "https://t/{namespace}", sid, sizeof(sid),
						 err, sizeof(err)), -1);
	assert_non_null(strstr(err, "spiffe:// or did:"));
	assert_int_equal(oci_identity_sandbox_id(&id, "spiffe://a-very-long-trust-domain.example/"
						 "{namespace}/{namespace}/{namespace}/{namespace}", sid,
						 sizeof(sid), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "longer than"));
	if (oci_identity_sandbox_id(&id, "did:web:{namespace}", sid, sizeof(sid), err, sizeof(err)))
		fail_msg("did:web:{namespace}: %s", err);
	assert_string_equal(sid, "did:web:team-a");
	json_decref(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cri_fields),
		cmocka_unit_test(cri_sandbox_container),
		cmocka_unit_test(crio_and_podman),
		cmocka_unit_test(hostile),
		cmocka_unit_test(template_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

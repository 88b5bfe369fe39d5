/* SPDX-License-Identifier: Apache-2.0 */
/* Pod identity for kwitness oci-hook: which pod and container a container
 * is, from the annotations its runtime wrote into config.json.
 *
 * containerd's CRI plugin writes io.kubernetes.cri.* (sandbox-name,
 * sandbox-namespace, sandbox-uid, sandbox-id, container-name, image-name,
 * container-type); CRI-O writes io.kubernetes.pod.* and io.kubernetes.cri-o.*;
 * podman (4.3) writes only io.kubernetes.cri-o.SandboxID for a container of a
 * pod, so its names come from kwitness annotations the podman user gives.
 * These come from the runtime, but a pod author may smuggle annotations in
 * (containerd's pod_annotations passes the ones an administrator allows), so
 * every value is checked as hostile text and a kwitness annotation may only
 * add a name the runtime did not give, never change one. */
#include <stdio.h>
#include <string.h>

#include "oci_identity.h"

#define ANN_POD_NAMESPACE "io.kwitness.pod-namespace"
#define ANN_POD_NAME "io.kwitness.pod-name"
#define ANN_CONTAINER_NAME "io.kwitness.container-name"

const char *const oci_identity_annotations[3] = {
	ANN_POD_NAMESPACE, ANN_POD_NAME, ANN_CONTAINER_NAME,
};

/* A field's sources: the runtimes' annotations, in order, then the one
 * kwitness annotation that may fill it when they are silent. */
static const struct {
	enum kw_workload_field field;
	const char *runtime[2];
	const char *kwitness;
} sources[] = {
	{ KW_WL_POD_NAMESPACE, { "io.kubernetes.cri.sandbox-namespace",
				 "io.kubernetes.pod.namespace" }, ANN_POD_NAMESPACE },
	{ KW_WL_POD_NAME, { "io.kubernetes.cri.sandbox-name", "io.kubernetes.pod.name" },
	  ANN_POD_NAME },
	{ KW_WL_POD_UID, { "io.kubernetes.cri.sandbox-uid", "io.kubernetes.pod.uid" }, NULL },
	{ KW_WL_POD_SANDBOX_ID, { "io.kubernetes.cri.sandbox-id", "io.kubernetes.cri-o.SandboxID" },
	  NULL },
	{ KW_WL_CONTAINER_NAME, { "io.kubernetes.cri.container-name",
				  "io.kubernetes.container.name" }, ANN_CONTAINER_NAME },
	{ KW_WL_CONTAINER_IMAGE, { "io.kubernetes.cri.image-name", "io.kubernetes.cri-o.ImageName" },
	  NULL },
};

#define NAME_MAX_CHARS 253   /* a Kubernetes object name (DNS subdomain) */
#define IMAGE_MAX_CHARS 1024 /* an image reference with its digest */

static int ifail(char *err, size_t errlen, const char *fmt, const char *a, const char *b)
{
	snprintf(err, errlen, fmt, a, b);
	return -1;
}

static bool printable(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (!n || n > max)
		return false;
	for (; *s; s++)
		if (*s < 0x21 || *s > 0x7e)
			return false;
	return true;
}

static const char *ann_str(const json_t *ann, const char *key)
{
	return json_string_value(json_object_get(ann, key));
}

static int read_field(const json_t *ann, size_t i, struct oci_identity *id, char *err,
		      size_t errlen)
{
	size_t max = sources[i].field == KW_WL_CONTAINER_IMAGE ? IMAGE_MAX_CHARS : NAME_MAX_CHARS;
	const char **v = &id->v[sources[i].field], *own;

	for (size_t k = 0; k < 2; k++) {
		const char *key = sources[i].runtime[k], *s = ann_str(ann, key);

		if (!s)
			continue;
		if (!printable(s, max))
			return ifail(err, errlen, "annotation %s: not a name (1 to %s printable "
					"ASCII characters)", key, max == NAME_MAX_CHARS ? "253" : "1024");
		if (*v && strcmp(*v, s))
			return ifail(err, errlen, "annotations %s and %s name different values",
				     sources[i].runtime[0], key);
		*v = s;
	}
	own = sources[i].kwitness ? ann_str(ann, sources[i].kwitness) : NULL;
	if (!own)
		return 0;
	if (!printable(own, max))
		return ifail(err, errlen, "annotation %s: not a name (1 to %s printable ASCII "
				"characters)", sources[i].kwitness, "253");
	if (*v && strcmp(*v, own))
		return ifail(err, errlen, "annotation %s: the runtime already names it (%s); a "
				"kwitness annotation cannot rename it", sources[i].kwitness,
			     sources[i].runtime[*v == ann_str(ann, sources[i].runtime[0]) ? 0 : 1]);
	*v = own;
	return 0;
}

int oci_identity_read(const json_t *ann, const char *container_id, struct oci_identity *id,
		      char *err, size_t errlen)
{
	const char *type;

	memset(id, 0, sizeof(*id));
	id->v[KW_WL_CONTAINER_ID] = container_id;
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
		if (read_field(ann, i, id, err, errlen))
			return -1;
	type = ann_str(ann, "io.kubernetes.cri.container-type");
	if (!type)
		type = ann_str(ann, "io.kubernetes.cri-o.ContainerType");
	id->runtime_sandbox = type && !strcmp(type, "sandbox");
	return 0;
}

bool oci_identity_is_pod(const struct oci_identity *id)
{
	return id->v[KW_WL_POD_NAMESPACE] && id->v[KW_WL_POD_NAME] && id->v[KW_WL_CONTAINER_NAME];
}

/* SPIFFE path segments: letters, digits, '.', '-', '_'; never "." or "..". */
static bool spiffe_segment(const char *s)
{
	if (!*s || !strcmp(s, ".") || !strcmp(s, ".."))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '-' || *s == '_'))
			return false;
	return true;
}

int oci_identity_sandbox_id(const struct oci_identity *id, const char *tmpl, char *out,
			    size_t cap, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		enum kw_workload_field field;
	} vars[] = {
		{ "{namespace}", KW_WL_POD_NAMESPACE }, { "{pod}", KW_WL_POD_NAME },
		{ "{pod_uid}", KW_WL_POD_UID }, { "{container}", KW_WL_CONTAINER_NAME },
		{ "{container_id}", KW_WL_CONTAINER_ID },
	};
	size_t n = 0;

	for (const char *t = tmpl; *t;) {
		const char *put = t;
		size_t len = 1, i;

		for (i = 0; *t == '{' && i < sizeof(vars) / sizeof(vars[0]); i++)
			if (!strncmp(t, vars[i].name, strlen(vars[i].name)))
				break;
		if (*t == '{' && i == sizeof(vars) / sizeof(vars[0]))
			return ifail(err, errlen, "the pod sandbox id template %s: an unknown "
					"{name}%s", tmpl, "");
		if (*t == '{') {
			put = id->v[vars[i].field];
			if (!put)
				return ifail(err, errlen, "the pod sandbox id template needs %s, which "
						"the container's annotations do not give%s",
					     vars[i].name, "");
			if (!spiffe_segment(put))
				return ifail(err, errlen, "%s is \"%s\", not SPIFFE path text "
						"([A-Za-z0-9._-])", vars[i].name, put);
			len = strlen(put);
			t += strlen(vars[i].name);
		} else {
			t++;
		}
		if (n + len >= cap)
			return ifail(err, errlen, "the pod sandbox id is longer than %s characters%s",
				     "1024", "");
		memcpy(out + n, put, len);
		n += len;
	}
	out[n] = '\0';
	if (strncmp(out, "spiffe://", 9) && strncmp(out, "did:", 4))
		return ifail(err, errlen, "the pod sandbox id template %s does not make a spiffe:// "
				"or did: URI%s", tmpl, "");
	return 0;
}

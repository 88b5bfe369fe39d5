/* SPDX-License-Identifier: Apache-2.0 */
/* The workload a container is, as its runtime names it: the pod and the
 * container from CRI (containerd), CRI-O or podman annotations, and the
 * sandbox id built from them. */
#ifndef KW_CLI_OCI_IDENTITY_H
#define KW_CLI_OCI_IDENTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>

#include "client/protocol.h"

/* The default sandbox id of a container of a pod: a SPIFFE id in the
 * Kubernetes shape (namespace, then pod, then container). */
#define OCI_DEFAULT_POD_SANDBOX_ID \
	"spiffe://kwitness.local/ns/{namespace}/pod/{pod}/container/{container}"

struct oci_identity {
	const char *v[KW_WL_N]; /* kw_workload_fields; NULL when the runtime gave none */
	bool runtime_sandbox;   /* the CRI pod sandbox's own (pause) container */
};

/* Reads the identity from the config.json annotations ann (may be NULL) and
 * the container id. The kwitness annotations io.kwitness.pod-namespace,
 * io.kwitness.pod-name and io.kwitness.container-name name what the runtime
 * does not (podman); one that contradicts the runtime's own is an error.
 * Values are hostile: each must be 1 to 253 (an image: 1024) printable ASCII
 * characters. Returns 0, or -1 with err set. */
int oci_identity_read(const json_t *ann, const char *container_id, struct oci_identity *id,
		      char *err, size_t errlen);

/* True when the pod's namespace, name and container name are known: the pod
 * sandbox id template applies. */
bool oci_identity_is_pod(const struct oci_identity *id);

/* Expands tmpl, whose {namespace} {pod} {pod_uid} {container} {container_id}
 * are replaced by the identity's values; a value put into the id must be
 * SPIFFE path text ([A-Za-z0-9._-], not "." or ".."). The result must be a
 * spiffe:// or did: URI. Returns 0, or -1 with err set. */
int oci_identity_sandbox_id(const struct oci_identity *id, const char *tmpl, char *out,
			    size_t cap, char *err, size_t errlen);

/* The io.kwitness.* annotations this file reads, for the hook's list of known
 * annotations. */
extern const char *const oci_identity_annotations[3];

#endif

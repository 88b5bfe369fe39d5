/* SPDX-License-Identifier: Apache-2.0 */
/* Rootless runtimes (podman run by a user) run OCI hooks inside their user
 * namespace, as that user. kwitness governs a container with the host's
 * BPF-LSM programs through kwitnessd, on a cgroup the user's runtime may not
 * even have (rootless podman on cgroup v1 makes none): the hook refuses to
 * pretend, so such a container fails closed with a clear reason
 * (docs/oci.md, "Rootless podman"). */
#include <stdio.h>
#include <string.h>

#include "oci_rootless.h"

bool oci_in_user_namespace(void)
{
	char line[128];
	unsigned long inside, outside, count;
	FILE *f = fopen("/proc/self/uid_map", "re");
	int lines = 0;
	bool identity = false;

	if (!f)
		return false; /* no user namespaces in this kernel: the initial one */
	while (fgets(line, sizeof(line), f)) {
		lines++;
		identity = sscanf(line, "%lu %lu %lu", &inside, &outside, &count) == 3 &&
			   inside == 0 && outside == 0 && count == 4294967295UL;
	}
	fclose(f);
	return !(lines == 1 && identity);
}

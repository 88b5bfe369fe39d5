/* SPDX-License-Identifier: Apache-2.0 */
/* Facts about the host that witnessed a session, for the kwitness.open entry. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "kwitnessd.h"

/* First line of a small file, without the newline; "" when unreadable. */
static void read_line(const char *path, char *out, size_t cap)
{
	FILE *f = fopen(path, "re");

	out[0] = '\0';
	if (!f)
		return;
	if (fgets(out, (int)cap, f))
		out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

/* "unified" when / of the cgroup hierarchy is cgroup2 itself, else "hybrid"
 * (cgroup2 mounted beside v1 controllers), "none" without cgroup2. */
static void cgroup_mode(char *out, size_t cap)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];
	bool v1 = false, v2 = false;

	snprintf(out, cap, "none");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *sep = strstr(line, " - ");

		if (!sep)
			continue;
		if (!strncmp(sep, " - cgroup2 ", 11))
			v2 = true;
		else if (!strncmp(sep, " - cgroup ", 10))
			v1 = true;
	}
	fclose(f);
	if (v2)
		snprintf(out, cap, "%s", v1 ? "hybrid" : "unified");
}

void kwd_hostinfo_read(struct kwd_hostinfo *h)
{
	struct utsname u;

	memset(h, 0, sizeof(*h));
	if (gethostname(h->hostname, sizeof(h->hostname) - 1) < 0)
		h->hostname[0] = '\0';
	read_line("/etc/machine-id", h->machine_id, sizeof(h->machine_id));
	read_line("/proc/sys/kernel/random/boot_id", h->boot_id, sizeof(h->boot_id));
	if (uname(&u) == 0)
		snprintf(h->kernel, sizeof(h->kernel), "%s", u.release);
	cgroup_mode(h->cgroup_mode, sizeof(h->cgroup_mode));
}

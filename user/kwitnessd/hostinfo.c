/* SPDX-License-Identifier: Apache-2.0 */
/* Facts about the host that witnessed a session, for the kwitness.open entry. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/cgroup.h"
#include "hostinfo.h"

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
	char mnt[4096];

	if (kw_cgroup_mount("cgroup2", mnt, sizeof(mnt)))
		snprintf(out, cap, "none");
	else
		snprintf(out, cap, "%s", kw_cgroup_mount("cgroup", mnt, sizeof(mnt)) ? "unified" : "hybrid");
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

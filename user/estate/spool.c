/* SPDX-License-Identifier: Apache-2.0 */
/* Draining a collector's spool into the estate (see spool.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "estate/spool.h"
#include "trace/statedir.h"

int estate_spool_drain(struct estate_ingest *ing, const char *state_dir, uint64_t *left)
{
	char path[4200];
	struct dirent *de;
	int dfd, ret = 0;
	DIR *dir;

	*left = 0;
	snprintf(path, sizeof(path), "%s/" KW_STATE_SPOOL, state_dir);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 && errno == ENOENT)
		return 0; /* nothing was ever spooled */
	if (dfd < 0 || !(dir = fdopendir(dfd))) {
		snprintf(ing->err, sizeof(ing->err), "cannot read the spool folder %.300s: %s", path,
			 strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	while ((de = readdir(dir))) {
		if (!kw_is_session_id(de->d_name))
			continue;
		if (ret) {
			(*left)++;
			continue;
		}
		snprintf(path, sizeof(path), "%s/records/%s.json", state_dir, de->d_name);
		ing->now = time(NULL);
		if (estate_ingest_path(ing, path)) {
			ret = -1;
			(*left)++;
			continue;
		}
		/* Stored, already there, or refused with its reason in the
		 * database's rejected table: either way the database holds it. */
		unlinkat(dfd, de->d_name, 0);
		fsync(dfd);
	}
	closedir(dir);
	return ret;
}

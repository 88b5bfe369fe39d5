/* SPDX-License-Identifier: Apache-2.0 */
/* The estate spool (config "estate = URL"). Each record written is put in a
 * spool: an empty file state/spool/<session>, made and synced with its
 * folder. kwitnessd ships nothing itself: `kwitness estate push`, an
 * unprivileged process of its own (examples/systemd/
 * kwitness-estate-push.service), ingests the spooled records into the
 * database and removes each spool file once the database holds its record,
 * so the privileged collector links no database client. Without the
 * setting nothing is spooled. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "client/protocol.h"
#include "trace/statedir.h"
#include "kwd.h"
#include "spool.h"
#include "util.h"


/* The spool folder, made (0700) when missing; -errno on failure. */
static int spool_dir(const struct kwd *d)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/" KW_STATE_SPOOL, d->cfg.state_dir);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

void kwd_spool_enqueue(struct kwd *d, const char *session)
{
	int dfd, fd;

	if (!d->cfg.estate || !kw_is_session_id(session))
		return;
	dfd = spool_dir(d);
	if (dfd < 0) {
		kwd_log(d, LOG_ERR, "estate: cannot make the spool folder: %s", strerror(-dfd));
		return;
	}
	fd = openat(dfd, session, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if ((fd < 0 && errno != EEXIST) || (fd >= 0 && (fsync(fd) < 0 || fsync(dfd) < 0)))
		kwd_log(d, LOG_ERR, "estate: cannot spool session %s: %s", session, strerror(errno));
	close(dfd);
	if (fd >= 0)
		close(fd);
}

/* Spooled records not yet shipped, or -errno. */
static long long spool_count(const struct kwd *d)
{
	long long n = 0;
	struct dirent *de;
	int dfd = spool_dir(d);
	DIR *dir;

	if (dfd < 0)
		return dfd;
	dir = fdopendir(dfd);
	if (!dir) {
		int e = -errno;

		close(dfd);
		return e;
	}
	while ((de = readdir(dir)))
		n += kw_is_session_id(de->d_name);
	closedir(dir);
	return n;
}

int kwd_spool_start(struct kwd *d, char *err, size_t errlen)
{
	long long n;

	if (!d->cfg.estate)
		return 0;
	n = spool_count(d);
	if (n < 0) {
		snprintf(err, errlen, "estate: cannot make the spool folder %s/" KW_STATE_SPOOL ": %s",
			 d->cfg.state_dir, strerror((int)-n));
		return (int)n;
	}
	/* kwitnessd used to ship the records itself (a thread with the
	 * database client in this process); an operator whose config says
	 * estate = URL learns here what ships them now. */
	kwd_log(d, LOG_NOTICE,
		"estate: records are spooled in %s/" KW_STATE_SPOOL " (%lld waiting); kwitnessd does not "
		"ship them: run `kwitness estate push --follow --state %s` (it reads estate = URL "
		"from %s; examples/systemd/kwitness-estate-push.service)",
		d->cfg.state_dir, n, d->cfg.state_dir, d->cfg.config_path);
	return 0;
}

json_t *kwd_spool_status(struct kwd *d)
{
	long long n;

	if (!d->cfg.estate)
		return NULL;
	n = spool_count(d);
	return json_pack("{s:I, s:s}", KW_F_ESTATE_BACKLOG, (json_int_t)(n < 0 ? 0 : n),
			 KW_F_ESTATE_ERROR, n < 0 ? strerror((int)-n) : "");
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Shipping records to an estate database (config "estate = URL"). Each
 * record written is first put in a spool: an empty file state/spool/<session>,
 * made and synced with its folder before anything is sent. A thread of its
 * own ingests spooled records as `kwitness estate ingest` does (verified
 * under the collector's own public key, log and bundle from the state folder)
 * and removes a spool file only once the database holds its record; when the
 * database cannot be reached it waits 1, 2, 4... up to 60 s and tries again,
 * so an outage loses nothing and a restart resumes from the spool. Without
 * the setting nothing is spooled and nothing leaves the host. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "kwitness/protocol.h"
#include "kwitness/record.h"
#include "estate/db.h"
#include "estate/ingest.h"
#include "estate/trust.h"
#include "kwitnessd.h"

#define SPOOL "spool"
#define BACKOFF_MAX_S 60

struct kwd_push {
	struct kwd *d;
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop, kick;
	struct estate_trust *trust;
	/* under lock: what `kwitness status` shows */
	uint64_t backlog, pushed, rejected;
	char error[320];
};

static bool is_session_name(const char *s)
{
	if (strlen(s) != 32)
		return false;
	for (int i = 0; i < 32; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* The spool folder, made (0700) when missing; -errno on failure. */
static int spool_dir(const struct kwd *d)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/" SPOOL, d->cfg.state_dir);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

void kwd_push_enqueue(struct kwd *d, const char *session)
{
	struct kwd_push *p = d->push;
	int dfd, fd;

	if (!d->cfg.estate || !is_session_name(session))
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
	if (p) {
		pthread_mutex_lock(&p->lock);
		p->backlog += fd >= 0;
		p->kick = true;
		pthread_cond_signal(&p->wake);
		pthread_mutex_unlock(&p->lock);
	}
	if (fd >= 0)
		close(fd);
}

static void set_error(struct kwd_push *p, const char *msg)
{
	pthread_mutex_lock(&p->lock);
	snprintf(p->error, sizeof(p->error), "%.300s", msg);
	pthread_mutex_unlock(&p->lock);
}

/* One pass over the spool. Returns 0 when it is empty, -1 when the database
 * failed (*db is then closed). */
static int push_pass(struct kwd_push *p, struct estate_db **db)
{
	struct kwd *d = p->d;
	int dfd = spool_dir(d), ret = 0;
	uint64_t left = 0;
	struct dirent *de;
	DIR *dir;

	if (dfd < 0) {
		set_error(p, "cannot open the spool folder");
		return -1;
	}
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		set_error(p, "cannot read the spool folder");
		return -1;
	}
	while ((de = readdir(dir))) {
		struct estate_ingest ing = { .trust = p->trust, .now = time(NULL),
					     .skew = KW_DEFAULT_SKEW };
		char err[600], rec[4300];

		if (!is_session_name(de->d_name))
			continue;
		if (ret) {
			left++;
			continue;
		}
		if (!*db) {
			*db = estate_open(d->cfg.estate, err, sizeof(err));
			if (!*db) {
				set_error(p, err);
				ret = -1;
				left++;
				continue;
			}
		}
		ing.db = *db;
		snprintf(rec, sizeof(rec), "%s/records/%s.json", d->cfg.state_dir, de->d_name);
		if (estate_ingest_path(&ing, rec)) {
			set_error(p, ing.err);
			estate_close(*db);
			*db = NULL;
			ret = -1;
			left++;
			continue;
		}
		/* Stored, already there, or refused with its reason in the
		 * database's rejected table: either way the database holds it. */
		if (ing.rejected)
			kwd_log(d, LOG_ERR, "estate: session %s was rejected by the estate's checks",
				de->d_name);
		unlinkat(dfd, de->d_name, 0);
		fsync(dfd);
		pthread_mutex_lock(&p->lock);
		p->pushed += ing.stored + ing.already;
		p->rejected += ing.rejected;
		p->error[0] = '\0';
		pthread_mutex_unlock(&p->lock);
	}
	closedir(dir);
	pthread_mutex_lock(&p->lock);
	p->backlog = left;
	pthread_mutex_unlock(&p->lock);
	return ret;
}

static void *push_thread(void *arg)
{
	struct kwd_push *p = arg;
	struct estate_db *db = NULL;
	int backoff = 1;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		int rc;

		p->kick = false;
		pthread_mutex_unlock(&p->lock);
		rc = push_pass(p, &db);
		pthread_mutex_lock(&p->lock);
		if (rc == 0) {
			backoff = 1;
			while (!p->stop && !p->kick)
				pthread_cond_wait(&p->wake, &p->lock);
		} else {
			struct timespec until;

			kwd_log(p->d, LOG_WARNING, "estate: %llu records wait: %s; retrying in %d s",
				(unsigned long long)p->backlog, p->error, backoff);
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_sec += backoff;
			while (!p->stop && !p->kick &&
			       pthread_cond_timedwait(&p->wake, &p->lock, &until) != ETIMEDOUT)
				;
			backoff = backoff * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : backoff * 2;
		}
	}
	pthread_mutex_unlock(&p->lock);
	estate_close(db);
	return NULL;
}

int kwd_push_start(struct kwd *d, char *err, size_t errlen)
{
	struct kwd_push *p;

	if (!d->cfg.estate)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "estate: out of memory");
		return -ENOMEM;
	}
	p->d = d;
	p->trust = estate_trust_of_key(d->key, err, errlen);
	if (!p->trust) {
		free(p);
		return -EINVAL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	d->push = p;
	if (pthread_create(&p->thread, NULL, push_thread, p)) {
		snprintf(err, errlen, "estate: cannot start the push thread");
		kwd_push_stop(d);
		return -EAGAIN;
	}
	p->running = true;
	return 0;
}

void kwd_push_stop(struct kwd *d)
{
	struct kwd_push *p = d->push;

	if (!p)
		return;
	if (p->running) {
		pthread_mutex_lock(&p->lock);
		p->stop = true;
		pthread_cond_signal(&p->wake);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
	}
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
	estate_trust_free(p->trust);
	free(p);
	d->push = NULL;
}

json_t *kwd_push_status(struct kwd *d)
{
	struct kwd_push *p = d->push;
	json_t *o;

	if (!p)
		return NULL;
	pthread_mutex_lock(&p->lock);
	o = json_pack("{s:I, s:I, s:I, s:s}", KW_F_ESTATE_BACKLOG, (json_int_t)p->backlog,
		      KW_F_ESTATE_PUSHED, (json_int_t)p->pushed, KW_F_ESTATE_REJECTED,
		      (json_int_t)p->rejected, KW_F_ESTATE_ERROR, p->error);
	pthread_mutex_unlock(&p->lock);
	return o;
}

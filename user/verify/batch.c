/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness verify --dir, see batch.h.
 *
 * Workers take the next record name from the folder (readdir under a lock,
 * so nothing grows with the number of records), verify the record first and
 * read its log only when the record holds. Every file is opened below the
 * state folder's own descriptors with O_NOFOLLOW, non-blocking, and must be
 * a regular file: a symbolic link (a loop, or one leading out of the
 * folder), a FIFO or a directory is refused with a reason and the run moves
 * on. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "trace/logverify.h"
#include "policy/policy.h"
#include "trace/record.h"
#include "trace/statedir.h"
#include "verify/batch.h"
#include "verify/commit.h"
#include "verify/progress.h"
#include "verify/read.h"
#include "verify/verdict.h"
#include "lib/text_safe.h"

#define SESSION_ID_LEN KW_SESSION_ID_LEN
#define MAX_JOBS 1024


enum { LEVEL_ENFORCE, LEVEL_ADVISORY, LEVEL_SILENT, LEVEL_DECLARED, LEVEL_OTHER, LEVEL_COUNT };
static const char *const level_names[LEVEL_COUNT] = { "enforce", "advisory", "silent", "declared",
						      "other" };

struct run {
	const struct verify_batch *b;
	struct kw_state_dir st;             /* --dir */
	DIR *dir;                    /* --dir: records/ being walked */
	int next_arg;                /* record paths: the next one */
	pthread_mutex_t lock;        /* the walk, the output and the counts */
	struct progress prog;
	uint64_t records, verified, incomplete, invalid, ignored, log_bytes;
	uint64_t by_reason[KW_VERIFY_REASON_COUNT];
	uint64_t level[LEVEL_COUNT];
	int internal;                /* workers that could not run */
};

struct outcome {
	char path[4200];
	char id[SESSION_ID_LEN + 1];
	struct kw_verify_result res;
	int complete;                /* -1 unknown */
	int level;                   /* -1 unknown */
	uint64_t log_bytes, decisions;
};

struct worker {
	struct run *run;
	struct kw_key *key;
	struct kw_log_check *lc;
	uint64_t log_seen;           /* bytes of the current log already counted */
};

static void set(struct outcome *out, enum kw_verify_reason r, const char *fmt, const char *a,
		const char *b)
{
	char detail[240];

	snprintf(detail, sizeof(detail), fmt, a, b);
	out->res.reason = r;
	snprintf(out->res.message, sizeof(out->res.message), "%s", detail);
}

static void worker_log_progress(void *ctx, uint64_t bytes)
{
	struct worker *w = ctx;

	progress_add(&w->run->prog, bytes - w->log_seen, 0);
	w->log_seen = bytes;
}

static int level_of(const json_t *rec)
{
	const char *m = json_string_value(json_object_get(json_object_get(rec, "policy"),
							  "enforcement_mode"));

	for (int i = 0; m && i < LEVEL_OTHER; i++)
		if (!strcmp(m, level_names[i]))
			return i;
	return LEVEL_OTHER;
}

/* Verifies one record of st; id is its session. */
static void verify_state_record(struct worker *w, const struct kw_state_dir *st, int rec_fd,
			  struct outcome *out)
{
	struct kw_verify_opts o = w->run->b->verify;
	struct kw_buf text = { 0 }, bundle = { 0 };
	char image[KW_DIGEST_STR_MAX], log_name[KW_SESSION_ID_LEN + 8];
	json_t *rec = NULL;
	int e, log_fd = -1;

	o.trusted = w->key;
	e = kw_read_fd(rec_fd, VERIFY_RECORD_MAX, &text);
	if (e) {
		set(out, KW_VERIFY_RECORD_UNREADABLE, "%s%s", "The record file cannot be read: ",
		    kw_state_open_error(e));
		goto out;
	}
	e = kw_record_verify_signed(text.data ? text.data : "", text.len, &o, &out->res, &rec);
	if (e)
		goto out;
	out->level = level_of(rec);

	/* The evidence, found by session id and bundle hash. */
	if (kw_state_find_evidence(st, out->id, rec, &log_fd, &bundle, &out->res))
		goto out;
	o.bundle = bundle.data ? bundle.data : "";
	o.bundle_len = bundle.len;
	if (verify_image_digest(rec, image))
		o.image_digest = image;

	w->lc->expect_session = out->id;
	snprintf(log_name, sizeof(log_name), "%.32s.jsonl", out->id);
	w->lc->seg_dirfd = st->logs;
	w->lc->seg_log = log_name;
	w->lc->progress = worker_log_progress;
	w->lc->progress_ctx = w;
	w->log_seen = 0;
	e = kw_log_check_init(w->lc);
	if (!e)
		e = kw_log_check_fd(w->lc, log_fd);
	out->log_bytes = w->lc->bytes;
	if (e) {
		kw_log_check_free(w->lc);
		set(out, KW_VERIFY_LOG_UNREADABLE, "The decision log could not be checked: %s%s",
		    strerror(-e), "");
		goto out;
	}
	o.log = w->lc;
	e = kw_record_verify_evidence(rec, &o, &out->res);
	if (e == 0 && verify_state_commitment(st, rec, w->lc, &out->res) < 0)
		set(out, KW_VERIFY_TPM_COMMIT_MALFORMED, "%s%s",
		    "The TPM commitment cannot be checked: out of memory", "");
	if (w->lc->problem == KW_VERIFY_OK)
		out->complete = w->lc->complete;
	out->decisions = w->lc->decisions;
	kw_log_check_free(w->lc);
out:
	if (log_fd >= 0)
		close(log_fd);
	json_decref(rec);
	kw_buf_free(&text);
	kw_buf_free(&bundle);
}

/* The next record: its path for messages, its id, and an open descriptor
 * (or a negative errno). false when there is none left. */
static bool next_record(struct run *r, struct outcome *out, int *fd, struct kw_state_dir *own)
{
	const struct verify_batch *b = r->b;
	bool found = false;

	pthread_mutex_lock(&r->lock);
	if (r->dir) {
		struct dirent *de;

		while ((de = readdir(r->dir))) {
			if (de->d_name[0] == '.')
				continue;
			if (!kw_is_record_name(de->d_name)) {
				r->ignored++;
				continue;
			}
			snprintf(out->path, sizeof(out->path), "%s/records/%s", b->state_dir,
				 de->d_name);
			memcpy(out->id, de->d_name, SESSION_ID_LEN);
			out->id[SESSION_ID_LEN] = '\0';
			*fd = kw_state_open_file(r->st.records, de->d_name);
			found = true;
			break;
		}
	} else if (r->next_arg < b->n_records) {
		const char *path = b->records[r->next_arg++];
		char copy[sizeof(out->path)], state_path[sizeof(out->path) + 4], *base, *parent;

		snprintf(out->path, sizeof(out->path), "%s", path);
		found = true;
		pthread_mutex_unlock(&r->lock);
		/* records/<id>.json: the state folder is the grandparent. */
		snprintf(copy, sizeof(copy), "%s", path);
		base = basename(copy);
		if (kw_is_record_name(base)) {
			memcpy(out->id, base, SESSION_ID_LEN);
			out->id[SESSION_ID_LEN] = '\0';
		}
		snprintf(copy, sizeof(copy), "%s", path);
		parent = dirname(copy);
		snprintf(state_path, sizeof(state_path), "%s/..", parent);
		kw_state_dir_open(state_path, own);
		*fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (*fd < 0) {
			*fd = -errno;
		} else {
			struct stat st;

			if (fstat(*fd, &st) < 0 || !S_ISREG(st.st_mode)) {
				close(*fd);
				*fd = -EBADFD;
			} else {
				fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) & ~O_NONBLOCK);
			}
		}
		return true;
	}
	pthread_mutex_unlock(&r->lock);
	return found;
}

static void report(struct run *r, const struct outcome *out)
{
	const struct kw_verify_result *res = &out->res;
	bool ok = res->reason == KW_VERIFY_OK;

	pthread_mutex_lock(&r->lock);
	r->records++;
	r->log_bytes += out->log_bytes;
	if (ok && !res->warning[0])
		r->verified++;
	else if (ok || res->reason == KW_VERIFY_LOG_INCOMPLETE)
		r->incomplete++;
	else
		r->invalid++;
	if (!ok)
		r->by_reason[res->reason]++;
	if ((ok || res->reason == KW_VERIFY_LOG_INCOMPLETE) && out->level >= 0)
		r->level[out->level]++;

	if (r->b->json) {
		/* Written with the emitter: a path or a message may hold bytes
		 * that are not UTF-8, which become U+FFFD instead of losing the line. */
		struct kw_buf line = { 0 };
		struct jcs_obj o;
		int e;

		e = jcs_obj_begin(&o, &line);
		if (out->complete < 0)
			e = e ?: jcs_obj_key(&o, "complete") ?: kw_buf_puts(&line, "null");
		else
			e = e ?: jcs_obj_bool(&o, "complete", out->complete);
		e = e ?: jcs_obj_int(&o, "decisions", (int64_t)out->decisions);
		if (out->level < 0)
			e = e ?: jcs_obj_key(&o, "enforcement_mode") ?: kw_buf_puts(&line, "null");
		else
			e = e ?: jcs_obj_str(&o, "enforcement_mode", level_names[out->level]);
		if (ok)
			e = e ?: jcs_obj_int(&o, "level", 0);
		e = e ?: jcs_obj_int(&o, "log_bytes", (int64_t)out->log_bytes);
		e = e ?: jcs_obj_strn_lossy(&o, "message", res->message, strlen(res->message), NULL);
		e = e ?: jcs_obj_str(&o, "reason", kw_verify_reason_code(res->reason));
		e = e ?: jcs_obj_strn_lossy(&o, "record", out->path, strlen(out->path), NULL);
		if (out->id[0])
			e = e ?: jcs_obj_str(&o, "session", out->id);
		else
			e = e ?: jcs_obj_key(&o, "session") ?: kw_buf_puts(&line, "null");
		e = e ?: jcs_obj_bool(&o, "valid", ok);
		if (res->warning[0])
			e = e ?: jcs_obj_strn_lossy(&o, "warning", res->warning, strlen(res->warning), NULL);
		e = e ?: jcs_obj_end(&o);
		if (!e)
			printf("%s\n", line.data);
		kw_buf_free(&line);
	} else if (!ok || res->warning[0]) {
		progress_clear(&r->prog); /* the line goes; it comes back on the next update */
		/* the file name and the message may be a sandbox's text: escaped */
		kw_text_fput(stdout, out->path);
		printf(": %s: %s: ", ok ? "warning" : "invalid",
		       kw_verify_reason_code(ok ? KW_VERIFY_LOG_INCOMPLETE : res->reason));
		kw_text_fput(stdout, ok ? res->warning : res->message);
		putchar('\n');
		fflush(stdout);
	}
	pthread_mutex_unlock(&r->lock);
	progress_add(&r->prog, 0, 1);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;
	struct outcome *out = malloc(sizeof(*out));
	int fd;

	if (!out)
		goto fail;
	for (;;) {
		struct kw_state_dir own = KW_STATE_DIR_NONE;

		memset(out, 0, sizeof(*out));
		out->complete = out->level = -1;
		if (!next_record(r, out, &fd, &own))
			break;
		if (fd < 0)
			set(out, KW_VERIFY_RECORD_UNREADABLE, "%s%s", "The record file cannot be read: ",
			    kw_state_open_error(fd));
		else
			verify_state_record(w, r->dir ? &r->st : &own, fd, out);
		if (fd >= 0)
			close(fd);
		kw_state_dir_close(&own);
		report(r, out);
	}
	free(out);
	return NULL;
fail:
	pthread_mutex_lock(&r->lock);
	r->internal++;
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

static void print_summary(struct run *r, double secs, int jobs)
{
	if (r->b->json) {
		json_t *reasons = json_object(), *levels = json_object(), *s;

		for (int i = 0; i < KW_VERIFY_REASON_COUNT; i++)
			if (r->by_reason[i])
				json_object_set_new(reasons, kw_verify_reason_code(i),
						    json_integer((json_int_t)r->by_reason[i]));
		for (int i = 0; i < LEVEL_COUNT; i++)
			if (r->level[i])
				json_object_set_new(levels, level_names[i],
						    json_integer((json_int_t)r->level[i]));
		s = json_pack("{s:{s:I, s:I, s:I, s:I, s:o, s:{s:I}, s:o, s:I, s:I, s:I, s:i}}", "summary",
			      "records", (json_int_t)r->records, "verified", (json_int_t)r->verified,
			      "incomplete", (json_int_t)r->incomplete, "invalid",
			      (json_int_t)r->invalid, "reasons", reasons, "level", "0",
			      (json_int_t)(r->verified + (r->b->verify.allow_incomplete ? r->incomplete : 0)),
			      "enforcement", levels, "ignored",
			      (json_int_t)r->ignored, "log_bytes", (json_int_t)r->log_bytes,
			      "milliseconds", (json_int_t)(secs * 1000), "jobs", jobs);
		if (s) {
			struct kw_buf b = { 0 };

			if (!jcs_dump(s, &b))
				printf("%s\n", b.data);
			kw_buf_free(&b);
		}
		json_decref(s);
		return;
	}
	printf("summary: %" PRIu64 " records: %" PRIu64 " verified, %" PRIu64 " incomplete, %" PRIu64
	       " invalid",
	       r->records, r->verified, r->incomplete, r->invalid);
	if (r->invalid || r->incomplete) {
		const char *sep = "\nreasons: ";

		for (int i = 0; i < KW_VERIFY_REASON_COUNT; i++)
			if (r->by_reason[i]) {
				printf("%s%s %" PRIu64, sep, kw_verify_reason_code(i), r->by_reason[i]);
				sep = ", ";
			}
	}
	printf("\nlevel: %" PRIu64 " at level 0, none at level 1 (--dir appraises no TPM evidence)",
	       r->verified + (r->b->verify.allow_incomplete ? r->incomplete : 0));
	printf("\nenforcement mode of the verified and incomplete records:");
	for (int i = 0, n = 0; i < LEVEL_COUNT; i++)
		if (r->level[i])
			printf("%s %s %" PRIu64, n++ ? "," : "", level_names[i], r->level[i]);
	if (!r->verified && !r->incomplete)
		printf(" none");
	printf("\ntime: %.2f s, %.0f records/s, %.1f MB of logs at %.1f MB/s, %d jobs\n", secs,
	       secs > 0 ? (double)r->records / secs : 0.0, (double)r->log_bytes / 1e6,
	       secs > 0 ? (double)r->log_bytes / 1e6 / secs : 0.0, jobs);
	if (r->ignored)
		printf("ignored: %" PRIu64 " files in records/ not named <session>.json\n", r->ignored);
}

int verify_batch_run(const struct verify_batch *b)
{
	struct run r = { .b = b, .st = KW_STATE_DIR_NONE };
	struct worker *w = NULL;
	pthread_t *tid = NULL;
	uint64_t total = 0;
	struct kw_key *probe = NULL;
	int jobs = b->jobs, started = 0, e, status = 2;

	if (b->keypath) {
		e = kw_key_load_public(b->keypath, &probe);
		if (e) {
			fprintf(stderr, "kwitness verify: cannot use the trusted key %s: %s\n", b->keypath,
				strerror(-e));
			return 2;
		}
		kw_key_free(probe);
	}
	if (b->state_dir) {
		e = kw_state_dir_open(b->state_dir, &r.st);
		if (e) {
			fprintf(stderr, "kwitness verify: %s is not a state folder (no records/ in it): %s\n",
				b->state_dir, strerror(-e));
			kw_state_dir_close(&r.st);
			return 2;
		}
		/* Count first, for the progress line's ETA; then walk again. */
		int dup_fd = dup(r.st.records);

		r.dir = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
		if (!r.dir) {
			fprintf(stderr, "kwitness verify: %s/records: %s\n", b->state_dir, strerror(errno));
			if (dup_fd >= 0)
				close(dup_fd);
			kw_state_dir_close(&r.st);
			return 2;
		}
		for (struct dirent *de; (de = readdir(r.dir));)
			total += kw_is_record_name(de->d_name);
		rewinddir(r.dir);
	} else {
		total = (uint64_t)b->n_records;
	}
	if (jobs <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);

		jobs = n > 0 ? (int)n : 1;
	}
	if (jobs > MAX_JOBS)
		jobs = MAX_JOBS;
	if (total && (uint64_t)jobs > total)
		jobs = (int)total;
	if (jobs < 1)
		jobs = 1;

	json_object_seed(0); /* before any thread makes an object */
	pthread_mutex_init(&r.lock, NULL);
	progress_init(&r.prog, !b->json, 0, total ? total : 1);
	w = calloc((size_t)jobs, sizeof(*w));
	tid = calloc((size_t)jobs, sizeof(*tid));
	if (!w || !tid)
		goto out;
	for (int i = 0; i < jobs; i++) {
		w[i].run = &r;
		w[i].lc = calloc(1, sizeof(*w[i].lc));
		if (!w[i].lc)
			goto out;
		if (b->keypath && kw_key_load_public(b->keypath, &w[i].key))
			goto out;
	}
	for (; started < jobs; started++)
		if (pthread_create(&tid[started], NULL, worker_main, &w[started]))
			break;
	for (int i = 0; i < started; i++)
		pthread_join(tid[i], NULL);
	progress_end(&r.prog);
	if (!started || r.internal) {
		fprintf(stderr, "kwitness verify: could not run the workers (out of memory)\n");
		goto out;
	}
	print_summary(&r, progress_seconds(&r.prog), started);
	status = r.invalid || (r.incomplete && !b->verify.allow_incomplete) ? 1 : 0;
out:
	for (int i = 0; w && i < jobs; i++) {
		free(w[i].lc);
		kw_key_free(w[i].key);
	}
	free(w);
	free(tid);
	if (r.dir)
		closedir(r.dir);
	kw_state_dir_close(&r.st);
	pthread_mutex_destroy(&r.lock);
	return status;
}

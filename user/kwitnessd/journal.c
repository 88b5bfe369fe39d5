/* SPDX-License-Identifier: Apache-2.0 */
/* The session journal: <state>/sessions/<id>.json, one canonical line
 * {"generation":G,"log_segment_bytes":B,"owner":UID,"session":ID,"slot":N}
 * per open session (owner: the uid that opened it, who may list and close
 * it; log_segment_bytes: the size its log is cut at, 0: one file);
 * "closing" ("close" or "kill") once a close began, so a close cut short by a crash is finished by
 * the next collector. With the pinned maps (the session's live mark:
 * <pin_dir>/sessions/<slot>/) and the log's open entry it is all a
 * restarted collector needs to continue a session. Written whole (temporary
 * file, rename) but not synced: it matters only while the pins exist, and
 * pins do not outlive a reboot (after one, recover.c seals the session from
 * its log); so no fsync waits on the loop. Removed once the session's record
 * is written. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "journal.h"
#include "session.h"

static int journal_path(struct kwd *d, const char *id, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/sessions/%s.json", d->cfg.state_dir, id);

	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int kwd_journal_write(const struct kwd_session *s, int closing)
{
	char path[4200];
	struct kw_buf line = { 0 };
	struct jcs_obj o;
	int e;

	e = journal_path(s->d, s->id, path, sizeof(path));
	e = e ?: jcs_obj_begin(&o, &line);
	if (closing)
		e = e ?: jcs_obj_str(&o, "closing", closing > 1 ? "kill" : "close");
	e = e ?: jcs_obj_int(&o, "generation", s->generation);
	e = e ?: jcs_obj_int(&o, "log_segment_bytes", (int64_t)s->segment_bytes);
	e = e ?: jcs_obj_int(&o, "owner", s->owner);
	e = e ?: jcs_obj_str(&o, "session", s->id);
	e = e ?: jcs_obj_int(&o, "slot", s->slot);
	e = e ?: jcs_obj_end(&o);
	e = e ?: kw_buf_putc(&line, '\n');
	e = e ?: kw_write_file_replace(path, line.data, line.len, 0640);
	kw_buf_free(&line);
	return e;
}

void kwd_journal_remove(struct kwd *d, const char *id)
{
	char path[4200];

	if (!journal_path(d, id, path, sizeof(path)))
		unlink(path);
}

/* SPDX-License-Identifier: Apache-2.0 */
/* What kwitness oci-hook tells the container's user, see oci_hook_note.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client/protocol.h"
#include "lib/buf.h"
#include "lib/text_safe.h"
#include "oci_hook_note.h"

void oci_note_open(const char *id, const char *session, const char *sandbox, const char *state_dir)
{
	/* the id is checked (letters, digits, _+-.); the sandbox id may be an
	 * annotation's: escaped */
	fprintf(stderr, "kwitness oci-hook: %s: recording as session %s (sandbox ", id, session);
	kw_text_fput(stderr, sandbox);
	fprintf(stderr, "); at poststop the record's path goes to %s/" OCI_NOTE_DIR "/%s.json\n",
		state_dir, id);
}

int oci_note_closed(int dfd, const char *state_dir, const char *id, const char *session,
		    const json_t *reply)
{
	const char *rec = json_string_value(json_object_get(reply, KW_F_RECORD_PATH));
	const char *log = json_string_value(json_object_get(reply, KW_F_LOG_PATH));
	bool complete = json_is_true(json_object_get(reply, KW_F_COMPLETE));
	char name[300], *text;
	json_t *note;
	int ndfd, fd, e;

	fprintf(stderr, "kwitness oci-hook: %s: session %s closed; record ", id, session);
	kw_text_fput(stderr, rec ? rec : "(none)");
	fprintf(stderr, "%s\n", complete ? "" : " (INCOMPLETE: see its log's kwitness.close entry)");
	if (mkdirat(dfd, OCI_NOTE_DIR, 0755) < 0 && errno != EEXIST)
		return -errno;
	ndfd = openat(dfd, OCI_NOTE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (ndfd < 0)
		return -errno;
	note = json_pack("{s:s, s:s, s:s?, s:s?, s:b}", "container", id, "session", session,
			 "record_path", rec, "log_path", log, "complete", complete);
	text = note ? json_dumps(note, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(note);
	snprintf(name, sizeof(name), "%s.json", id);
	fd = text ? openat(ndfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644) : -1;
	e = fd < 0 ? (text ? -errno : -ENOMEM) : kw_write_all(fd, text, strlen(text));
	if (fd >= 0 && !e)
		e = kw_write_all(fd, "\n", 1);
	if (fd >= 0 && close(fd) && !e)
		e = -errno;
	free(text);
	close(ndfd);
	if (e)
		fprintf(stderr, "kwitness oci-hook: %s: cannot write %s/" OCI_NOTE_DIR "/%s: %s\n", id,
			state_dir, name, strerror(-e));
	return e;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* What kwitness oci-hook tells the container's user (oci_hook_note.c): a
 * line on stderr, which the runtime's log keeps, at each stage, and after
 * poststop a file <state-dir>/records/<container id>.json naming the
 * record, so that whoever ran the container can find its record. */
#ifndef KWITNESS_CLI_OCI_HOOK_NOTE_H
#define KWITNESS_CLI_OCI_HOOK_NOTE_H

#include <jansson.h>

#define OCI_NOTE_DIR "records"

/* createRuntime opened session for the container id. */
void oci_note_open(const char *id, const char *session, const char *sandbox, const char *state_dir);
/* poststop closed it: reply is kwitnessd's close reply. Writes the note
 * file under the state folder dfd; 0 or -errno (the line is printed anyway). */
int oci_note_closed(int dfd, const char *state_dir, const char *id, const char *session,
		    const json_t *reply);

#endif

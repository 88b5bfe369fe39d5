/* SPDX-License-Identifier: Apache-2.0 */
/* Untrusted text for people to read: a sandbox id, a cgroup name, a comm, a
 * path or a host name that a sandbox chose is printed so that it can neither
 * drive a terminal (escape sequences) nor reorder what a reader sees (Unicode
 * bidi controls), and any such byte stays visible. JSON output does not use
 * this: it carries the exact string. */
#ifndef KWITNESS_LIB_TEXT_SAFE_H
#define KWITNESS_LIB_TEXT_SAFE_H

#include <stddef.h>
#include <stdio.h>

/* The longest escape one step writes ("\u202e"), with its NUL. */
#define KW_TEXT_ESC_MAX 8

/* One step over the NUL-terminated text at p (*p != 0): returns the bytes it
 * consumed and sets esc to "" when they print as they are, else to their
 * visible form: C0 controls, DEL and bytes that are not UTF-8 as \xNN; C1
 * controls and bidi and other invisible format characters (U+061C, U+200B to
 * U+200F, U+2028 to U+202E, U+2066 to U+2069, U+FEFF) as \uNNNN; the
 * backslash itself as \\ so that no escape can be forged. */
size_t kw_text_step(const unsigned char *p, char esc[KW_TEXT_ESC_MAX]);

/* Writes s (NULL prints nothing) to f escaped as kw_text_step says. */
void kw_text_fput(FILE *f, const char *s);

/* The escaped s in out (cap > 0 bytes, NUL-terminated, cut only between
 * characters); returns out, for printf's %s. */
const char *kw_text_safe(const char *s, char *out, size_t cap);

/* The length of the escaped s (its columns, for ASCII). */
size_t kw_text_safe_len(const char *s);

#endif

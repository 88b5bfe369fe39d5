/* SPDX-License-Identifier: Apache-2.0 */
/* The messages a user's mistake gets, see messages.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "lib/messages.h"

#define NAME_MAX_CMP 64

/* Optimal string alignment: insertions, deletions, substitutions and
 * swaps of two neighbours ("kye" is one from "key") each cost 1. */
size_t kw_edit_distance(const char *a, const char *b)
{
	size_t la = strnlen(a, NAME_MAX_CMP), lb = strnlen(b, NAME_MAX_CMP), i, j;
	unsigned char d[NAME_MAX_CMP + 1][NAME_MAX_CMP + 1];

	for (i = 0; i <= la; i++)
		d[i][0] = (unsigned char)i;
	for (j = 0; j <= lb; j++)
		d[0][j] = (unsigned char)j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			unsigned best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1u < best)
				best = d[i - 1][j] + 1u;
			if (d[i][j - 1] + 1u < best)
				best = d[i][j - 1] + 1u;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1u < best)
				best = d[i - 2][j - 2] + 1u;
			d[i][j] = (unsigned char)best;
		}
	return d[la][lb];
}

const char *kw_nearest(const char *word, const char *const *names)
{
	size_t len = strnlen(word, NAME_MAX_CMP), limit = len / 3 ? len / 3 : 1, best = limit + 1;
	const char *found = NULL;

	for (; *names; names++) {
		size_t d = kw_edit_distance(word, *names);

		if (d < best) {
			best = d;
			found = *names;
		}
	}
	return found;
}

char *kw_valid_names(char *buf, size_t n, const char *word, const char *const *names)
{
	const char *near = word ? kw_nearest(word, names) : NULL;
	size_t used = 0;

	if (!n)
		return buf;
	buf[0] = '\0';
	for (const char *const *p = names; *p && used < n; p++) {
		int w = snprintf(buf + used, n - used, "%s%s", p == names ? "valid: " : ", ", *p);

		if (w < 0)
			break;
		used += (size_t)w;
	}
	if (near && used < n)
		snprintf(buf + used, n - used, "; did you mean \"%s\"?", near);
	return buf;
}

/* What the file at path holds when it is a public key: "a public JWK",
 * "a PEM public key", else NULL. Reads its first bytes only. */
static const char *public_key_kind(const char *path)
{
	char head[4096];
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | O_NOFOLLOW);

	if (fd < 0)
		return NULL;
	got = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (got <= 0)
		return NULL;
	head[got] = '\0';
	if (strstr(head, "BEGIN PUBLIC KEY"))
		return "a PEM public key";
	if (strchr(head, '{') && strstr(head, "\"kty\"") && !strstr(head, "\"d\""))
		return "a public JWK";
	return NULL;
}

char *kw_msg_signing_key(char *buf, size_t n, const char *path, int err, const char *flag)
{
	const char *pub = path && (err == -EPERM || err == -EINVAL) ? public_key_kind(path) : NULL;

	if (!path)
		snprintf(buf, n, "TRACE_PRIVATE_KEY_PEM holds no unencrypted Ed25519 private key "
			 "(PKCS#8 PEM; `kwitness keygen --out FILE` writes one)");
	else if (pub)
		snprintf(buf, n, "%s is %s, not a signing key: give the private key file "
			 "`kwitness keygen --out FILE` wrote (%s FILE)", path, pub, flag);
	else if (err == -ENOENT)
		snprintf(buf, n, "no signing key at %s: create one with `kwitness keygen --out %s`, "
			 "or give another with %s FILE", path, path, flag);
	else if (err == -EPERM)
		snprintf(buf, n, "refusing key %s: it is group- or world-accessible or owned by "
			 "another user (run: chmod 600 %s)", path, path);
	else if (err == -EINVAL)
		snprintf(buf, n, "%s is not an unencrypted Ed25519 private key (PKCS#8 PEM; "
			 "`kwitness keygen --out FILE` writes one)", path);
	else if (err == -EACCES)
		snprintf(buf, n, "%s: permission denied (the key is readable by its owner only: "
			 "run as that user or root)", path);
	else
		snprintf(buf, n, "%s: %s", path, strerror(-err));
	return buf;
}

char *kw_msg_unreachable(char *buf, size_t n, const char *socket, int e)
{
	if (e == EACCES || e == EPERM)
		snprintf(buf, n, "cannot reach kwitnessd at %s: %s (run as root, or as a member of "
			 "the socket's group: `group` in kwitnessd.conf)", socket, strerror(e));
	else
		snprintf(buf, n, "cannot reach kwitnessd at %s: %s (start it: `systemctl start "
			 "kwitnessd`; or give its socket with --socket PATH or KWITNESS_SOCKET)",
			 socket, strerror(e));
	return buf;
}

void kw_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "; see `%s --help`\n", cmd);
}

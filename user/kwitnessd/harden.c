/* SPDX-License-Identifier: Apache-2.0 */
/* Keeping the collector's secrets and files its own: no core dumps, no
 * ptrace or /proc reads by same-uid processes, the signing key in locked
 * memory and out of the environment, and folders that only root can change
 * (otherwise another user could swap a log, the socket or a pin for a
 * symlink between our check and our use). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/crypto.h>
#include "harden.h"


/* The secure heap holds the key file while it is parsed (64 KiB at most) and
 * the private key itself; a power of two, locked, never in a core dump. */
#define KWD_SECURE_HEAP (256 * 1024)
#define KWD_KEY_ENV "TRACE_PRIVATE_KEY_PEM"

int kwd_harden_process(char *err, size_t errlen)
{
	struct rlimit none = { 0, 0 }, unlimited = { RLIM_INFINITY, RLIM_INFINITY };

	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 || setrlimit(RLIMIT_CORE, &none) < 0) {
		snprintf(err, errlen, "no core dumps: %s", strerror(errno));
		return -errno;
	}
	/* Locked memory for the secure heap (and, later, BPF maps). */
	setrlimit(RLIMIT_MEMLOCK, &unlimited);
	if (CRYPTO_secure_malloc_init(KWD_SECURE_HEAP, 32) != 1) {
		snprintf(err, errlen, "locked memory for the signing key (%d KiB): %s",
			 KWD_SECURE_HEAP / 1024, strerror(errno ? errno : ENOMEM));
		return -ENOMEM;
	}
	return 0;
}

size_t kwd_key_locked_bytes(void)
{
	return CRYPTO_secure_malloc_initialized() ? CRYPTO_secure_used() : 0;
}

void kwd_wipe_env_key(void)
{
	char *v = getenv(KWD_KEY_ENV);

	/* The kernel shows the environment it placed at exec through
	 * /proc/PID/environ: unsetenv alone leaves those bytes there. */
	if (v) {
		char *entry = v - (sizeof(KWD_KEY_ENV "=") - 1);

		OPENSSL_cleanse(entry, strlen(entry));
	}
	unsetenv(KWD_KEY_ENV);
}

/* Not root's (or ours), or writable by group or others. A sticky folder
 * (like /tmp) may be world-writable: others cannot rename what they do
 * not own in it. */
static const char *unsafe_reason(const struct stat *st, bool allow_sticky, char *buf, size_t len)
{
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(buf, len, "owned by uid %u, not root", (unsigned)st->st_uid);
		return buf;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(allow_sticky && (st->st_mode & S_ISVTX))) {
		snprintf(buf, len, "writable by group or others (mode %04o)",
			 (unsigned)(st->st_mode & 07777));
		return buf;
	}
	return NULL;
}

int kwd_check_dir(const char *what, const char *path, char *err, size_t errlen)
{
	char real[PATH_MAX], why[64];
	struct stat st;
	const char *bad;
	char *slash;

	if (!realpath(path, real)) {
		int e = -errno;

		snprintf(err, errlen, "%s %.300s: %s", what, path, strerror(errno));
		return e;
	}
	if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s %.300s: not a folder", what, path);
		return -ENOTDIR;
	}
	bad = unsafe_reason(&st, false, why, sizeof(why));
	if (bad) {
		snprintf(err, errlen, "%s %.300s is %s: refusing it", what, path, bad);
		return -EPERM;
	}
	/* Every folder above it: whoever can rename an entry there can swap
	 * this folder for another. */
	while ((slash = strrchr(real, '/')) != NULL) {
		if (slash == real)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(real, &st) < 0) {
			snprintf(err, errlen, "%s %.300s: %s: %s", what, path, real, strerror(errno));
			return -errno;
		}
		bad = unsafe_reason(&st, true, why, sizeof(why));
		if (bad) {
			snprintf(err, errlen, "%s %.300s: its parent %.300s is %s: refusing it", what,
				 path, real, bad);
			return -EPERM;
		}
		if (slash == real)
			break;
	}
	return 0;
}

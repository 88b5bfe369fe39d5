/* SPDX-License-Identifier: Apache-2.0 */
/* The rootfs listing digest, see rootfs_digest.h. The listing is one line per
 * entry below the root, sorted by bytes:
 *   TYPE MODE UID:GID SIZE PATH[ -> TARGET]
 * TYPE is one of d f l c b p s, MODE four octal digits, SIZE the byte size of
 * a regular file or a link (0 otherwise), PATH relative to the root with "/"
 * separators; in PATH and TARGET every byte outside 0x21..0x7e, and "%", is
 * written %XX. The digest is sha256 over "kwitness-rootfs-listing v1\n" and
 * the lines, each ending in "\n". Symbolic links are never followed and mount
 * points below the root are not crossed, so the walk sees only the tree. */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "image/rootfs_digest.h"

#define LISTING_HEADER "kwitness-rootfs-listing v1\n"

/* nftw takes no context pointer: the walk's state lives here, one walk at a time. */
static struct {
	char **lines;
	size_t count, cap, root_len;
	int error;
} walk;

static void put_escaped(struct kw_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p > 0x20 && *p < 0x7f && *p != '%') {
			kw_buf_putc(b, (char)*p);
		} else {
			kw_buf_putc(b, '%');
			kw_buf_putc(b, hex[*p >> 4]);
			kw_buf_putc(b, hex[*p & 15]);
		}
	}
}

static char type_char(mode_t m)
{
	return S_ISDIR(m) ? 'd' : S_ISREG(m) ? 'f' : S_ISLNK(m) ? 'l' : S_ISCHR(m) ? 'c' :
	       S_ISBLK(m) ? 'b' : S_ISFIFO(m) ? 'p' : 's';
}

static int visit(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	struct kw_buf b = { 0 };
	char head[96], target[PATH_MAX];

	(void)ftw;
	if (strlen(path) <= walk.root_len)
		return 0; /* the root itself */
	if (flag == FTW_NS || flag == FTW_DNR) {
		walk.error = EACCES;
		return 1;
	}
	if (walk.count >= KW_ROOTFS_MAX_ENTRIES) {
		walk.error = EFBIG;
		return 1;
	}
	if (walk.count == walk.cap) {
		char **n = kw_array_grow(walk.lines, &walk.cap, sizeof(*n), 1024);

		if (!n) {
			walk.error = ENOMEM;
			return 1;
		}
		walk.lines = n;
	}
	snprintf(head, sizeof(head), "%c %04o %u:%u %llu ", type_char(st->st_mode),
		 (unsigned)(st->st_mode & 07777), (unsigned)st->st_uid, (unsigned)st->st_gid,
		 S_ISREG(st->st_mode) || S_ISLNK(st->st_mode) ? (unsigned long long)st->st_size : 0ULL);
	kw_buf_puts(&b, head);
	put_escaped(&b, path + walk.root_len + 1);
	if (S_ISLNK(st->st_mode)) {
		ssize_t n = readlink(path, target, sizeof(target) - 1);

		if (n < 0) {
			kw_buf_free(&b);
			walk.error = errno;
			return 1;
		}
		target[n] = '\0';
		kw_buf_puts(&b, " -> ");
		put_escaped(&b, target);
	}
	if (kw_buf_putc(&b, '\n') || kw_buf_putc(&b, '\0')) {
		kw_buf_free(&b);
		walk.error = ENOMEM;
		return 1;
	}
	walk.lines[walk.count++] = b.data;
	return 0;
}

static int cmp_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int kw_rootfs_digest(const char *root, char out[KW_DIGEST_STR_MAX], char *err, size_t errlen)
{
	struct kw_digest d;
	struct stat st;
	char clean[PATH_MAX];
	size_t n = strlen(root);
	int e;

	while (n > 1 && root[n - 1] == '/')
		n--;
	if (n >= sizeof(clean)) {
		snprintf(err, errlen, "rootfs path too long");
		return -ENAMETOOLONG;
	}
	memcpy(clean, root, n);
	clean[n] = '\0';
	if (lstat(clean, &st)) {
		e = errno;
		snprintf(err, errlen, "rootfs %s: %s", clean, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "rootfs %s: not a directory", clean);
		return -ENOTDIR;
	}
	memset(&walk, 0, sizeof(walk));
	walk.root_len = n;
	e = nftw(clean, visit, 64, FTW_PHYS | FTW_MOUNT);
	if (e) {
		e = walk.error ? walk.error : errno;
		snprintf(err, errlen, "rootfs %s: %s", clean,
			 e == EFBIG ? "more entries than the listing limit" : strerror(e));
		e = -e;
		goto out;
	}
	qsort(walk.lines, walk.count, sizeof(*walk.lines), cmp_lines);
	e = kw_digest_init(&d, KW_SHA256);
	if (!e)
		e = kw_digest_update(&d, LISTING_HEADER, strlen(LISTING_HEADER));
	for (size_t i = 0; !e && i < walk.count; i++)
		e = kw_digest_update(&d, walk.lines[i], strlen(walk.lines[i]));
	if (!e)
		e = kw_digest_final(&d, out);
	else
		kw_digest_free(&d);
	if (e)
		snprintf(err, errlen, "rootfs digest: %s", strerror(-e));
out:
	for (size_t i = 0; i < walk.count; i++)
		free(walk.lines[i]);
	free(walk.lines);
	memset(&walk, 0, sizeof(walk));
	return e;
}

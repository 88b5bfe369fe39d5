/* SPDX-License-Identifier: Apache-2.0 */
/* The witness: one add-checkpoint request in, a cosignature (or an HTTP
 * status saying why not) out. Its state is a file per log origin in the state
 * directory, named by the SHA-256 of the origin: "<size> <base64 root>\n".
 * Checking the old size and storing the new checkpoint happen under one lock
 * (an older request must never roll the state back). */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <openssl/sha.h>

#include "lib/base64.h"
#include "tlog/merkle.h"
#include "tlog/tiles.h"
#include "tlog/witness.h"

#define PROOF_LINES_MAX 63

struct state {
	uint64_t size;
	struct tlog_hash root;
};

static void state_name(const char *origin, char out[65 + 6])
{
	uint8_t h[32];

	SHA256((const uint8_t *)origin, strlen(origin), h);
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
	memcpy(out + 64, ".state", 7);
}

static int state_read(int dirfd, const char *origin, struct state *st)
{
	char name[72];
	struct kw_buf b = { 0 };
	const char *sp;
	size_t n;
	int ret;

	state_name(origin, name);
	memset(st, 0, sizeof(*st));
	ret = tlog_read_at(dirfd, name, 128, &b);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	sp = b.len ? memchr(b.data, ' ', b.len) : NULL;
	if (!sp || b.data[b.len - 1] != '\n' ||
	    tlog_parse_u64(b.data, (size_t)(sp - b.data), &st->size) ||
	    kw_b64_decode(KW_B64_STD, sp + 1, b.len - (size_t)(sp + 1 - b.data) - 1, st->root.b,
			    TLOG_HASH_LEN, &n) || n != TLOG_HASH_LEN)
		ret = -EBADMSG;
	kw_buf_free(&b);
	return ret;
}

static int state_write(int dirfd, const char *origin, const struct state *st)
{
	char name[72], tmp[96], line[96], b64[KW_B64_LEN(32)];
	int fd, ret = 0, n;

	state_name(origin, name);
	kw_b64_encode(KW_B64_STD, st->root.b, TLOG_HASH_LEN, b64);
	n = snprintf(line, sizeof(line), "%" PRIu64 " %s\n", st->size, b64);
	snprintf(tmp, sizeof(tmp), "%s.tmp%ld", name, (long)getpid());
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ret = kw_write_all(fd, line, (size_t)n);
	if (!ret && fsync(fd) < 0)
		ret = -errno;
	close(fd);
	if (!ret && renameat(dirfd, tmp, dirfd, name) < 0)
		ret = -errno;
	if (ret)
		unlinkat(dirfd, tmp, 0);
	else if (fsync(dirfd) < 0)
		ret = -errno;
	return ret;
}

static int conflict(struct kw_buf *resp, uint64_t size)
{
	char num[32];

	snprintf(num, sizeof(num), "%" PRIu64 "\n", size);
	kw_buf_reset(resp);
	kw_buf_puts(resp, num);
	return 409;
}

int tlog_witness_add_checkpoint(const struct tlog_witness *w, const char *req, size_t len,
				uint64_t now, struct kw_buf *resp)
{
	struct tlog_hash proof[PROOF_LINES_MAX];
	size_t count = 0, pos = 0, n;
	uint64_t old;
	struct tlog_note note;
	struct tlog_checkpoint cp;
	const struct tlog_key *log = NULL;
	bool seen = false, ok = false;
	struct state st;
	int lockfd, status;
	const char *nl;

	kw_buf_reset(resp);
	if (len > TLOG_WITNESS_REQUEST_MAX)
		return 400;
	nl = memchr(req, '\n', len);
	if (!nl || (size_t)(nl - req) < 5 || memcmp(req, "old ", 4) ||
	    tlog_parse_u64(req + 4, (size_t)(nl - req) - 4, &old))
		return 400;
	pos = (size_t)(nl - req) + 1;
	for (;;) {
		nl = pos < len ? memchr(req + pos, '\n', len - pos) : NULL;
		if (!nl)
			return 400;
		if (nl == req + pos) {
			pos++;
			break;
		}
		if (count == PROOF_LINES_MAX || nl - (req + pos) != 44 ||
		    kw_b64_decode(KW_B64_STD, req + pos, 44, proof[count].b, TLOG_HASH_LEN, &n) ||
		    n != TLOG_HASH_LEN)
			return 400;
		count++;
		pos = (size_t)(nl - req) + 1;
	}
	if (tlog_note_parse(req + pos, len - pos, &note) ||
	    tlog_checkpoint_parse(note.text, note.text_len, &cp))
		return 400;
	for (size_t i = 0; i < w->nlogs; i++) {
		if (strcmp(w->logs[i].name, cp.origin))
			continue;
		seen = true;
		if (tlog_note_verify(&note, &w->logs[i], NULL) == 0) {
			ok = true;
			log = &w->logs[i];
		}
	}
	if (!seen)
		return 404;
	if (!ok || !log)
		return 403;
	if (old > cp.size)
		return 400;

	lockfd = openat(w->statefd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lockfd < 0 || flock(lockfd, LOCK_EX) < 0) {
		if (lockfd >= 0)
			close(lockfd);
		return 500;
	}
	if (state_read(w->statefd, cp.origin, &st)) {
		status = 500;
	} else if (old != st.size) {
		status = conflict(resp, st.size);
	} else if (old == cp.size) {
		/* Same size: the same root, or a fork. */
		status = count == 0 && tlog_hash_equal(&st.root, &cp.root) ? 200 :
			 count ? 422 : conflict(resp, st.size);
	} else if (!tlog_consistency_verify(old, cp.size, &st.root, &cp.root, proof, count)) {
		status = 422;
	} else {
		st.size = cp.size;
		st.root = cp.root;
		status = state_write(w->statefd, cp.origin, &st) ? 500 : 200;
	}
	close(lockfd);
	if (status == 200 && tlog_note_sign(&w->key, note.text, note.text_len, now, resp))
		status = 500;
	return status;
}

int tlog_witness_request(uint64_t old, const struct tlog_hash *proof, size_t count,
			 const char *note, size_t note_len, struct kw_buf *out)
{
	char line[48];
	int ret;

	snprintf(line, sizeof(line), "old %" PRIu64 "\n", old);
	ret = kw_buf_puts(out, line);
	for (size_t i = 0; i < count && !ret; i++) {
		kw_b64_encode(KW_B64_STD, proof[i].b, TLOG_HASH_LEN, line);
		ret = kw_buf_puts(out, line);
		if (!ret)
			ret = kw_buf_putc(out, '\n');
	}
	if (!ret)
		ret = kw_buf_putc(out, '\n');
	if (!ret)
		ret = kw_buf_append(out, note, note_len);
	return ret;
}

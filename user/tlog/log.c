/* SPDX-License-Identifier: Apache-2.0 */
/* The log writer. An append writes, in order: the pending size (the journal
 * entry: temporary file, fsync, rename, fsync of its directory), every new or
 * changed tile and entry bundle (temporary file, rename), one flush of the
 * file system (syncfs: their data and names together, instead of an fsync
 * per file and per directory), the new checkpoint (as the journal: the
 * commit point), and then drops the pending size. A reader never sees
 * a checkpoint whose tiles are not on disk. Opening after a crash deletes the
 * files a torn append may have left past the checkpoint, so the next append
 * starts clean. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/buf.h"
#include "tlog/log.h"
#include "tlog/tiles.h"

#define STATE_DIR ".kwitness"
#define LOCK_PATH STATE_DIR "/lock"
#define PENDING_PATH STATE_DIR "/pending"
#define CHECKPOINT_PATH "checkpoint"
#define BUNDLE_MAX ((size_t)TLOG_TILE_WIDTH * (TLOG_ENTRY_MAX + 2))

struct edge {
	unsigned w;
	struct tlog_hash h[TLOG_TILE_WIDTH];
};

struct tlog_log {
	int dirfd, lockfd;
	const struct tlog_key *key;
	uint64_t size;
	struct tlog_hash root;
	struct kw_buf checkpoint;
	/* The right edge: the partial tile of each level, the partial bundle. */
	struct edge edge[TLOG_LEVELS];
	struct kw_buf bundle;
	/* An append failed half-way: the edge in memory is not the disk's. */
	bool broken;
	/* Directories written into since the last sync. */
	char (*dirty)[TLOG_PATH_MAX];
	size_t ndirty, capdirty;
};

/* mkdir -p for the parents of path, below dirfd. */
static int make_parents(int dirfd, const char *path)
{
	char p[TLOG_PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(p))
		return -ENAMETOOLONG;
	memcpy(p, path, n + 1);
	for (char *s = strchr(p, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdirat(dirfd, p, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

static int note_dirty(struct tlog_log *l, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dl = slash ? (size_t)(slash - path) : 0;
	char d[TLOG_PATH_MAX];

	if (dl == 0) {
		d[0] = '.';
		d[1] = '\0';
	} else {
		memcpy(d, path, dl);
		d[dl] = '\0';
	}
	for (size_t i = 0; i < l->ndirty; i++)
		if (!strcmp(l->dirty[i], d))
			return 0;
	if (l->ndirty == l->capdirty) {
		void *p = kw_array_grow(l->dirty, &l->capdirty, sizeof(*l->dirty), 16);

		if (!p)
			return -ENOMEM;
		l->dirty = p;
	}
	memcpy(l->dirty[l->ndirty++], d, strlen(d) + 1);
	return 0;
}

static int sync_dir(int dirfd, const char *d)
{
	int fd = openat(dirfd, d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int sync_dirty(struct tlog_log *l)
{
	int ret = 0;

	for (size_t i = 0; i < l->ndirty && !ret; i++)
		ret = sync_dir(l->dirfd, l->dirty[i]);
	l->ndirty = 0;
	return ret;
}

/* Temporary file beside path, fsync, rename over path (not yet durable: the
 * directory is synced by sync_dirty). */
static int write_file_sync(struct tlog_log *l, const char *path, const void *data, size_t len,
			   bool sync)
{
	char tmp[TLOG_PATH_MAX + 16];
	int fd, ret;

	ret = make_parents(l->dirfd, path);
	if (ret)
		return ret;
	snprintf(tmp, sizeof(tmp), "%s.tmp%ld", path, (long)getpid());
	fd = openat(l->dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	ret = kw_write_all(fd, data, len);
	if (!ret && sync && fsync(fd) < 0)
		ret = -errno;
	if (close(fd) < 0 && !ret)
		ret = -errno;
	if (!ret && renameat(l->dirfd, tmp, l->dirfd, path) < 0)
		ret = -errno;
	if (ret) {
		unlinkat(l->dirfd, tmp, 0);
		return ret;
	}
	return note_dirty(l, path);
}

static int write_file(struct tlog_log *l, const char *path, const void *data, size_t len)
{
	return write_file_sync(l, path, data, len, true);
}

/* The tiles and bundles of an append: written without a flush each, then
 * made durable together (files and names) by one flush of the file system,
 * before the checkpoint that names them. */
static int write_tile(struct tlog_log *l, const char *path, const void *data, size_t len)
{
	return write_file_sync(l, path, data, len, false);
}

static int sync_tiles(struct tlog_log *l)
{
	l->ndirty = 0;
	return syncfs(l->dirfd) < 0 ? -errno : 0;
}

int tlog_read_checkpoint(int dirfd, struct kw_buf *buf, struct tlog_note *note,
			 struct tlog_checkpoint *cp)
{
	int ret = tlog_read_at(dirfd, CHECKPOINT_PATH, TLOG_NOTE_MAX, buf);

	if (ret)
		return ret;
	if (tlog_note_parse(buf->data, buf->len, note) ||
	    tlog_checkpoint_parse(note->text, note->text_len, cp))
		return -EBADMSG;
	return 0;
}

/* The tree hash of 2^k hashes (a perfect subtree). */
static void perfect_hash(const struct tlog_hash *h, unsigned count, struct tlog_hash *out)
{
	struct tlog_hash a, b;

	if (count == 1) {
		*out = h[0];
		return;
	}
	perfect_hash(h, count / 2, &a);
	perfect_hash(h + count / 2, count / 2, &b);
	tlog_node_hash(&a, &b, out);
}

/* The root from the right edge: its perfect subtrees, largest first, folded
 * from the right. */
static void edge_root(const struct tlog_log *l, struct tlog_hash *out)
{
	struct tlog_hash parts[TLOG_LEVELS * TLOG_TILE_HEIGHT];
	size_t np = 0;

	for (int L = TLOG_LEVELS - 1; L >= 0; L--) {
		unsigned off = 0;

		for (int b = TLOG_TILE_HEIGHT - 1; b >= 0; b--)
			if (l->edge[L].w & (1u << b)) {
				perfect_hash(&l->edge[L].h[off], 1u << b, &parts[np++]);
				off += 1u << b;
			}
	}
	if (np == 0) {
		tlog_empty_root(out);
		return;
	}
	*out = parts[np - 1];
	for (size_t i = np - 1; i-- > 0;)
		tlog_node_hash(&parts[i], out, out);
}

static int sign_checkpoint(const struct tlog_key *key, uint64_t size,
			   const struct tlog_hash *root, struct kw_buf *out)
{
	struct tlog_checkpoint cp = { .size = size, .root = *root };
	struct kw_buf text = { 0 };
	int ret;

	memcpy(cp.origin, key->name, sizeof(cp.origin));
	kw_buf_reset(out);
	ret = tlog_checkpoint_format(&cp, &text);
	if (!ret && (kw_buf_append(out, text.data, text.len) || kw_buf_putc(out, '\n')))
		ret = -ENOMEM;
	if (!ret)
		ret = tlog_note_sign(key, text.data, text.len, 0, out);
	kw_buf_free(&text);
	return ret;
}

int tlog_log_create(const char *dir, const struct tlog_key *key)
{
	struct tlog_log l = { .dirfd = -1 };
	struct tlog_hash root;
	struct kw_buf cp = { 0 };
	int ret;

	if (key->type != TLOG_SIG_ED25519)
		return -EINVAL;
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	l.dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (l.dirfd < 0)
		return -errno;
	if (faccessat(l.dirfd, CHECKPOINT_PATH, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		close(l.dirfd);
		return -EEXIST;
	}
	ret = 0;
	if (mkdirat(l.dirfd, STATE_DIR, 0700) < 0 && errno != EEXIST)
		ret = -errno;
	tlog_empty_root(&root);
	if (!ret)
		ret = sign_checkpoint(key, 0, &root, &cp);
	if (!ret)
		ret = write_file(&l, CHECKPOINT_PATH, cp.data, cp.len);
	if (!ret)
		ret = sync_dirty(&l);
	kw_buf_free(&cp);
	free(l.dirty);
	close(l.dirfd);
	return ret;
}

/* Files a torn append towards `target` may have written that the tree of
 * `size` does not need: new full tiles and bundles, and partial ones of the
 * target's widths. Deleting them leaves exactly the published log. */
static void undo_torn(struct tlog_log *l, uint64_t size, uint64_t target)
{
	char path[TLOG_PATH_MAX];

	for (int L = -1; L < TLOG_LEVELS; L++) {
		unsigned lvl = L < 0 ? 0 : (unsigned)L;
		unsigned shift = (lvl + 1) * TLOG_TILE_HEIGHT;
		uint64_t old_full = size >> shift, new_full = target >> shift;
		unsigned old_w = tlog_partial_width(size, lvl), new_w = tlog_partial_width(target, lvl);

		for (uint64_t n = old_full; n < new_full; n++)
			if (!tlog_tile_path(path, sizeof(path), L, n, 0))
				unlinkat(l->dirfd, path, 0);
		if (new_w && !(new_full == old_full && new_w == old_w) &&
		    !tlog_tile_path(path, sizeof(path), L, new_full, new_w))
			unlinkat(l->dirfd, path, 0);
	}
}

static int recover(struct tlog_log *l)
{
	struct kw_buf b = { 0 };
	uint64_t target;
	int ret = tlog_read_at(l->dirfd, PENDING_PATH, 32, &b);

	if (ret == -ENOENT)
		return 0;
	if (ret)
		goto out;
	if (b.len < 2 || b.data[b.len - 1] != '\n' || tlog_parse_u64(b.data, b.len - 1, &target)) {
		ret = -EBADMSG;
		goto out;
	}
	if (target > l->size && target <= TLOG_SIZE_MAX)
		undo_torn(l, l->size, target);
	if (unlinkat(l->dirfd, PENDING_PATH, 0) < 0 && errno != ENOENT)
		ret = -errno;
	if (!ret)
		ret = sync_dir(l->dirfd, STATE_DIR);
out:
	kw_buf_free(&b);
	return ret;
}

static int load_edge(struct tlog_log *l)
{
	char path[TLOG_PATH_MAX];
	struct kw_buf b = { 0 };
	int ret = 0;

	for (unsigned L = 0; L < TLOG_LEVELS && !ret; L++) {
		unsigned w = tlog_partial_width(l->size, L);

		l->edge[L].w = w;
		if (!w)
			continue;
		ret = tlog_tile_path(path, sizeof(path), (int)L,
				     l->size >> ((L + 1) * TLOG_TILE_HEIGHT), w);
		if (!ret)
			ret = tlog_read_at(l->dirfd, path, TLOG_TILE_BYTES, &b);
		if (!ret && b.len != (size_t)w * TLOG_HASH_LEN)
			ret = -EBADMSG;
		if (!ret)
			memcpy(l->edge[L].h, b.data, b.len);
	}
	kw_buf_reset(&l->bundle);
	if (!ret && l->edge[0].w) {
		ret = tlog_tile_path(path, sizeof(path), TLOG_ENTRIES_LEVEL,
				     l->size / TLOG_TILE_WIDTH, l->edge[0].w);
		if (!ret)
			ret = tlog_read_at(l->dirfd, path, BUNDLE_MAX, &l->bundle);
	}
	/* The bundle's entries must hash to the level-0 partial tile. */
	for (size_t pos = 0, i = 0; !ret && (pos < l->bundle.len || i < l->edge[0].w); i++) {
		struct tlog_hash h;
		size_t len;

		if (i >= l->edge[0].w || l->bundle.len - pos < 2) {
			ret = -EBADMSG;
			break;
		}
		len = (size_t)(uint8_t)l->bundle.data[pos] << 8 | (uint8_t)l->bundle.data[pos + 1];
		if (l->bundle.len - pos - 2 < len) {
			ret = -EBADMSG;
			break;
		}
		tlog_leaf_hash(l->bundle.data + pos + 2, len, &h);
		if (!tlog_hash_equal(&h, &l->edge[0].h[i]))
			ret = -EBADMSG;
		pos += 2 + len;
	}
	kw_buf_free(&b);
	return ret == -ENOENT ? -EBADMSG : ret;
}

int tlog_log_open(const char *dir, const struct tlog_key *key, struct tlog_log **out)
{
	struct tlog_log *l = calloc(1, sizeof(*l));
	struct tlog_note note;
	struct tlog_checkpoint cp;
	struct tlog_hash root;
	int ret;

	if (!l)
		return -ENOMEM;
	l->lockfd = -1;
	l->key = key;
	l->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (l->dirfd < 0) {
		ret = -errno;
		goto fail;
	}
	if (mkdirat(l->dirfd, STATE_DIR, 0700) < 0 && errno != EEXIST) {
		ret = -errno;
		goto fail;
	}
	l->lockfd = openat(l->dirfd, LOCK_PATH, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (l->lockfd < 0 || flock(l->lockfd, LOCK_EX) < 0) {
		ret = -errno;
		goto fail;
	}
	ret = tlog_read_checkpoint(l->dirfd, &l->checkpoint, &note, &cp);
	if (ret)
		goto fail;
	if (strcmp(cp.origin, key->name) || tlog_note_verify(&note, key, NULL) ||
	    cp.size > TLOG_SIZE_MAX) {
		ret = -EKEYREJECTED;
		goto fail;
	}
	l->size = cp.size;
	l->root = cp.root;
	ret = recover(l);
	if (!ret)
		ret = load_edge(l);
	if (ret)
		goto fail;
	edge_root(l, &root);
	if (!tlog_hash_equal(&root, &cp.root)) {
		ret = -EBADMSG;
		goto fail;
	}
	*out = l;
	return 0;
fail:
	tlog_log_close(l);
	return ret;
}

static int put_bundle_entry(struct kw_buf *b, const void *data, size_t len)
{
	uint8_t pre[2] = { (uint8_t)(len >> 8), (uint8_t)len };

	if (kw_buf_append(b, pre, 2) || kw_buf_append(b, data, len))
		return -ENOMEM;
	return 0;
}

/* Adds hash h at level L; a tile that fills up is written and its root
 * carried to the level above. */
static int push_hash(struct tlog_log *l, unsigned L, uint64_t size_after,
		     const struct tlog_hash *h)
{
	char path[TLOG_PATH_MAX];
	struct tlog_hash top;
	int ret;

	if (L >= TLOG_LEVELS)
		return -EFBIG;
	l->edge[L].h[l->edge[L].w++] = *h;
	if (l->edge[L].w < TLOG_TILE_WIDTH)
		return 0;
	ret = tlog_tile_path(path, sizeof(path), (int)L,
			     (size_after >> ((L + 1) * TLOG_TILE_HEIGHT)) - 1, 0);
	if (!ret)
		ret = write_tile(l, path, l->edge[L].h, TLOG_TILE_BYTES);
	if (ret)
		return ret;
	perfect_hash(l->edge[L].h, TLOG_TILE_WIDTH, &top);
	l->edge[L].w = 0;
	return push_hash(l, L + 1, size_after, &top);
}

int tlog_log_append(struct tlog_log *l, const void *const *entries, const size_t *lens,
		    size_t n, uint64_t *first)
{
	uint64_t old = l->size, target = l->size + n;
	unsigned old_w[TLOG_LEVELS];
	char path[TLOG_PATH_MAX], num[32];
	struct kw_buf cp = { 0 };
	int ret;

	if (l->broken)
		return -EIO;
	if (n == 0 || n > TLOG_SIZE_MAX || target > TLOG_SIZE_MAX)
		return -EFBIG;
	for (size_t i = 0; i < n; i++)
		if (lens[i] > TLOG_ENTRY_MAX)
			return -EMSGSIZE;
	for (unsigned L = 0; L < TLOG_LEVELS; L++)
		old_w[L] = l->edge[L].w;
	/* The journal: a crash from here on is undone by the next open. */
	snprintf(num, sizeof(num), "%" PRIu64 "\n", target);
	ret = write_file(l, PENDING_PATH, num, strlen(num));
	if (!ret)
		ret = sync_dirty(l);
	for (size_t i = 0; i < n && !ret; i++) {
		struct tlog_hash h;
		uint64_t size_after = old + i + 1;

		tlog_leaf_hash(entries[i], lens[i], &h);
		ret = put_bundle_entry(&l->bundle, entries[i], lens[i]);
		if (!ret && size_after % TLOG_TILE_WIDTH == 0) {
			ret = tlog_tile_path(path, sizeof(path), TLOG_ENTRIES_LEVEL,
					     size_after / TLOG_TILE_WIDTH - 1, 0);
			if (!ret)
				ret = write_tile(l, path, l->bundle.data, l->bundle.len);
			kw_buf_reset(&l->bundle);
		}
		if (!ret)
			ret = push_hash(l, 0, size_after, &h);
	}
	/* The partial tiles and bundle of the new size. */
	for (unsigned L = 0; L < TLOG_LEVELS && !ret; L++) {
		unsigned w = l->edge[L].w;
		uint64_t tn = target >> ((L + 1) * TLOG_TILE_HEIGHT);

		if (!w || (w == old_w[L] && tn == old >> ((L + 1) * TLOG_TILE_HEIGHT)))
			continue;
		ret = tlog_tile_path(path, sizeof(path), (int)L, tn, w);
		if (!ret)
			ret = write_tile(l, path, l->edge[L].h, (size_t)w * TLOG_HASH_LEN);
	}
	if (!ret && l->edge[0].w) {
		ret = tlog_tile_path(path, sizeof(path), TLOG_ENTRIES_LEVEL,
				     target / TLOG_TILE_WIDTH, l->edge[0].w);
		if (!ret)
			ret = write_tile(l, path, l->bundle.data, l->bundle.len);
	}
	if (!ret)
		ret = sync_tiles(l);
	/* The commit point. */
	if (!ret) {
		edge_root(l, &l->root);
		ret = sign_checkpoint(l->key, target, &l->root, &cp);
	}
	if (!ret)
		ret = write_file(l, CHECKPOINT_PATH, cp.data, cp.len);
	if (!ret)
		ret = sync_dirty(l);
	if (!ret) {
		l->size = target;
		kw_buf_reset(&l->checkpoint);
		ret = kw_buf_append(&l->checkpoint, cp.data, cp.len);
		if (first)
			*first = old;
		/* Not flushed: a journal that outlives a crash names the
		 * checkpoint's own size, past which recover() finds nothing. */
		unlinkat(l->dirfd, PENDING_PATH, 0);
	}
	kw_buf_free(&cp);
	/* Reopening recovers; this handle may not append again. */
	if (ret)
		l->broken = true;
	return ret;
}

int tlog_log_add_signatures(struct tlog_log *l, const char *text, size_t text_len,
			    const char *lines, size_t lines_len)
{
	struct tlog_note note;
	struct kw_buf nb = { 0 };
	int ret;

	if (tlog_note_parse(l->checkpoint.data, l->checkpoint.len, &note))
		return -EBADMSG;
	if (note.text_len != text_len || memcmp(note.text, text, text_len))
		return -ESTALE;
	if (kw_buf_append(&nb, l->checkpoint.data, l->checkpoint.len) ||
	    kw_buf_append(&nb, lines, lines_len)) {
		kw_buf_free(&nb);
		return -ENOMEM;
	}
	/* The result must still be a well-formed note. */
	ret = tlog_note_parse(nb.data, nb.len, &note) ? -EINVAL : 0;
	if (!ret)
		ret = write_file(l, CHECKPOINT_PATH, nb.data, nb.len);
	if (!ret)
		ret = sync_dirty(l);
	if (!ret) {
		kw_buf_free(&l->checkpoint);
		l->checkpoint = nb;
	} else {
		kw_buf_free(&nb);
	}
	return ret;
}

uint64_t tlog_log_size(const struct tlog_log *l)
{
	return l->size;
}

const struct kw_buf *tlog_log_checkpoint(const struct tlog_log *l)
{
	return &l->checkpoint;
}

int tlog_log_dirfd(const struct tlog_log *l)
{
	return l->dirfd;
}

void tlog_log_close(struct tlog_log *l)
{
	if (!l)
		return;
	if (l->lockfd >= 0)
		close(l->lockfd);
	if (l->dirfd >= 0)
		close(l->dirfd);
	kw_buf_free(&l->checkpoint);
	kw_buf_free(&l->bundle);
	free(l->dirty);
	free(l);
}

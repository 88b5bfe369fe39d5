/* SPDX-License-Identifier: Apache-2.0 */
/* Tile paths and reading hashes and entries back from a log directory. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tlog/tiles.h"

int tlog_tile_path(char *buf, size_t cap, int level, uint64_t n, unsigned width)
{
	char idx[64];
	size_t o = 0;
	int len;
	uint64_t groups[8];
	int ng = 0;

	/* 1234067 -> x001/x234/067 */
	do {
		groups[ng++] = n % 1000;
		n /= 1000;
	} while (n && ng < 8);
	if (n)
		return -ERANGE;
	for (int i = ng - 1; i >= 0; i--)
		o += (size_t)snprintf(idx + o, sizeof(idx) - o, "%s%03" PRIu64 "%s",
				      i ? "x" : "", groups[i], i ? "/" : "");
	if (level == TLOG_ENTRIES_LEVEL)
		len = snprintf(buf, cap, "tile/entries/%s", idx);
	else
		len = snprintf(buf, cap, "tile/%d/%s", level, idx);
	if (len < 0 || (size_t)len >= cap)
		return -ENAMETOOLONG;
	if (width && width < TLOG_TILE_WIDTH) {
		int l2 = snprintf(buf + len, cap - (size_t)len, ".p/%u", width);

		if (l2 < 0 || (size_t)l2 >= cap - (size_t)len)
			return -ENAMETOOLONG;
	}
	return 0;
}

unsigned tlog_partial_width(uint64_t size, unsigned level)
{
	if (level * TLOG_TILE_HEIGHT >= 64)
		return 0;
	return (unsigned)((size >> (level * TLOG_TILE_HEIGHT)) % TLOG_TILE_WIDTH);
}

unsigned tlog_tile_width(uint64_t size, unsigned level, uint64_t n)
{
	unsigned shift = (level + 1) * TLOG_TILE_HEIGHT;
	uint64_t full = shift >= 64 ? 0 : size >> shift;

	if (n < full)
		return TLOG_TILE_WIDTH;
	if (n == full)
		return tlog_partial_width(size, level);
	return 0;
}

int tlog_read_at(int dirfd, const char *path, size_t max, struct kw_buf *out)
{
	int fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	int ret;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	kw_buf_reset(out);
	ret = kw_read_fd(fd, max, out);
	close(fd);
	return ret;
}

void tlog_tiles_init(struct tlog_tiles *t, int dirfd, uint64_t size)
{
	memset(t, 0, sizeof(*t));
	t->dirfd = dirfd;
	t->size = size;
	for (size_t i = 0; i < sizeof(t->cache) / sizeof(t->cache[0]); i++)
		t->cache[i].level = -2;
}

/* Hash tile n at level with the width the tree size gives. */
static const struct tile_cache *load_tile(struct tlog_tiles *t, int level, uint64_t n)
{
	unsigned width = tlog_tile_width(t->size, (unsigned)level, n);
	char path[TLOG_PATH_MAX];
	struct kw_buf b = { 0 };
	struct tile_cache *c;
	size_t want = (size_t)width * TLOG_HASH_LEN;

	if (width == 0)
		return NULL;
	for (size_t i = 0; i < sizeof(t->cache) / sizeof(t->cache[0]); i++)
		if (t->cache[i].level == level && t->cache[i].n == n && t->cache[i].width == width)
			return &t->cache[i];
	if (tlog_tile_path(path, sizeof(path), level, n, width))
		return NULL;
	c = &t->cache[t->next++ % (sizeof(t->cache) / sizeof(t->cache[0]))];
	c->level = -2;
	if (tlog_read_at(t->dirfd, path, TLOG_TILE_BYTES, &b) || b.len != want) {
		kw_buf_free(&b);
		return NULL;
	}
	memcpy(c->data, b.data, b.len);
	c->len = b.len;
	c->level = level;
	c->n = n;
	c->width = width;
	kw_buf_free(&b);
	return c;
}

int tlog_tiles_read_node(void *ctx, unsigned level, uint64_t index, struct tlog_hash *out)
{
	struct tlog_tiles *t = ctx;
	unsigned L = level / TLOG_TILE_HEIGHT, r = level % TLOG_TILE_HEIGHT;
	uint64_t first, n;
	unsigned off, count;
	struct tlog_hash h[TLOG_TILE_WIDTH / 2];
	const struct tile_cache *c;
	struct node_cache *nc = &t->nodes[(index * 31 + level) % 256];

	if (L >= TLOG_LEVELS || index >= (TLOG_SIZE_MAX >> level))
		return -ERANGE;
	/* The node is the hash of 2^r consecutive hashes of a level-L tile. */
	first = index << r;
	n = first / TLOG_TILE_WIDTH;
	off = (unsigned)(first % TLOG_TILE_WIDTH);
	count = 1u << r;
	c = load_tile(t, (int)L, n);
	if (!c || (size_t)(off + count) * TLOG_HASH_LEN > c->len)
		return -ENOENT;
	if (count == 1) {
		memcpy(out->b, c->data + (size_t)off * TLOG_HASH_LEN, TLOG_HASH_LEN);
		return 0;
	}
	if (nc->level == level && nc->index == index) {
		*out = nc->h;
		return 0;
	}
	for (unsigned i = 0; i < count / 2; i++) {
		struct tlog_hash a, b;

		memcpy(a.b, c->data + (size_t)(off + 2 * i) * TLOG_HASH_LEN, TLOG_HASH_LEN);
		memcpy(b.b, c->data + (size_t)(off + 2 * i + 1) * TLOG_HASH_LEN, TLOG_HASH_LEN);
		tlog_node_hash(&a, &b, &h[i]);
	}
	for (unsigned w = count / 2; w > 1; w /= 2)
		for (unsigned i = 0; i < w / 2; i++)
			tlog_node_hash(&h[2 * i], &h[2 * i + 1], &h[i]);
	*out = h[0];
	nc->level = level;
	nc->index = index;
	nc->h = h[0];
	return 0;
}

int tlog_tiles_read_entry(struct tlog_tiles *t, uint64_t index, struct kw_buf *out)
{
	uint64_t n = index / TLOG_TILE_WIDTH;
	unsigned want = (unsigned)(index % TLOG_TILE_WIDTH);
	unsigned width = tlog_tile_width(t->size, 0, n);
	char path[TLOG_PATH_MAX];
	struct kw_buf b = { 0 };
	size_t pos = 0;
	int ret;

	if (index >= t->size || width == 0)
		return -ERANGE;
	ret = tlog_tile_path(path, sizeof(path), TLOG_ENTRIES_LEVEL, n, width);
	if (!ret)
		ret = tlog_read_at(t->dirfd, path, (size_t)width * (TLOG_ENTRY_MAX + 2), &b);
	for (unsigned i = 0; !ret && i <= want; i++) {
		size_t len;

		if (b.len - pos < 2) {
			ret = -EBADMSG;
			break;
		}
		len = (size_t)(uint8_t)b.data[pos] << 8 | (uint8_t)b.data[pos + 1];
		pos += 2;
		if (b.len - pos < len) {
			ret = -EBADMSG;
			break;
		}
		if (i == want) {
			kw_buf_reset(out);
			ret = kw_buf_append(out, b.data + pos, len);
		}
		pos += len;
	}
	kw_buf_free(&b);
	return ret;
}

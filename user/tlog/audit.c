/* SPDX-License-Identifier: Apache-2.0 */
/* The audit: bottom up, one tile at a time. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "tlog/audit.h"
#include "tlog/tiles.h"

static void perfect(const struct tlog_hash *h, unsigned n, struct tlog_hash *out)
{
	struct tlog_hash a, b;

	if (n == 1) {
		*out = h[0];
		return;
	}
	perfect(h, n / 2, &a);
	perfect(h + n / 2, n / 2, &b);
	tlog_node_hash(&a, &b, out);
}

/* Compares the tile file (level, n, width) with the hashes expected. */
static int check_tile(int dirfd, int level, uint64_t n, unsigned width,
		      const struct tlog_hash *want, char *why, size_t whylen)
{
	char path[TLOG_PATH_MAX];
	struct kw_buf b = { 0 };
	int ret = tlog_tile_path(path, sizeof(path), level, n, width);

	if (!ret)
		ret = tlog_read_at(dirfd, path, TLOG_TILE_BYTES, &b);
	if (ret) {
		snprintf(why, whylen, "%s: %s", path, strerror(-ret));
		kw_buf_free(&b);
		return ret == -ENOENT ? -EBADMSG : ret;
	}
	if (b.len != (size_t)width * TLOG_HASH_LEN || memcmp(b.data, want, b.len)) {
		snprintf(why, whylen, "%s does not hold the hashes of the level below", path);
		ret = -EBADMSG;
	}
	kw_buf_free(&b);
	return ret;
}

int tlog_audit(int dirfd, uint64_t size, const struct tlog_hash *root, char *why, size_t whylen)
{
	/* Roots of the full tiles of the current level, feeding the next. */
	struct tlog_hash *cur = NULL, *next = NULL, tile[TLOG_TILE_WIDTH];
	uint64_t count = 0;
	struct kw_buf b = { 0 };
	char path[TLOG_PATH_MAX];
	int ret = 0;

	if (size > TLOG_SIZE_MAX)
		return -EFBIG;
	/* Level 0 from the entry bundles. */
	cur = calloc(size / TLOG_TILE_WIDTH + 1, sizeof(*cur));
	if (!cur)
		return -ENOMEM;
	for (uint64_t n = 0; n * TLOG_TILE_WIDTH < size && !ret; n++) {
		unsigned width = tlog_tile_width(size, 0, n), i = 0;
		size_t pos = 0;

		ret = tlog_tile_path(path, sizeof(path), TLOG_ENTRIES_LEVEL, n, width);
		if (!ret)
			ret = tlog_read_at(dirfd, path, (size_t)width * (TLOG_ENTRY_MAX + 2), &b);
		if (ret) {
			snprintf(why, whylen, "%s: %s", path, strerror(-ret));
			ret = ret == -ENOENT ? -EBADMSG : ret;
			break;
		}
		for (; pos < b.len && i < width; i++) {
			size_t len;

			if (b.len - pos < 2)
				break;
			len = (size_t)(uint8_t)b.data[pos] << 8 | (uint8_t)b.data[pos + 1];
			if (b.len - pos - 2 < len)
				break;
			tlog_leaf_hash(b.data + pos + 2, len, &tile[i]);
			pos += 2 + len;
		}
		if (i != width || pos != b.len) {
			snprintf(why, whylen, "%s does not hold %u well-formed entries", path, width);
			ret = -EBADMSG;
			break;
		}
		ret = check_tile(dirfd, 0, n, width, tile, why, whylen);
		if (!ret && width == TLOG_TILE_WIDTH)
			perfect(tile, TLOG_TILE_WIDTH, &cur[count++]);
	}
	/* Each level above from the full tiles' roots below. */
	for (unsigned L = 1; L < TLOG_LEVELS && !ret && count; L++) {
		uint64_t ncount = 0;

		next = calloc(count / TLOG_TILE_WIDTH + 1, sizeof(*next));
		if (!next) {
			ret = -ENOMEM;
			break;
		}
		for (uint64_t n = 0; n * TLOG_TILE_WIDTH < count && !ret; n++) {
			unsigned width = tlog_tile_width(size, L, n);

			ret = check_tile(dirfd, (int)L, n, width, &cur[n * TLOG_TILE_WIDTH], why, whylen);
			if (!ret && width == TLOG_TILE_WIDTH)
				perfect(&cur[n * TLOG_TILE_WIDTH], TLOG_TILE_WIDTH, &next[ncount++]);
		}
		free(cur);
		cur = next;
		next = NULL;
		count = ncount;
	}
	if (!ret) {
		struct tlog_tiles t;
		struct tlog_hash got;

		tlog_tiles_init(&t, dirfd, size);
		ret = tlog_tree_hash(tlog_tiles_read_node, &t, size, &got);
		if (ret) {
			snprintf(why, whylen, "the tiles do not cover %" PRIu64 " leaves", size);
			ret = -EBADMSG;
		} else if (!tlog_hash_equal(&got, root)) {
			snprintf(why, whylen, "the tree of %" PRIu64 " leaves has another root than the checkpoint's", size);
			ret = -EBADMSG;
		}
	}
	free(cur);
	free(next);
	kw_buf_free(&b);
	return ret;
}

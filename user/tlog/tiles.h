/* SPDX-License-Identifier: Apache-2.0 */
/* C2SP tlog-tiles (c2sp.org/tlog-tiles): the static files of a log. Tiles of
 * height 8: tile/<L>/<N>[.p/<W>] holds up to 256 hashes, each the tree hash
 * of 256^L leaves; tile/entries/<N>[.p/<W>] holds up to 256 entries, each a
 * big-endian uint16 length and the bytes. Reading nodes and entries back. */
#ifndef KWITNESS_TLOG_TILES_H
#define KWITNESS_TLOG_TILES_H

#include <stddef.h>
#include <stdint.h>

#include "lib/buf.h"
#include "tlog/merkle.h"

#define TLOG_TILE_HEIGHT 8
#define TLOG_TILE_WIDTH 256
#define TLOG_TILE_BYTES (TLOG_TILE_WIDTH * TLOG_HASH_LEN)
/* An entry bundle's length prefix is 16 bits. */
#define TLOG_ENTRY_MAX 65535
/* Levels 0..5 cover 2^48 leaves; kwitness refuses larger trees. */
#define TLOG_LEVELS 6
#define TLOG_SIZE_MAX (1ULL << 48)
#define TLOG_ENTRIES_LEVEL (-1)
#define TLOG_PATH_MAX 96

/* "tile/<level>/<N>[.p/<width>]", or "tile/entries/..." for level -1;
 * width 0 (or 256) names the full tile. 0 or -ENAMETOOLONG. */
int tlog_tile_path(char *buf, size_t cap, int level, uint64_t n, unsigned width);
/* The width of the rightmost (partial) tile at `level` in a tree of `size`
 * leaves: floor(size / 256^level) mod 256 (0: there is none). */
unsigned tlog_partial_width(uint64_t size, unsigned level);
/* The width of tile n at `level` in a tree of `size` leaves: 256 for a full
 * tile, the partial width for the rightmost, 0 past the end. */
unsigned tlog_tile_width(uint64_t size, unsigned level, uint64_t n);

/* A reader of a log directory's tiles for one tree size. */
struct tlog_tiles {
	int dirfd; /* borrowed */
	uint64_t size;
	struct tile_cache {
		int level;
		uint64_t n;
		unsigned width;
		size_t len;
		uint8_t data[TLOG_TILE_BYTES];
	} cache[4];
	unsigned next;
	/* Interior nodes already folded from a tile: proofs of neighbouring
	 * leaves share most of theirs. Direct-mapped. */
	struct node_cache {
		unsigned level; /* 0: empty (level-0 nodes are read, not folded) */
		uint64_t index;
		struct tlog_hash h;
	} nodes[256];
};

void tlog_tiles_init(struct tlog_tiles *t, int dirfd, uint64_t size);
/* A tlog_node_reader over the tiles (ctx is the struct tlog_tiles). */
int tlog_tiles_read_node(void *ctx, unsigned level, uint64_t index, struct tlog_hash *out);
/* Entry `index` (< size) from its bundle. */
int tlog_tiles_read_entry(struct tlog_tiles *t, uint64_t index, struct kw_buf *out);
/* A whole file of the log, below dirfd, no symlinks followed. */
int tlog_read_at(int dirfd, const char *path, size_t max, struct kw_buf *out);

#endif

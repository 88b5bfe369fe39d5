/* SPDX-License-Identifier: Apache-2.0 */
/* A session's BPF ring buffer, read without losing what the collector has
 * not written yet. The kernel's consumer position is only moved past a record
 * once its log line has been written to the file (kwd_ring_release, from the
 * I/O thread): a collector killed at any moment leaves every event it had not
 * written in the ring buffer, for the next collector to read again (it skips
 * the sequence numbers its log already holds). Reading runs ahead of the
 * consumer position; records read but not released are listed (end position,
 * seq) in ring order. */
#ifndef KWITNESSD_RING_H
#define KWITNESSD_RING_H

#include <stddef.h>
#include <stdint.h>

/* fn gets one record; its return value is ignored. */
typedef void (*kwd_ring_fn)(void *ctx, const void *data, size_t len);

struct kwd_ring_held {
	uint64_t end; /* ring position after the record */
	uint64_t seq; /* 0 for records without a number (always releasable) */
};

struct kwd_ring {
	size_t size;                 /* data bytes, a power of two */
	unsigned long *cons;         /* consumer position (mapped read-write) */
	const unsigned long *prod;   /* producer position (mapped read-only) */
	const unsigned char *data;   /* data pages, mapped twice in a row */
	void *prod_map;
	size_t prod_map_len;
	uint64_t read_pos;           /* next record to read */
	uint64_t release_pos;        /* handed out by kwd_ring_releasable */
	struct kwd_ring_held *held;
	size_t held_head, held_len, held_cap;
};

/* Maps the ring buffer map fd of size bytes. 0 or -errno. */
int kwd_ring_map(struct kwd_ring *r, int fd, size_t size);
void kwd_ring_unmap(struct kwd_ring *r);
/* Reads every committed record after the read position. Returns how many. */
int kwd_ring_read(struct kwd_ring *r, kwd_ring_fn fn, void *ctx);
/* The position up to which every record read has seq < below (its line is
 * in the log buffer, or it was a duplicate); forgets those records. */
uint64_t kwd_ring_releasable(struct kwd_ring *r, uint64_t below);
/* Moves the kernel's consumer position forward to pos, never back (any
 * thread, concurrently). */
void kwd_ring_release(unsigned long *cons, uint64_t pos);
/* Bytes the kernel holds (not released) and bytes not read yet. */
uint64_t kwd_ring_used(const struct kwd_ring *r);
uint64_t kwd_ring_unread(const struct kwd_ring *r);
/* Committed records waiting after the consumer position (nothing read). */
uint64_t kwd_ring_count_waiting(const struct kwd_ring *r);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* Ring buffer reader with deferred release, see ring.h. The layout is the
 * kernel's (kernel/bpf/ringbuf.c, include/uapi/linux/bpf.h): a consumer page
 * (read-write), a producer page, then the data pages mapped twice so a record
 * never wraps; each record starts with an 8-byte header, a 32-bit length with
 * BPF_RINGBUF_BUSY_BIT and BPF_RINGBUF_DISCARD_BIT, and is padded to 8. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/bpf.h>

#include "lib/buf.h"
#include "collector/decision.h"
#include "ring.h"

int kwd_ring_map(struct kwd_ring *r, int fd, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *c, *p;

	memset(r, 0, sizeof(*r));
	if (!size || (size & (size - 1)))
		return -EINVAL;
	c = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED)
		return -errno;
	p = mmap(NULL, page + 2 * size, PROT_READ, MAP_SHARED, fd, (off_t)page);
	if (p == MAP_FAILED) {
		int e = -errno;

		munmap(c, page);
		return e;
	}
	r->size = size;
	r->cons = c;
	r->prod = p;
	r->data = (const unsigned char *)p + page;
	r->prod_map = p;
	r->prod_map_len = page + 2 * size;
	r->read_pos = r->release_pos = __atomic_load_n(r->cons, __ATOMIC_ACQUIRE);
	return 0;
}

void kwd_ring_unmap(struct kwd_ring *r)
{
	if (r->cons)
		munmap(r->cons, (size_t)sysconf(_SC_PAGESIZE));
	if (r->prod_map)
		munmap(r->prod_map, r->prod_map_len);
	free(r->held);
	memset(r, 0, sizeof(*r));
}

static int hold(struct kwd_ring *r, uint64_t end, uint64_t seq)
{
	if (r->held_len == r->held_cap && r->held_head) {
		/* the released front is dead space */
		memmove(r->held, r->held + r->held_head,
			(r->held_len - r->held_head) * sizeof(*r->held));
		r->held_len -= r->held_head;
		r->held_head = 0;
	}
	if (r->held_len == r->held_cap) {
		struct kwd_ring_held *n = kw_array_grow(r->held, &r->held_cap, sizeof(*n), 256);

		if (!n)
			return -ENOMEM;
		r->held = n;
	}
	r->held[r->held_len].end = end;
	r->held[r->held_len].seq = seq;
	r->held_len++;
	return 0;
}

int kwd_ring_read(struct kwd_ring *r, kwd_ring_fn fn, void *ctx)
{
	uint64_t prod = __atomic_load_n(r->prod, __ATOMIC_ACQUIRE);
	int n = 0;

	while (r->read_pos < prod) {
		const unsigned char *hdr = r->data + (r->read_pos & (r->size - 1));
		uint32_t len = __atomic_load_n((const uint32_t *)hdr, __ATOMIC_ACQUIRE);
		uint32_t body = len & ~(uint32_t)(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
		uint64_t end, seq = 0;

		if (len & BPF_RINGBUF_BUSY_BIT)
			break; /* reserved, not yet committed: the rest waits */
		end = r->read_pos + ((BPF_RINGBUF_HDR_SZ + (uint64_t)body + 7) & ~7ull);
		if (!(len & BPF_RINGBUF_DISCARD_BIT) &&
		    kw_event_seq(hdr + BPF_RINGBUF_HDR_SZ, body, &seq) < 0)
			seq = 0;
		if (hold(r, end, seq))
			break; /* out of memory: read it later */
		r->read_pos = end;
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			fn(ctx, hdr + BPF_RINGBUF_HDR_SZ, body);
			n++;
		}
	}
	return n;
}

uint64_t kwd_ring_releasable(struct kwd_ring *r, uint64_t below)
{
	while (r->held_head < r->held_len && r->held[r->held_head].seq < below) {
		r->release_pos = r->held[r->held_head].end;
		r->held_head++;
	}
	if (r->held_head == r->held_len)
		r->held_head = r->held_len = 0;
	return r->release_pos;
}

void kwd_ring_release(unsigned long *cons, uint64_t pos)
{
	unsigned long cur = __atomic_load_n(cons, __ATOMIC_ACQUIRE);

	/* Only forward, with two threads releasing (the I/O thread once a
	 * chunk is written, the loop as it queues one within the log backlog):
	 * a plain load-then-store could move it back. */
	while (pos > cur && !__atomic_compare_exchange_n(cons, &cur, (unsigned long)pos, 1,
							 __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
		;
}

uint64_t kwd_ring_used(const struct kwd_ring *r)
{
	if (!r->cons)
		return 0;
	return __atomic_load_n(r->prod, __ATOMIC_ACQUIRE) - __atomic_load_n(r->cons, __ATOMIC_ACQUIRE);
}

uint64_t kwd_ring_unread(const struct kwd_ring *r)
{
	if (!r->cons)
		return 0;
	return __atomic_load_n(r->prod, __ATOMIC_ACQUIRE) - r->read_pos;
}

uint64_t kwd_ring_count_waiting(const struct kwd_ring *r)
{
	uint64_t pos = __atomic_load_n(r->cons, __ATOMIC_ACQUIRE);
	uint64_t prod = __atomic_load_n(r->prod, __ATOMIC_ACQUIRE), n = 0;

	while (pos < prod) {
		uint32_t len = __atomic_load_n((const uint32_t *)(r->data + (pos & (r->size - 1))),
					       __ATOMIC_ACQUIRE);

		if (len & BPF_RINGBUF_BUSY_BIT)
			break;
		if (!(len & BPF_RINGBUF_DISCARD_BIT))
			n++;
		pos += (BPF_RINGBUF_HDR_SZ +
			(uint64_t)(len & ~(uint32_t)(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT)) +
			7) & ~7ull;
	}
	return n;
}

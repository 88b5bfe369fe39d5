/* SPDX-License-Identifier: Apache-2.0 */
/* Progress line, see progress.h. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "verify/progress.h"

#define REDRAW_NS 200000000LL

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void progress_init(struct progress *p, bool want, uint64_t total_bytes, uint64_t total_items)
{
	memset(p, 0, sizeof(*p));
	p->enabled = want && isatty(STDERR_FILENO);
	p->total_bytes = total_bytes;
	p->total_items = total_items;
	p->start_ns = now_ns();
	pthread_mutex_init(&p->lock, NULL);
}

double progress_seconds(const struct progress *p)
{
	return (double)(now_ns() - p->start_ns) / 1e9;
}

/* "812.0 MB": decimal units, as rates are quoted. */
static void size_text(char *out, size_t n, double bytes)
{
	static const char *const unit[] = { "B", "kB", "MB", "GB", "TB" };
	int u = 0;

	while (bytes >= 1000 && u < 4) {
		bytes /= 1000;
		u++;
	}
	snprintf(out, n, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

static void draw(struct progress *p, int64_t t)
{
	double secs = (double)(t - p->start_ns) / 1e9, done, total, rate;
	uint64_t bytes = atomic_load(&p->bytes), items = atomic_load(&p->items);
	char a[24], b[24], r[32], eta[32] = "";

	if (secs <= 0)
		secs = 1e-9;
	size_text(a, sizeof(a), (double)bytes);
	if (p->total_items) {
		done = (double)items;
		total = (double)p->total_items;
		rate = done / secs;
		snprintf(r, sizeof(r), "%.0f records/s", rate);
	} else {
		done = (double)bytes;
		total = (double)p->total_bytes;
		rate = done / secs;
		size_text(r, sizeof(r), rate);
		strcat(r, "/s");
	}
	if (total > 0 && rate > 0 && done > 0)
		snprintf(eta, sizeof(eta), ", ETA %.0f s", (total - done) / rate);
	if (p->total_items) {
		fprintf(stderr, "\r\033[Kkwitness verify: %llu/%llu records, %s of logs, %s%s",
			(unsigned long long)items, (unsigned long long)p->total_items, a, r, eta);
	} else if (p->total_bytes) {
		size_text(b, sizeof(b), (double)p->total_bytes);
		fprintf(stderr, "\r\033[Kkwitness verify: %s of %s, %s%s", a, b, r, eta);
	} else {
		fprintf(stderr, "\r\033[Kkwitness verify: %s, %s", a, r);
	}
	fflush(stderr);
	p->drawn = true;
}

void progress_add(struct progress *p, uint64_t bytes, uint64_t items)
{
	int64_t t;

	if (!p->enabled)
		return;
	atomic_fetch_add(&p->bytes, bytes);
	atomic_fetch_add(&p->items, items);
	t = now_ns();
	if (t < atomic_load(&p->next_ns) || pthread_mutex_trylock(&p->lock))
		return;
	if (t >= atomic_load(&p->next_ns)) {
		atomic_store(&p->next_ns, t + REDRAW_NS);
		draw(p, t);
	}
	pthread_mutex_unlock(&p->lock);
}

void progress_clear(struct progress *p)
{
	if (!p->enabled)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->drawn) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		p->drawn = false;
		atomic_store(&p->next_ns, 0);
	}
	pthread_mutex_unlock(&p->lock);
}

void progress_end(struct progress *p)
{
	if (!p->enabled)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->drawn)
		fputs("\r\033[K", stderr);
	fflush(stderr);
	p->enabled = false;
	pthread_mutex_unlock(&p->lock);
}

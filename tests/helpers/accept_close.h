/* SPDX-License-Identifier: Apache-2.0 */
/* The helpers' listeners that only have to be there: each connection is
 * accepted and closed at once, for at most seconds (the suites stop them
 * sooner). */
#ifndef KW_TEST_ACCEPT_CLOSE_H
#define KW_TEST_ACCEPT_CLOSE_H

#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static inline void accept_and_close(struct pollfd *fds, int n, int seconds)
{
	struct timespec ts;
	time_t end;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	end = ts.tv_sec + seconds;
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		if (ts.tv_sec >= end)
			return;
		if (poll(fds, (nfds_t)n, 1000) <= 0)
			continue;
		for (int i = 0; i < n; i++) {
			if (fds[i].revents & POLLIN) {
				int c = accept(fds[i].fd, NULL, NULL);

				if (c >= 0)
					close(c);
			}
		}
	}
}

#endif

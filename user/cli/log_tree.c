/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness log tree LOG (the tree itself: user/trace/lineage.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "trace/lineage.h"

static void log_usage(FILE *f)
{
	fputs("usage: kwitness log tree LOG\n"
	      "  the session's process tree from the log's proc entries, with each\n"
	      "  process's decisions counted (docs/decision-log.md, \"proc\")\n", f);
}

/* argv[0] is "tree". */
int cmd_log_tree(int argc, char **argv)
{
	FILE *f;
	int fd, e;

	if (argc != 2 || argv[1][0] == '-') {
		bool help = argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"));

		log_usage(help ? stdout : stderr);
		return help ? 0 : 2;
	}
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		fprintf(stderr, "kwitness log tree: %s: %s\n", argv[1], strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	e = kw_log_tree(f, argv[1], stdout);
	fclose(f);
	if (e == -ENOMEM)
		fprintf(stderr, "kwitness log tree: out of memory\n");
	return e ? 1 : 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness log tree LOG (the tree itself: user/trace/lineage.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace/logsegment.h"
#include "commands.h"
#include "lib/options.h"
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
	static const struct cli_opt opts[] = { { "help", 'h', CLI_HELP, NULL }, { 0 } };
	struct cli_options p = { .cmd = "kwitness log tree", .usage = log_usage, .opts = opts };
	const char *path;
	FILE *f;
	int e;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind != argc - 1) {
		fprintf(stderr, "kwitness log tree: give one decision log (see `kwitness log tree --help`)\n");
		return 2;
	}
	path = argv[optind];
	f = kw_log_open_joined(path); /* a log cut into segments is read across them */
	if (!f) {
		fprintf(stderr, "kwitness log tree: %s: %s\n", path, strerror(errno));
		return 1;
	}
	e = kw_log_tree(f, path, stdout);
	fclose(f);
	if (e == -ENOMEM)
		fprintf(stderr, "kwitness log tree: out of memory\n");
	return e ? 1 : 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* A command's options, see kwitness/options.h. */
#include <errno.h>
#include <stdlib.h>

#include <string.h>

#include "lib/messages.h"
#include "lib/options.h"

/* Options seen as getopt_long values from here, so no letter is mistaken
 * for one. */
#define LONG_BASE 256

static bool takes_argument(enum cli_opt_kind kind)
{
	return kind == CLI_TEXT || kind == CLI_NUMBER || kind == CLI_OWN;
}

static void begin(struct cli_options *p)
{
	size_t i, n = 0;

	if (p->in_order)
		p->letters[n++] = '+';
	p->letters[n++] = ':'; /* a missing argument is ':', an unknown option '?' */
	for (i = 0; p->opts[i].name; i++) {
		const struct cli_opt *o = &p->opts[i];

		if (i == CLI_OPTS_MAX) { /* the command's table, not its input */
			fprintf(stderr, "%s: more than %d options\n", p->cmd, CLI_OPTS_MAX);
			abort();
		}
		p->longs[i] = (struct option){ o->name, takes_argument(o->kind) ? required_argument
										: no_argument,
					       NULL, LONG_BASE + (int)i };
		if (o->letter) {
			p->letters[n++] = o->letter;
			if (takes_argument(o->kind))
				p->letters[n++] = ':';
		}
	}
	p->longs[i] = (struct option){ 0 };
	p->letters[n] = '\0';
	optind = 0; /* glibc: all of getopt's state anew, its ordering mode too */
	opterr = 0; /* bad_option says it, on one line */
	p->begun = true;
}

static const struct cli_opt *seen(const struct cli_options *p, int c)
{
	size_t i;

	if (c >= LONG_BASE)
		return &p->opts[c - LONG_BASE];
	for (i = 0; p->opts[i].name; i++)
		if (p->opts[i].letter && p->opts[i].letter == c)
			return &p->opts[i];
	return NULL; /* '?': unknown, or its argument missing */
}

/* One line for an unknown option (with the nearest known one) or a missing
 * argument, and where the help is: not the whole usage. */
static void bad_option(const struct cli_options *p, int c, const char *arg)
{
	const char *names[CLI_OPTS_MAX + 1], *near;
	char word[80];
	size_t i;

	if (c == ':') {
		kw_usage_error(p->cmd, "option '%s' needs an argument", arg);
		return;
	}
	for (i = 0; p->opts[i].name; i++)
		names[i] = p->opts[i].name;
	names[i] = NULL;
	snprintf(word, sizeof(word), "%s", arg + strspn(arg, "-"));
	word[strcspn(word, "=")] = '\0';
	near = arg[0] == '-' && arg[1] == '-' ? kw_nearest(word, names) : NULL;
	if (near)
		kw_usage_error(p->cmd, "unknown option '%s' (did you mean --%s?)", arg, near);
	else
		kw_usage_error(p->cmd, "unknown option '%s'", arg);
}

static int finish(struct cli_options *p, int status)
{
	p->status = status;
	p->begun = false;
	return CLI_OPTIONS_EXIT;
}

/* The option table, for the man page check (KWITNESS_LIST_OPTIONS). */
static int list_options(struct cli_options *p)
{
	for (size_t i = 0; p->opts[i].name; i++) {
		printf("--%s\n", p->opts[i].name);
		if (p->opts[i].letter)
			printf("-%c\n", p->opts[i].letter);
	}
	return finish(p, 0);
}

int cli_next_option(struct cli_options *p, int argc, char **argv)
{
	const struct cli_opt *o;
	const char *list = getenv("KWITNESS_LIST_OPTIONS");
	long long v;
	int c;

	if (!p->begun)
		begin(p);
	if (list && !strcmp(list, "1"))
		return list_options(p);
	while ((c = getopt_long(argc, argv, p->letters, p->longs, NULL)) != -1) {
		o = seen(p, c);
		if (!o) {
			bad_option(p, c, argv[optind - 1]);
			return finish(p, 2);
		}
		switch (o->kind) {
		case CLI_HELP:
			p->usage(stdout);
			return finish(p, 0);
		case CLI_FLAG:
			*(bool *)o->to = true;
			break;
		case CLI_TEXT:
			*(const char **)o->to = optarg;
			break;
		case CLI_NUMBER:
			if (cli_parse_int(optarg, o->min, o->max, &v)) {
				fprintf(stderr, "%s: --%s %s\n", p->cmd, o->name, o->bad);
				return finish(p, 2);
			}
			*(int64_t *)o->to = v;
			break;
		case CLI_COUNT:
			++*(int *)o->to;
			break;
		case CLI_OWN:
			return o->id;
		}
	}
	p->begun = false;
	return CLI_OPTIONS_DONE;
}

bool cli_options_parse(struct cli_options *p, int argc, char **argv)
{
	return cli_next_option(p, argc, argv) != CLI_OPTIONS_DONE;
}

int cli_parse_int(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

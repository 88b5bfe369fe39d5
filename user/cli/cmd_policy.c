/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness policy check FILE: validates a policy bundle offline, with the
 * parser kwitnessd uses (no daemon, no root), and says what it governs and,
 * when run as root, which of those classes this host cannot enforce
 * (kwitnessd would refuse to open a session with it: hooks_unavailable). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli_probe.h"
#include "commands.h"
#include "lib/buf.h"
#include "lib/messages.h"
#include "lib/options.h"
#include "lib/text_safe.h"
#include "policy/policy.h"
#include "verbs.h"

static void check_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness policy check [--no-probe] FILE\n\n"
		"Validates the policy bundle FILE offline with kwitnessd's own parser: one line\n"
		"naming the field and, for an unknown key or value, the valid ones. Then what it\n"
		"governs (the classes its sections turn on; what it leaves out is not governed)\n"
		"and, run as root, which of those this host cannot enforce (as `kwitness probe`\n"
		"finds them): kwitnessd refuses such a policy here (hooks_unavailable).\n"
		"Exit status: 0 valid (and enforceable here when probed), 1 invalid or not\n"
		"enforceable here, 2 usage error.\n\n"
		"  --no-probe   validate only; do not ask this host's kernel\n");
}

static int policy_check(int argc, char **argv)
{
	bool no_probe = false;
	const struct cli_opt opts[] = {
		{ "no-probe", 0, CLI_FLAG, &no_probe },
		{ "help", 'h', CLI_HELP },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitness policy check", .usage = check_usage, .opts = opts };
	char why[KW_CLASS_COUNT][KW_PROBE_REASON_MAX], err[512] = "";
	struct kw_policy *pol = NULL;
	struct kw_buf b = { 0 };
	uint32_t enforceable = 0, missing;
	int e, status = 1;

	if (cli_options_parse(&p, argc, argv))
		return p.status;
	if (optind != argc - 1) {
		kw_usage_error("kwitness policy check", "give one policy FILE");
		return 2;
	}
	e = kw_read_file(argv[optind], KW_POLICY_MAX_BYTES, &b);
	if (e) {
		fprintf(stderr, "kwitness policy check: %s: %s\n", argv[optind],
			e == -EFBIG ? "larger than the bundle limit (256 KiB)" : strerror(-e));
		return 1;
	}
	e = kw_policy_parse(b.data ? b.data : "", b.len, &pol, err, sizeof(err));
	kw_buf_free(&b);
	if (e) {
		printf("invalid: %s: ", argv[optind]);
		kw_text_fput(stdout, err); /* it may quote the file */
		putchar('\n');
		return 1;
	}
	printf("valid: %s (mode %s, record %s, on_record_failure %s)\n", argv[optind],
	       kw_mode_name(pol->mode), pol->record == KW_RECORD_ALL ? "all" : "deny",
	       pol->on_failure == KW_ONFAIL_DENY ? "deny" : "allow");
	printf("governs:");
	for (int i = 0; i < KW_CLASS_COUNT; i++)
		if (pol->classes & (1u << i))
			printf(" %s", kw_class_name(1u << i));
	printf("%s\n", pol->classes ? "" : " nothing (no section: every operation is allowed and unrecorded)");
	status = 0;
	if (no_probe) {
		printf("this host: not asked (--no-probe)\n");
		goto out;
	}
	if (geteuid() != 0) {
		printf("this host: not asked (probing the kernel needs root: run as root, or see "
		       "`kwitness probe`)\n");
		goto out;
	}
	e = cli_probe_enforceable(&enforceable, why);
	if (e) {
		printf("this host: the probe failed: %s\n", strerror(-e));
		goto out;
	}
	missing = pol->classes & ~enforceable;
	if (!missing) {
		printf("this host: enforces every class it governs\n");
		goto out;
	}
	printf("this host cannot enforce (kwitnessd refuses this policy here: hooks_unavailable):\n");
	for (int i = 0; i < KW_CLASS_COUNT; i++)
		if (missing & (1u << i))
			printf("  %-12s %s\n", kw_class_name(1u << i), why[i]);
	status = 1;
out:
	kw_policy_free(pol);
	return status;
}

static void policy_usage(FILE *f)
{
	fprintf(f, "usage: kwitness policy check [--no-probe] FILE   (see 'kwitness policy check --help')\n");
}

static void policy_help(FILE *f)
{
	policy_usage(f);
	check_usage(f);
}

int cmd_policy(int argc, char **argv)
{
	static const struct cli_verb verbs[] = {
		{ "check", policy_check, NULL },
		{ 0 },
	};
	static const struct cli_command policy = {
		.name = "policy",
		.verbs = verbs,
		.usage = policy_usage,
		.help = policy_help,
		.unknown = "unknown subcommand '%s'",
	};

	return cli_dispatch(&policy, argc, argv);
}

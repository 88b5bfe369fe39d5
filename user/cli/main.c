/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness: the command-line front end. Dispatches to one file per command. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ "run", cmd_run, "run a command in a recorded sandbox session" },
	{ "oci-hook", cmd_oci_hook, "OCI runtime hook: record a runc/crun/podman container" },
	{ "session", cmd_session, "open, close and list sessions of a running kwitnessd" },
	{ "status", cmd_status, "show kwitnessd's sessions, counters and hooks" },
	{ "verify", cmd_verify, "verify a TRACE v0.2 record offline" },
	{ "record", cmd_record, "build an unsigned TRACE v0.2 record" },
	{ "sign", cmd_sign, "sign a record with an Ed25519 key" },
	{ "keygen", cmd_keygen, "generate an Ed25519 signing key" },
	{ "key", cmd_key, "show a key's public JWK and thumbprint" },
	{ "jcs", cmd_jcs, "print the RFC 8785 canonical form of a JSON document" },
	{ "probe", cmd_probe, "report which kernel hooks work on this host" },
	{ "tpm", cmd_tpm, "enroll a TPM's attestation key; quote for a key" },
	{ "log", cmd_log, "keep a transparency log (C2SP tlog-tiles): append, prove" },
	{ "witness", cmd_witness, "cosign a log's checkpoints (C2SP tlog-witness)" },
	{ "report", cmd_report, "write a session's verification report for an auditor (HTML or text)" },
	{ "estate", cmd_estate, "verify records of many hosts into SQLite or PostgreSQL; query them" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: kwitness COMMAND [OPTIONS]\n\n"
		   "kwitness makes the kernel the witness of what a sandbox was allowed to do.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nRun 'kwitness COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "kwitness: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}

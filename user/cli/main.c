/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness: the command-line front end. Dispatches to one file per command. */
#include <stdio.h>
#include <string.h>

#include "bpf/object_digest.h"

#include "commands.h"
#include "verbs.h"

static const struct cli_verb commands[] = {
	{ "run", cmd_run, "run a command in a recorded sandbox session" },
	{ "oci-hook", cmd_oci_hook, "OCI runtime hook: record a runc/crun/podman container" },
	{ "session", cmd_session, "open, close and list sessions of a running kwitnessd" },
	{ "status", cmd_status, "show kwitnessd's sessions, counters and hooks" },
	{ "watch", cmd_watch, "follow the decisions kwitnessd logs, live (text, JSON or OCSF)" },
	{ "verify", cmd_verify, "verify a TRACE v0.2 record offline" },
	{ "record", cmd_record, "build an unsigned TRACE v0.2 record" },
	{ "sign", cmd_sign, "sign a record with an Ed25519 key" },
	{ "keygen", cmd_keygen, "generate an Ed25519 signing key" },
	{ "key", cmd_key, "show a key's public JWK and thumbprint" },
	{ "jcs", cmd_jcs, "print the RFC 8785 canonical form of a JSON document" },
	{ "probe", cmd_probe, "report which kernel hooks work on this host" },
	{ "tpm", cmd_tpm, "enroll a TPM's attestation key; quote for a key" },
	{ "tlog", cmd_tlog, "keep a transparency log (C2SP tlog-tiles): append, prove" },
	{ "log", cmd_log, "a stored decision log: export (OCSF), tree (its processes)" }, /* else the old name of tlog */
	{ "witness", cmd_witness, "cosign a log's checkpoints (C2SP tlog-witness)" },
	{ "report", cmd_report, "write a session's verification report for an auditor (HTML or text)" },
	{ "attest", cmd_attest, "state a verified session as a signed in-toto attestation" },
	{ "verify-attestation", cmd_verify_attestation, "check an attestation from kwitness attest" },
	{ "estate", cmd_estate, "verify records of many hosts into SQLite or PostgreSQL; query them" },
	{ "policy", cmd_policy, "check a policy bundle offline: valid, what it governs, what this host enforces" },
	{ "prune", cmd_prune, "remove old closed sessions from a state folder, each whole" },
	{ 0 },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: kwitness COMMAND [OPTIONS]\n\n"
		   "kwitness makes the kernel the witness of what a sandbox was allowed to do.\n\n"
		   "Commands:\n");
	cli_verbs_list(f, commands);
	fprintf(f, "\nRun 'kwitness COMMAND --help' for a command's options;\n"
		   "'kwitness --version' for the version and the BPF objects' SHA-256.\n");
}

int main(int argc, char **argv)
{
	static const struct cli_command kwitness = {
		.verbs = commands,
		.usage = usage,
		.unknown = "unknown command '%s'",
		.unknown_usage = true,
		.help_verb = true,
	};

	if (argc == 2 && !strcmp(argv[1], "--version"))
		return kw_version_print(stdout, "kwitness");
	return cli_dispatch(&kwitness, argc, argv);
}

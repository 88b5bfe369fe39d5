/* SPDX-License-Identifier: Apache-2.0 */
/* The kwitness subcommands. Each returns the process exit status: 0 success,
 * 1 failure (for verify: the record is invalid), 2 usage error. */
#ifndef KWITNESS_CLI_COMMANDS_H
#define KWITNESS_CLI_COMMANDS_H

int cmd_jcs(int argc, char **argv);      /* cmd_jcs.c */
int cmd_keygen(int argc, char **argv);   /* cmd_key.c */
int cmd_key(int argc, char **argv);      /* cmd_key.c */
int cmd_record(int argc, char **argv);   /* cmd_record.c */
int cmd_sign(int argc, char **argv);     /* cmd_record.c */
int cmd_verify(int argc, char **argv);   /* cmd_verify.c */
int cmd_session(int argc, char **argv);  /* cmd_session.c */
int cmd_status(int argc, char **argv);   /* cmd_session.c */
int cmd_run(int argc, char **argv);      /* cmd_run.c */
int cmd_probe(int argc, char **argv);    /* cmd_probe.c */
int cmd_tpm(int argc, char **argv);      /* cmd_tpm.c */
int cmd_tlog(int argc, char **argv);     /* cmd_tlog.c */
/* `kwitness log`, tlog's old name: one line on stderr, then tlog. */
int cmd_tlog_deprecated(int argc, char **argv); /* cmd_tlog.c */
int cmd_watch(int argc, char **argv);    /* cmd_watch.c */
int cmd_log(int argc, char **argv);      /* cmd_log.c: log export, log tree; else tlog's old name */
int cmd_log_tree(int argc, char **argv); /* log_tree.c: log tree LOG */
int cmd_witness(int argc, char **argv);  /* cmd_witness.c */
int cmd_oci_hook(int argc, char **argv); /* cmd_oci_hook.c */
int cmd_estate(int argc, char **argv);   /* cmd_estate.c */
int cmd_report(int argc, char **argv);   /* cmd_report.c */
int cmd_attest(int argc, char **argv);   /* cmd_attest.c */
int cmd_verify_attestation(int argc, char **argv); /* cmd_verify_attest.c */
int cmd_policy(int argc, char **argv);   /* cmd_policy.c */
int cmd_prune(int argc, char **argv);    /* cmd_prune.c */

#endif

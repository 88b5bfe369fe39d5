/* SPDX-License-Identifier: Apache-2.0 */
/* C2SP tlog-policy (c2sp.org/tlog-policy): which logs and witnesses a
 * verifier trusts, and the quorum of cosignatures a checkpoint needs.
 *
 *   log <vkey> [<url>]
 *   witness <name> <vkey> [<url>]
 *   group <name> all|any|<k> <name>...
 *   quorum <name>|none
 */
#ifndef KWITNESS_TLOG_POLICY_H
#define KWITNESS_TLOG_POLICY_H

#include <stddef.h>

#include "tlog/note.h"

#define TLOG_POLICY_MAX 32
#define TLOG_POLICY_FILE_MAX (256 * 1024)

struct tlog_policy_witness {
	char name[TLOG_NAME_MAX];
	struct tlog_key key;
};

struct tlog_policy_group {
	char name[TLOG_NAME_MAX];
	unsigned k;
	size_t n;
	/* < TLOG_POLICY_MAX: a witness; else a group (index - TLOG_POLICY_MAX). */
	unsigned members[TLOG_POLICY_MAX];
};

struct tlog_policy {
	struct tlog_key logs[TLOG_POLICY_MAX];
	size_t nlogs;
	struct tlog_policy_witness witnesses[TLOG_POLICY_MAX];
	size_t nwitnesses;
	struct tlog_policy_group groups[TLOG_POLICY_MAX];
	size_t ngroups;
	int quorum; /* -1: none; else a member index as in groups */
	int has_quorum;
};

/* 0, or -EINVAL with a one-line reason ("line N: ...") in err. */
int tlog_policy_parse(const char *text, size_t len, struct tlog_policy *p, char *err,
		      size_t errcap);
void tlog_policy_free(struct tlog_policy *p);

enum tlog_policy_verdict {
	TLOG_POLICY_OK = 0,
	TLOG_POLICY_UNKNOWN_LOG,  /* no policy log has the checkpoint's origin */
	TLOG_POLICY_LOG_SIGNATURE, /* the log's signature is missing or wrong */
	TLOG_POLICY_QUORUM,        /* the witnesses' cosignatures fall short */
};

/* Checks a checkpoint note against the policy. *cosigned gets the number of
 * policy witnesses whose cosignature verified. */
enum tlog_policy_verdict tlog_policy_check(const struct tlog_policy *p, const struct tlog_note *n,
					   const struct tlog_checkpoint *cp, size_t *cosigned);

#endif

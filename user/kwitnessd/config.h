/* SPDX-License-Identifier: Apache-2.0 */
/* config.c: the command line's defaults and kwitnessd.conf. */
#ifndef KWITNESSD_CONFIG_H
#define KWITNESSD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "export_config.h"
#include "trace/profile_v03.h"

#define KWD_DEFAULT_CONFIG "/etc/kwitness/kwitnessd.conf"
#define KWD_DEFAULT_PIN_DIR "/sys/fs/bpf/kwitness"
#define KWD_DEFAULT_RINGBUF (256 * 1024)
/* log_backlog: log lines queued for the I/O thread whose ring buffer space
 * is freed before they are written (docs/kwitnessd.md, "Log backlog"). */
#define KWD_DEFAULT_LOG_BACKLOG (64ull * 1024 * 1024)
#define KWD_LOG_BACKLOG_MAX (1ull << 30)
#define KWD_LOG_WITNESSES_MAX 8
/* max_sessions_per_user and root_reserved_sessions when not configured */
#define KWD_DEFAULT_USER_SESSIONS 16
#define KWD_DEFAULT_ROOT_RESERVED 64

/* kwitnessd.conf "grant": a non-root uid or group may open sessions on a
 * cgroup subtree it does not own. */
struct kwd_grant {
	bool is_group;
	uint32_t id;      /* uid or gid */
	char *path;       /* absolute, no trailing slash */
};
#define KWD_MAX_GRANTS 64

struct kwd_config {
	const char *state_dir;
	const char *socket_path;
	const char *key_path;      /* NULL: TRACE_PRIVATE_KEY_PEM */
	const char *config_path;
	const char *pin_dir;       /* NULL: do not pin */
	size_t ringbuf_size;
	bool have_group;
	gid_t group;
	struct kwd_grant grants[KWD_MAX_GRANTS];
	unsigned n_grants;
	char *verifier;
	char *model_provider;
	char *model_id;
	char *data_class;
	bool foreground;
	bool close_on_exit;        /* --close-sessions-on-exit */
	int verbose;
	char *tpm;            /* TCTI; NULL: records are software-only */
	char *tpm_pcrs;       /* NULL: KW_TPM_DEFAULT_PCRS */
	char *tpm_enrollment; /* enrollment record carried in the evidence */
	char *tpm_ak;         /* the AK file (kwitness tpm enroll --ak-out), root-only */
	/* record_profile / --record-profile: trace-v0.2 (default) or
	 * trace-v0.3-draft (TPM evidence inline); the command line wins. */
	enum kw_record_profile record_profile;
	bool record_profile_from_cli;
	/* Level 2 (transparency.c): the log every record goes to, its key, the
	 * witnesses that cosign, the tlog-policy the checkpoint must meet. */
	char *log_dir;
	char *log_key;
	char *log_policy;
	char *log_witness[KWD_LOG_WITNESSES_MAX];
	size_t n_log_witness;
	char *estate;         /* estate database URL: records are spooled for
			       * `kwitness estate push`; NULL: nothing is spooled */
	/* Quotas (session_open.c): sessions one non-root uid may hold open,
	 * and slots only root may take. */
	unsigned user_sessions_max;
	unsigned root_reserved_sessions;
	struct kwd_export_config exports; /* watch_queue, otlp_* */
	/* metrics.c: --metrics / metrics = ADDR (NULL: off), and how many open
	 * sessions get series of their own (metrics_session_labels, 0: none) */
	char *metrics_addr;
	unsigned metrics_session_labels;
	unsigned syslog_decisions; /* enum kwd_syslog_decisions (decision_syslog.c) */
	/* Interim checkpoints (checkpoint.c): every this many seconds and
	 * decisions (0: not by that measure). */
	uint64_t checkpoint_interval;
	uint64_t checkpoint_entries;
	/* Each checkpoint also goes to the transparency log (checkpoint_tlog.c;
	 * needs log = DIR and checkpoints). */
	bool checkpoint_tlog;
	/* A session log is cut into segments of this many bytes (segwrite.c;
	 * 0: one file). */
	uint64_t log_segment_bytes;
	unsigned loop_priority; /* enum kwd_loop_priority (loop_priority.c) */
	uint64_t log_backlog;   /* bytes; 0: ring space is freed only once written */
	/* set by config.c so main() knows what came from the command line */
	bool ringbuf_from_cli;
};

int kwd_parse_ringbuf_size(const char *v, size_t *out);
int kwd_config_load(struct kwd_config *c, const char *path, bool must_exist, char *err,
		    size_t errlen);
void kwd_config_free(struct kwd_config *c);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/* kwitnessd: options, setup (key, state folders, BPF programs, control
 * socket), and the epoll loop that serves ring buffers, clients, signals, a
 * timer and the I/O worker. Every session's ring buffer and every client is a
 * non-blocking descriptor in the loop's one epoll set; only blocking file work
 * (log writes, fsync, records) runs on the worker thread (worker.c). */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "bpf/hooks.h"
#include "bpf/object_digest.h"
#include "trace/key.h"
#include "lib/messages.h"
#include "lib/options.h"
#include "tpm/tpm.h"
#include "attest.h"
#include "config.h"
#include "control.h"
#include "dns_proxy.h"
#include "harden.h"
#include "hostinfo.h"
#include "checkpoint.h"
#include "kwd.h"
#include "loop_priority.h"
#include "otlp.h"
#include "decision_syslog.h"
#include "metrics.h"
#include "recover.h"
#include "resume.h"
#include "session.h"
#include "publisher.h"
#include "spool.h"
#include "transparency.h"
#include "util.h"
#include "wakeup.h"
#include "watch.h"
#include "worker.h"

/* The timer drives gap skipping, close deadlines and log flushing. */
#define KWD_TICK_MS 50
/* Pause after a batch that had ring buffer work, to batch the next one. */
#define KWD_BATCH_NAP_US 500
/* Scheduling priority kwitnessd gives itself (lower is more favoured). */
#define KWD_NICE (-10)

static struct kwd daemon_state;

/* Sessions the I/O worker has sealed: each close reply goes to the client
 * that asked for it, through the control code that took the request. */
static void reply_sealed(struct kwd *d)
{
	struct kwd_job *job;

	while ((job = kwd_worker_done(d))) {
		uint64_t client = 0;
		json_t *reply = kwd_session_sealed(d, job, &client);

		/* A record written: to the estate's spool (nothing without it). */
		if (json_is_true(json_object_get(reply, KW_F_OK)))
			kwd_spool_enqueue(d, json_string_value(json_object_get(reply, KW_F_SESSION)));
		if (client)
			kwd_reply_to(d, client, reply);
		else
			json_decref(reply);
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kwitnessd [OPTIONS]\n\n"
		"The kwitness collector: loads the BPF programs, serves the control socket,\n"
		"writes each session's decision log and signs its TRACE v0.2 record.\n\n"
		"  --state-dir DIR     records, logs, policies (default " KW_DEFAULT_STATE_DIR ")\n"
		"  --socket PATH       control socket (default " KW_DEFAULT_SOCKET ")\n"
		"  --key PATH          Ed25519 PKCS#8 signing key (default " KW_DEFAULT_KEY ";\n"
		"                      without --key, TRACE_PRIVATE_KEY_PEM is used when set;\n"
		"                      the variable is wiped from the environment either way)\n"
		"  --config PATH       key = value settings (default " KWD_DEFAULT_CONFIG ")\n"
		"  --ringbuf-size N    bytes per session ring buffer, power of two >= 4096\n"
		"  --pin-dir DIR       bpffs folder for pins (default " KWD_DEFAULT_PIN_DIR
		"; 'none').\n"
		"                      Sessions are pinned there: they stay enforced when\n"
		"                      kwitnessd stops or dies, and the next start resumes them\n"
		"  --close-sessions-on-exit\n"
		"                      SIGTERM/SIGINT close every session (trailer, record)\n"
		"                      instead of leaving them pinned for the next start\n"
		"  --tpm TCTI          bind the signing key to a TPM 2.0 quote (device:/dev/tpmrm0\n"
		"                      or swtpm:host=H,port=P); records say runtime.platform tpm2\n"
		"  --tpm-pcrs SEL      PCRs to quote (default " KW_TPM_DEFAULT_PCRS ")\n"
		"  --tpm-ak FILE       the attestation key (kwitness tpm enroll --ak-out; mode 0600)\n"
		"  --tpm-enrollment F  enrollment record (kwitness tpm enroll) for the evidence\n"
		"  --record-profile P  trace-v0.2 (default) or trace-v0.3-draft: the draft's\n"
		"                      eat_profile, with the TPM evidence inline (runtime.evidence)\n"
		"  --metrics ADDR      serve Prometheus /metrics and /healthz on a loopback\n"
		"                      HOST:PORT or unix:PATH (off by default)\n"
		"  -f, --foreground    stay in the foreground, log to stderr (systemd Type=simple)\n"
		"  -v, --verbose       log sessions (twice: more)\n"
		"  -h, --help          this text\n"
		"      --version       the version and the BPF objects' SHA-256\n");
}

static int make_dir(const char *base, const char *sub, mode_t mode)
{
	char path[4096];

	if (snprintf(path, sizeof(path), "%s%s%s", base, sub ? "/" : "", sub ? sub : "") >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* The state folder and its three subfolders: created when missing, then
 * refused unless only root can change them (logs and records are written
 * by path). */
static int setup_state_dir(const char *dir, char *err, size_t errlen)
{
	static const char *const subs[] = { NULL, "records", "logs", "policies", "evidence",
					    "sessions", "commit" };

	for (size_t i = 0; i < sizeof(subs) / sizeof(subs[0]); i++) {
		char path[4096];
		int e = make_dir(dir, subs[i], 0750);

		if (e) {
			snprintf(err, errlen, "state folder %s/%s: %s", dir, subs[i] ? subs[i] : "",
				 strerror(-e));
			return e;
		}
		snprintf(path, sizeof(path), "%s%s%s", dir, subs[i] ? "/" : "", subs[i] ? subs[i] : "");
		e = kwd_check_dir("state folder", path, err, errlen);
		if (e)
			return e;
	}
	return 0;
}

/* One collector per state folder: a second one would seal (recover.c) the
 * live sessions of the first. The lock is held until exit. */
static int lock_state_dir(const char *dir, char *err, size_t errlen)
{
	char path[4200];
	int fd;

	snprintf(path, sizeof(path), "%s/kwitnessd.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		int e = -errno;

		snprintf(err, errlen, "%.300s/kwitnessd.lock: %s", dir, strerror(errno));
		return e;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = -errno;

		snprintf(err, errlen, "%.300s: %s", dir,
			 errno == EWOULDBLOCK ? "another kwitnessd uses this state folder"
					      : strerror(errno));
		close(fd);
		return e;
	}
	return 0; /* fd stays open: the lock lives as long as the process */
}

static int join_programs(struct kwd *d)
{
	json_t *progs = kw_hooks_programs(d->hooks), *p;
	struct kw_buf b = { 0 };
	size_t i;

	json_array_foreach(progs, i, p) {
		const char *name = json_string_value(json_object_get(p, "name"));
		const char *tag = json_string_value(json_object_get(p, "tag"));

		if (b.len)
			kw_buf_putc(&b, ',');
		kw_buf_puts(&b, name ? name : "?");
		kw_buf_putc(&b, ':');
		kw_buf_puts(&b, tag ? tag : "?");
	}
	json_decref(progs);
	if (kw_buf_puts(&b, ""))
		return -ENOMEM;
	d->programs = b.data;
	return 0;
}

/* SIGTERM, SIGINT, SIGHUP through a signalfd in the epoll set. Called again
 * in the child after daemon(): a signalfd watched by epoll wakes only for the
 * process that registered it. */
static int setup_signals(struct kwd *d)
{
	struct epoll_event ev = { .events = EPOLLIN };
	sigset_t set;

	if (d->signal_fd >= 0) {
		epoll_ctl(d->epfd, EPOLL_CTL_DEL, d->signal_fd, NULL);
		close(d->signal_fd);
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	d->signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->signal_fd < 0)
		return -errno;
	d->signal_w.kind = KWD_W_SIGNAL;
	ev.data.ptr = &d->signal_w;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->signal_fd, &ev) < 0)
		return -errno;
	return 0;
}

static int setup_loop(struct kwd *d, char *err, size_t errlen)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct itimerspec its = { .it_interval = { 0, KWD_TICK_MS * 1000000L },
				  .it_value = { 0, KWD_TICK_MS * 1000000L } };

	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	signal(SIGPIPE, SIG_IGN);
	d->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (d->epfd < 0 || d->timer_fd < 0 || timerfd_settime(d->timer_fd, 0, &its, NULL) < 0 ||
	    setup_signals(d) < 0) {
		snprintf(err, errlen, "event loop: %s", strerror(errno));
		return -errno;
	}
	d->timer_w.kind = KWD_W_TIMER;
	ev.data.ptr = &d->timer_w;
	epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->timer_fd, &ev);
	return 0;
}

static void on_signal(struct kwd *d)
{
	struct signalfd_siginfo si;

	while (read(d->signal_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP)
			continue; /* nothing to reload: settings are read at start */
		kwd_log(d, LOG_NOTICE, "signal %u: stopping; %u session(s) %s", si.ssi_signo,
			d->n_sessions,
			d->cfg.close_on_exit || !d->cfg.pin_dir ? "will be closed" :
			"stay pinned and enforced for the next start");
		d->stopping = true;
	}
}

static int run_loop(struct kwd *d)
{
	struct epoll_event evs[64];
	bool ticked, rings;

	while (!d->stopping) {
		/* Batched wakeups: events below the wakeup mark signal nothing,
		 * so busy sessions are consumed every KWD_POLL_MS (the others
		 * on the tick). */
		bool polling = kwd_now_ms() < d->poll_until_ms;
		int n = epoll_wait(d->epfd, evs, 64,
				   d->n_backlog ? 0 : polling ? KWD_POLL_MS : KWD_TICK_MS);
		int64_t now;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			kwd_log(d, LOG_ERR, "epoll_wait: %s", strerror(errno));
			return -errno;
		}
		kwd_refresh_clock(d);
		d->turn_budget = KWD_REQUESTS_PER_TURN;
		ticked = rings = false;
		for (int i = 0; i < n; i++) {
			struct kwd_watch *w = evs[i].data.ptr;

			switch (w->kind) {
			case KWD_W_LISTEN:
				kwd_control_accept(d);
				break;
			case KWD_W_CLIENT:
				kwd_client_event(w->ptr, evs[i].events);
				break;
			case KWD_W_RING:
				kwd_session_ring_ready(w->ptr);
				rings = true;
				break;
			case KWD_W_SIGNAL:
				on_signal(d);
				break;
			case KWD_W_WORKER:
				reply_sealed(d);
				break;
			case KWD_W_DNS:
				kwd_dns_ready(w);
				break;
			case KWD_W_TIMER: {
				uint64_t ticks;

				if (read(d->timer_fd, &ticks, sizeof(ticks)) < 0)
					(void)0;
				ticked = true;
				break;
			}
			}
		}
		if (polling && (now = kwd_now_ms()) >= d->next_poll_ms) {
			kwd_sessions_poll(d);
			d->next_poll_ms = now + KWD_POLL_MS;
		}
		/* Outside the batch: sessions and clients may be freed here.
		 * Drained closes finish first, then (on the timer) the open
		 * sessions' gaps, flushes and resolvers. */
		kwd_sessions_after_batch(d);
		if (ticked) {
			kwd_sessions_tick(d);
			kwd_metrics_tick(d);
			kwd_control_pause(d, false);
		}
		kwd_clients_backlog(d);
		kwd_clients_reap(d);
		/* Busy ring buffers: let events gather for a moment, so one
		 * wakeup carries many of them instead of one (a ring buffer of
		 * 4 KiB still holds ~40 events; 256 KiB fill in 0.5 ms only
		 * above 5 million decisions/s). */
		if (rings)
			nanosleep(&(struct timespec){ 0, KWD_BATCH_NAP_US * 1000L }, NULL);
	}
	return 0;
}

static void raise_limits(void)
{
	struct rlimit r;

	/* Each session holds a ring buffer, its mapping and an epoll fd. */
	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
	/* The witness must not be starved by what it watches: a collector
	 * that is not scheduled lets ring buffers fill. Best effort, before
	 * the I/O thread exists (it inherits the value). */
	if (getpriority(PRIO_PROCESS, 0) > KWD_NICE)
		setpriority(PRIO_PROCESS, 0, KWD_NICE);
}

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || (level == LIBBPF_INFO && daemon_state.cfg.verbose < 2))
		return 0;
	if (level == LIBBPF_WARN && daemon_state.cfg.verbose < 1)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* The command line into d->cfg: -1 to go on, else the exit status (0 after
 * --help). */
static int parse_args(struct kwd *d, int argc, char **argv, bool *config_given, bool *key_given)
{
	bool version = false;
	enum { O_KEY = 1, O_CONFIG, O_RINGBUF, O_PIN_DIR, O_TPM, O_TPM_PCRS, O_TPM_ENROLLMENT, O_TPM_AK,
	       O_METRICS, O_RECORD_PROFILE };
	const struct cli_opt opts[] = {
		{ "state-dir", 0, CLI_TEXT, &d->cfg.state_dir },
		{ "socket", 0, CLI_TEXT, &d->cfg.socket_path },
		{ "key", 0, CLI_OWN, .id = O_KEY },
		{ "config", 0, CLI_OWN, .id = O_CONFIG },
		{ "ringbuf-size", 0, CLI_OWN, .id = O_RINGBUF },
		{ "pin-dir", 0, CLI_OWN, .id = O_PIN_DIR },
		{ "tpm", 0, CLI_OWN, .id = O_TPM },
		{ "tpm-pcrs", 0, CLI_OWN, .id = O_TPM_PCRS },
		{ "tpm-enrollment", 0, CLI_OWN, .id = O_TPM_ENROLLMENT },
		{ "tpm-ak", 0, CLI_OWN, .id = O_TPM_AK },
		{ "metrics", 0, CLI_OWN, .id = O_METRICS },
		{ "record-profile", 0, CLI_OWN, .id = O_RECORD_PROFILE },
		{ "close-sessions-on-exit", 0, CLI_FLAG, &d->cfg.close_on_exit },
		{ "foreground", 'f', CLI_FLAG, &d->cfg.foreground },
		{ "verbose", 'v', CLI_COUNT, &d->cfg.verbose },
		{ "help", 'h', CLI_HELP },
		{ "version", 0, CLI_FLAG, &version },
		{ 0 },
	};
	struct cli_options p = { .cmd = "kwitnessd", .usage = usage, .opts = opts,
				 .on_bad = CLI_BAD_USAGE };
	int opt;

	while ((opt = cli_next_option(&p, argc, argv)) > 0) {
		switch (opt) {
		case O_KEY: d->cfg.key_path = optarg; *key_given = true; break;
		case O_CONFIG: d->cfg.config_path = optarg; *config_given = true; break;
		case O_PIN_DIR: d->cfg.pin_dir = strcmp(optarg, "none") ? optarg : NULL; break;
		case O_RINGBUF:
			if (kwd_parse_ringbuf_size(optarg, &d->cfg.ringbuf_size)) {
				fprintf(stderr, "kwitnessd: --ringbuf-size: a power of two from 4096 to 1G\n");
				return 2;
			}
			d->cfg.ringbuf_from_cli = true;
			break;
		case O_TPM: free(d->cfg.tpm); d->cfg.tpm = strdup(optarg); break;
		case O_TPM_PCRS: free(d->cfg.tpm_pcrs); d->cfg.tpm_pcrs = strdup(optarg); break;
		case O_TPM_AK: free(d->cfg.tpm_ak); d->cfg.tpm_ak = strdup(optarg); break;
		case O_METRICS:
			if (kwd_config_metrics(&d->cfg, "metrics", optarg, NULL, 0, NULL, 0))
				return 2;
			break;
		case O_RECORD_PROFILE:
			if (kw_record_profile_parse(optarg, &d->cfg.record_profile)) {
				fprintf(stderr, "kwitnessd: --record-profile: trace-v0.2 or trace-v0.3-draft\n");
				return 2;
			}
			d->cfg.record_profile_from_cli = true;
			break;
		case O_TPM_ENROLLMENT:
			free(d->cfg.tpm_enrollment);
			d->cfg.tpm_enrollment = strdup(optarg);
			break;
		}
	}
	if (opt == CLI_OPTIONS_EXIT)
		return p.status;
	if (version)
		return kw_version_print(stdout, "kwitnessd");
	if (optind != argc) {
		fprintf(stderr, "kwitnessd: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	return -1;
}

/* Before the programs load: hardening, the configuration, the signing key,
 * the state folder, the TPM and the transparency log. 0, or 1 (said on
 * stderr). */
static int prepare(struct kwd *d, bool config_given, bool key_given)
{
	char err[512] = "";
	int e;

	libbpf_set_print(libbpf_quiet);
	/* Buffers past 128 KiB (grown client buffers) are mappings of their
	 * own, so freeing one returns it: a fixed threshold, as glibc's moving
	 * one would keep them in the heap after the first is freed. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	if (kwd_harden_process(err, sizeof(err))) {
		fprintf(stderr, "kwitnessd: %s\n", err);
		return 1;
	}
	if (kwd_config_load(&d->cfg, d->cfg.config_path, config_given, err, sizeof(err))) {
		fprintf(stderr, "kwitnessd: %s\n", err);
		return 1;
	}
	if ((!d->cfg.model_provider && !(d->cfg.model_provider = strdup("unknown"))) ||
	    (!d->cfg.model_id && !(d->cfg.model_id = strdup("unknown"))) ||
	    (!d->cfg.data_class && !(d->cfg.data_class = strdup("internal"))) ||
	    (!d->cfg.verifier && !(d->cfg.verifier = strdup(KW_DEFAULT_VERIFIER)))) {
		fprintf(stderr, "kwitnessd: out of memory\n");
		return 1;
	}
	if (!key_given && getenv("TRACE_PRIVATE_KEY_PEM"))
		d->cfg.key_path = NULL;
	e = kw_key_load_private(d->cfg.key_path, &d->key);
	/* Whichever key was used: the PEM text leaves the environment. */
	kwd_wipe_env_key();
	if (e) {
		char why[600];

		fprintf(stderr, "kwitnessd: %s\n",
			kw_msg_signing_key(why, sizeof(why), d->cfg.key_path, e, "--key"));
		return 1;
	}
	kwd_log(d, LOG_INFO, "signing key loaded into locked memory (%zu bytes of the secure heap)",
		kwd_key_locked_bytes());
	raise_limits();
	if (setup_state_dir(d->cfg.state_dir, err, sizeof(err))) {
		fprintf(stderr, "kwitnessd: %s\n", err);
		return 1;
	}
	if (lock_state_dir(d->cfg.state_dir, err, sizeof(err))) {
		fprintf(stderr, "kwitnessd: %s\n", err);
		return 1;
	}
	if (kwd_attest_start(d, err, sizeof(err))) {
		fprintf(stderr, "kwitnessd: --tpm %s: %s\n", d->cfg.tpm, err);
		return 1;
	}
	if (kwd_transparency_start(d, err, sizeof(err))) {
		fprintf(stderr, "kwitnessd: log = %s: %s\n", d->cfg.log_dir, err);
		kwd_attest_stop(d);
		return 1;
	}
	return 0;
}

/* The programs loaded, the loop and the control socket set up, the process
 * in the background unless --foreground, the I/O worker started. 0, or 1. */
static int start(struct kwd *d)
{
	struct kw_hooks_opts hopts = { 0 };
	char err[512] = "";
	int e;

	kwd_hostinfo_read(&d->host);
	kwd_refresh_clock(d);
	/* A pin folder others can write to could hand us their maps. */
	if (d->cfg.pin_dir && access(d->cfg.pin_dir, F_OK) == 0 &&
	    kwd_check_dir("pin folder", d->cfg.pin_dir, err, sizeof(err))) {
		fprintf(stderr, "kwitnessd: %s\n", err);
		return 1;
	}
	hopts.ringbuf_size = d->cfg.ringbuf_size;
	hopts.pin_dir = d->cfg.pin_dir;
	hopts.wakeup_bytes = d->wakeup_bytes = kwd_wakeup_bytes(d->cfg.ringbuf_size);
	e = kw_hooks_open(&hopts, &d->hooks, err, sizeof(err));
	if (e) {
		fprintf(stderr, "kwitnessd: loading the BPF programs: %s\n",
			err[0] ? err : strerror(-e));
		return 1;
	}
	if (d->cfg.pin_dir && kwd_check_dir("pin folder", d->cfg.pin_dir, err, sizeof(err))) {
		fprintf(stderr, "kwitnessd: %s\n", err);
		kw_hooks_close(d->hooks);
		return 1;
	}
	if (join_programs(d) || setup_loop(d, err, sizeof(err)) ||
	    kwd_control_listen(d, err, sizeof(err)) || kwd_metrics_listen(d, err, sizeof(err))) {
		fprintf(stderr, "kwitnessd: %s\n", err[0] ? err : "out of memory");
		kw_hooks_close(d->hooks);
		return 1;
	}
	if (!d->cfg.foreground) {
		/* Classic daemon; under systemd use Type=simple with --foreground.
		 * fork() keeps only the calling thread: the I/O worker starts after. */
		if (daemon(0, 0) < 0) {
			fprintf(stderr, "kwitnessd: daemon: %s\n", strerror(errno));
			return 1;
		}
		openlog("kwitnessd", LOG_PID, LOG_DAEMON);
		kwd_log_to_syslog();
		if (setup_signals(d) < 0) {
			kwd_log(d, LOG_ERR, "signals: %s", strerror(errno));
			return 1;
		}
	}
	if (kwd_worker_start(d, err, sizeof(err)) || kwd_publisher_start(d, err, sizeof(err)) ||
	    kwd_watch_start(d, err, sizeof(err)) || kwd_otlp_start(d, err, sizeof(err)) ||
	    kwd_metrics_start(d, err, sizeof(err)) || kwd_decision_syslog_start(d, err, sizeof(err)) ||
	    kwd_ckpt_start(d, err, sizeof(err))) {
		kwd_log(d, LOG_ERR, "%s", err);
		kwd_control_shutdown(d);
		kw_hooks_close(d->hooks);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct kwd *d = &daemon_state;
	bool config_given = false, key_given = false;
	char err[512] = "";
	int e;

	d->cfg.state_dir = KW_DEFAULT_STATE_DIR;
	d->cfg.socket_path = KW_DEFAULT_SOCKET;
	d->cfg.key_path = KW_DEFAULT_KEY;
	d->cfg.config_path = KWD_DEFAULT_CONFIG;
	d->cfg.pin_dir = KWD_DEFAULT_PIN_DIR;
	d->cfg.ringbuf_size = KWD_DEFAULT_RINGBUF;
	d->cfg.log_backlog = KWD_DEFAULT_LOG_BACKLOG;
	d->cfg.user_sessions_max = KWD_DEFAULT_USER_SESSIONS;
	d->cfg.root_reserved_sessions = KWD_DEFAULT_ROOT_RESERVED;
	d->cfg.checkpoint_interval = KWD_DEFAULT_CHECKPOINT_INTERVAL;
	d->listen_fd = d->signal_fd = d->timer_fd = d->epfd = -1;

	e = parse_args(d, argc, argv, &config_given, &key_given);
	if (e >= 0)
		return e;
	if (prepare(d, config_given, key_given) || start(d))
		return 1;
	/* Pinned sessions of the previous collector go on in their logs; the
	 * logs of sessions that cannot get their seal and record. */
	kwd_resume_sessions(d);
	kwd_seal_unclosed(d);
	/* After the seals: says what the spool holds for `kwitness estate push`. */
	if (kwd_spool_start(d, err, sizeof(err)))
		kwd_log(d, LOG_ERR, "%s", err);
	/* what this kernel cannot serve, in the kernel's words: a session that
	 * governs one of these is refused with hooks_unavailable */
	for (int b = 0; b < KW_CLASS_COUNT; b++)
		if (!(kw_hooks_available(d->hooks) & (1u << b)))
			kwd_log(d, LOG_WARNING, "class %s unavailable: %s", kw_class_name(1u << b),
				kw_hooks_unavailable_reason(d->hooks, 1u << b) ?: "not loaded");
	kwd_log(d, LOG_NOTICE, "ready on %s (state %s, ring buffers %zu bytes, wakeup at %zu bytes, "
		"%u session(s) resumed)", d->cfg.socket_path, d->cfg.state_dir,
		d->cfg.ringbuf_size, d->wakeup_bytes, d->n_sessions);

	/* after every other thread started: they keep the normal priority */
	kwd_loop_priority_apply(d, "loop thread");
	e = run_loop(d);
	d->stopping = true;
	kwd_metrics_stop(d); /* before what it reads goes */
	if (d->cfg.close_on_exit || !d->cfg.pin_dir) {
		/* every open session ends with its trailer and record */
		kwd_sessions_close_all(d, false);
	} else {
		/* stop is not close: closes already asked for finish, the rest
		 * stay pinned and enforced; what was read goes to the log, what
		 * was not waits in the ring buffers for the next start */
		kwd_sessions_close_all(d, true);
		kwd_sessions_flush_all(d);
	}
	kwd_worker_stop(d); /* every log written */
	kwd_publisher_stop(d); /* every record sealed */
	reply_sealed(d);
	kwd_worker_free(d);
	kwd_sessions_release(d);
	kwd_ckpt_stop(d); /* every checkpoint written */
	if (kw_hooks_unpin_idle(d->hooks))
		kwd_log(d, LOG_INFO, "no session left: global programs unpinned");
	kwd_control_shutdown(d);
	kwd_otlp_stop(d); /* after the last entry */
	kwd_decision_syslog_stop(d); /* every decision line said */
	kwd_watch_stop(d);
	kw_hooks_close(d->hooks);
	kwd_attest_stop(d);
	kwd_transparency_stop(d);
	kw_key_free(d->key);
	free(d->programs);
	kwd_config_free(&d->cfg);
	kwd_log(d, LOG_NOTICE, "stopped");
	return e ? 1 : 0;
}

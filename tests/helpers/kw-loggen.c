/* SPDX-License-Identifier: Apache-2.0 */
/* kw-loggen: writes a synthetic decision log shaped like kwitnessd's (an open
 * entry, net.connect decisions of about 216 bytes, a trailer) to stdout,
 * streamed, so tests can verify logs of any size without keeping them.
 * The transcript hash is computed the collector's way (kw_transcript_append
 * per entry, as the log writer does) and written to --hash-out.
 *
 *   kw-loggen [--decisions N | --bytes B] [--session ID] [--sandbox-id S]
 *             [--bundle-hash H] [--image-digest D] [--mode M] [--seed N]
 *             [--gap-every K] [--no-close] [--hash-out FILE]
 *             [--hostname H] [--machine-id M]
 *
 * --gap-every K leaves out every K-th sequence number (a drop): the trailer
 * then counts them and says complete:false. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "collector/transcript.h"

static uint64_t rng = 88172645463325252ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct kw_buf out;
static struct kw_transcript tr;

static void emit(const struct kw_buf *line)
{
	if (kw_transcript_append(&tr, line->data, line->len) || kw_buf_append(&out, line->data, line->len) ||
	    kw_buf_putc(&out, '\n')) {
		fprintf(stderr, "kw-loggen: out of memory\n");
		exit(1);
	}
	if (out.len >= (1u << 20)) {
		if (kw_write_all(STDOUT_FILENO, out.data, out.len)) {
			fprintf(stderr, "kw-loggen: write: %s\n", strerror(errno));
			exit(1);
		}
		kw_buf_reset(&out);
	}
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "decisions", required_argument, NULL, 'n' }, { "bytes", required_argument, NULL, 'b' },
		{ "session", required_argument, NULL, 's' },   { "sandbox-id", required_argument, NULL, 'x' },
		{ "bundle-hash", required_argument, NULL, 'h' }, { "image-digest", required_argument, NULL, 'i' },
		{ "mode", required_argument, NULL, 'm' },      { "seed", required_argument, NULL, 'r' },
		{ "gap-every", required_argument, NULL, 'g' }, { "no-close", no_argument, NULL, 'c' },
		{ "hash-out", required_argument, NULL, 'o' },  { "hostname", required_argument, NULL, 'H' },
		{ "machine-id", required_argument, NULL, 'M' }, { 0 },
	};
	const char *session = "0123456789abcdef0123456789abcdef", *sandbox = "spiffe://example.org/agent/7";
	const char *bundle_hash = "sha256:b7a7d560278f34511e4abcc7a8909a3c07e9ee16143da6693b19cb3222ee0cae";
	const char *image = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	const char *mode = "enforce", *hash_out = NULL, *hostname = NULL, *machine_id = NULL;
	uint64_t decisions = 1000, bytes = 0, gap_every = 0, seq = 0, written = 0, denials = 0, gaps = 0;
	uint64_t total_bytes = 0;
	bool close_entry = true;
	struct kw_buf line = { 0 };
	struct jcs_obj o;
	char hash[KW_DIGEST_STR_MAX], host[32];
	int64_t ts = 1795952651050116LL;
	uint64_t count;
	int c, e;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': decisions = strtoull(optarg, NULL, 10); break;
		case 'b': bytes = strtoull(optarg, NULL, 10); break;
		case 's': session = optarg; break;
		case 'x': sandbox = optarg; break;
		case 'h': bundle_hash = optarg; break;
		case 'i': image = optarg; break;
		case 'm': mode = optarg; break;
		case 'r': rng ^= strtoull(optarg, NULL, 10) * 0x9E3779B97F4A7C15ULL; break;
		case 'g': gap_every = strtoull(optarg, NULL, 10); break;
		case 'c': close_entry = false; break;
		case 'o': hash_out = optarg; break;
		case 'H': hostname = optarg; break;
		case 'M': machine_id = optarg; break;
		default:
			fprintf(stderr, "usage: kw-loggen [--decisions N|--bytes B] [--session ID] "
					"[--sandbox-id S] [--bundle-hash H] [--image-digest D] [--mode M] "
					"[--seed N] [--gap-every K] [--no-close] [--hash-out FILE] "
					"[--hostname H] [--machine-id M]\n");
			return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	if (kw_transcript_init(&tr))
		return 1;

	e = jcs_obj_begin(&o, &line);
	e = e ?: jcs_obj_str(&o, "bundle_hash", bundle_hash);
	e = e ?: jcs_obj_str(&o, "cgroup", "/sys/fs/cgroup/kwitness/run-31531");
	e = e ?: jcs_obj_str(&o, "cgroup_id", "23471");
	e = e ?: jcs_obj_str(&o, "collector", "kwitnessd");
	e = e ?: jcs_obj_str(&o, "data_class", "internal");
	e = e ?: jcs_obj_str(&o, "hooks", "net.connect,net.send,net.bind,net.socket,dev,sysctl");
	if (hostname)
		e = e ?: jcs_obj_str(&o, "hostname", hostname);
	e = e ?: jcs_obj_str(&o, "image_digest", image);
	if (machine_id)
		e = e ?: jcs_obj_str(&o, "machine_id", machine_id);
	e = e ?: jcs_obj_str(&o, "mode", mode);
	e = e ?: jcs_obj_str(&o, "model_id", "claude-x");
	e = e ?: jcs_obj_str(&o, "model_provider", "anthropic");
	e = e ?: jcs_obj_str(&o, "on_record_failure", "deny");
	e = e ?: jcs_obj_str(&o, "record", "all");
	e = e ?: jcs_obj_int(&o, "ringbuf_size", 262144);
	e = e ?: jcs_obj_str(&o, "sandbox_id", sandbox);
	e = e ?: jcs_obj_str(&o, "session", session);
	e = e ?: jcs_obj_str(&o, "tool", "kwitness.open");
	e = e ?: jcs_obj_int(&o, "ts", ts);
	e = e ?: jcs_obj_end(&o);
	if (e)
		return 1;
	emit(&line);
	total_bytes += line.len + 1;

	for (;;) {
		bool deny;

		if (bytes ? total_bytes >= bytes : written >= decisions)
			break;
		if (gap_every && seq % gap_every == gap_every - 1) {
			seq++;
			gaps++;
			continue;
		}
		deny = next_rand() % 4 == 0;
		snprintf(host, sizeof(host), "10.%u.%u.%u", (unsigned)(next_rand() % 256),
			 (unsigned)(next_rand() % 256), (unsigned)(next_rand() % 256));
		ts += (int64_t)(next_rand() % 2000);
		kw_buf_reset(&line);
		e = jcs_obj_begin(&o, &line);
		e = e ?: jcs_obj_str(&o, "cgroup", "23471");
		e = e ?: jcs_obj_str(&o, "comm", "kw-netprobe");
		e = e ?: jcs_obj_str(&o, "decision", deny ? "deny" : "permit");
		/* A denial stops the action only in enforce mode (as kwitnessd writes it). */
		e = e ?: jcs_obj_bool(&o, "enforced", deny && !strcmp(mode, "enforce"));
		e = e ?: jcs_obj_str(&o, "host", host);
		e = e ?: jcs_obj_int(&o, "pid", 31533 + (int64_t)(next_rand() % 30000));
		e = e ?: jcs_obj_int(&o, "port", 1 + (int64_t)(next_rand() % 65535));
		e = e ?: jcs_obj_str(&o, "proto", "tcp");
		e = e ?: jcs_obj_str(&o, "rule", deny ? "net.connect:default" : "net.connect[0]");
		e = e ?: jcs_obj_int(&o, "seq", (int64_t)seq);
		e = e ?: jcs_obj_str(&o, "tool", "net.connect");
		e = e ?: jcs_obj_int(&o, "ts", ts);
		e = e ?: jcs_obj_int(&o, "uid", 0);
		e = e ?: jcs_obj_end(&o);
		if (e)
			return 1;
		emit(&line);
		total_bytes += line.len + 1;
		written++;
		denials += deny;
		seq++;
	}

	if (close_entry) {
		kw_buf_reset(&line);
		e = jcs_obj_begin(&o, &line);
		e = e ?: jcs_obj_bool(&o, "complete", gaps == 0);
		e = e ?: jcs_obj_int(&o, "decisions", (int64_t)written);
		e = e ?: jcs_obj_int(&o, "denials", (int64_t)denials);
		e = e ?: jcs_obj_int(&o, "dropped", (int64_t)gaps);
		e = e ?: jcs_obj_int(&o, "next_seq", (int64_t)seq);
		e = e ?: jcs_obj_int(&o, "seq_gaps", (int64_t)gaps);
		e = e ?: jcs_obj_str(&o, "session", session);
		e = e ?: jcs_obj_str(&o, "tool", "kwitness.close");
		e = e ?: jcs_obj_int(&o, "ts", ts + 1000);
		e = e ?: jcs_obj_int(&o, "unrecorded", 0);
		e = e ?: jcs_obj_end(&o);
		if (e)
			return 1;
		emit(&line);
	}
	if (out.len && kw_write_all(STDOUT_FILENO, out.data, out.len)) {
		fprintf(stderr, "kw-loggen: write: %s\n", strerror(errno));
		return 1;
	}
	if (kw_transcript_final(&tr, hash, &count))
		return 1;
	if (hash_out) {
		FILE *f = fopen(hash_out, "w");

		if (!f || fprintf(f, "%s %" PRIu64 "\n", hash, count) < 0 || fclose(f)) {
			fprintf(stderr, "kw-loggen: %s: %s\n", hash_out, strerror(errno));
			return 1;
		}
	}
	kw_buf_free(&line);
	kw_buf_free(&out);
	return 0;
}

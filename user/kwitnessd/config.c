/* SPDX-License-Identifier: Apache-2.0 */
/* /etc/kwitness/kwitnessd.conf: "key = value" lines, '#' comments. Unknown
 * keys are errors, so a typo never silently changes nothing. */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kwitness/abi/event.h"
#include "config.h"
#include "trace/logsegment.h"
#include "decision_syslog.h"
#include "metrics.h"
#include "loop_priority.h"


static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static int set_string(char **slot, const char *v)
{
	char *copy = strdup(v);

	if (!copy)
		return -ENOMEM;
	free(*slot);
	*slot = copy;
	return 0;
}

/* Power of two, at least one page, at most 1 GiB. */
static int parse_ringbuf_size(const char *v, size_t *out)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v)
		return -EINVAL;
	if (*end == 'k' || *end == 'K')
		n *= 1024, end++;
	else if (*end == 'm' || *end == 'M')
		n *= 1024 * 1024, end++;
	if (*end || n < 4096 || n > (1ull << 30) || (n & (n - 1)))
		return -EINVAL;
	*out = (size_t)n;
	return 0;
}

int kwd_parse_ringbuf_size(const char *v, size_t *out)
{
	return parse_ringbuf_size(v, out);
}

/* max_sessions_per_user (1 to every slot) and root_reserved_sessions (0 to
 * all but one slot). */
static int set_quota(struct kwd_config *c, const char *key, const char *v, char *err, size_t errlen,
		     const char *file, unsigned lineno)
{
	bool per_user = !strcmp(key, "max_sessions_per_user");
	unsigned long lo = per_user ? 1 : 0, hi = per_user ? KW_MAX_SESSIONS : KW_MAX_SESSIONS - 1;
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || end == v || *v == '-' || n < lo || n > hi) {
		snprintf(err, errlen, "%s:%u: %s must be a number from %lu to %lu", file, lineno, key,
			 lo, hi);
		return -EINVAL;
	}
	if (per_user)
		c->user_sessions_max = (unsigned)n;
	else
		c->root_reserved_sessions = (unsigned)n;
	return 0;
}

/* checkpoint_interval (seconds) and checkpoint_entries (decisions); 0: off. */
static int set_checkpoint(struct kwd_config *c, const char *key, const char *v, char *err,
			  size_t errlen, const char *file, unsigned lineno)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || *end || end == v || *v == '-' || n > 1000000000ull) {
		snprintf(err, errlen, "%s:%u: %s must be a number from 0 to 1000000000", file, lineno,
			 key);
		return -EINVAL;
	}
	if (!strcmp(key, "checkpoint_interval"))
		c->checkpoint_interval = n;
	else
		c->checkpoint_entries = n;
	return 0;
}

static int set_group(struct kwd_config *c, const char *v)
{
	struct group *g = getgrnam(v);
	char *end;
	unsigned long n;

	if (g) {
		c->group = g->gr_gid;
		c->have_group = true;
		return 0;
	}
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end)
		return -ENOENT;
	c->group = (gid_t)n;
	c->have_group = true;
	return 0;
}

/* "grant = USER|@GROUP PATH": USER and GROUP are names or numbers. */
static int add_grant(struct kwd_config *c, char *v, char *err, size_t errlen, const char *file,
		     unsigned line)
{
	char *sp = strpbrk(v, " \t"), *path, *who = v, *end;
	struct kwd_grant *g;
	unsigned long n;
	size_t len;

	if (!sp) {
		snprintf(err, errlen, "%s:%u: grant = USER|@GROUP /cgroup/path", file, line);
		return -EINVAL;
	}
	*sp = '\0';
	path = trim(sp + 1);
	len = strlen(path);
	while (len > 1 && path[len - 1] == '/')
		path[--len] = '\0';
	if (path[0] != '/' || strstr(path, "/../") || strstr(path, "/./") ||
	    (len >= 3 && !strcmp(path + len - 3, "/..")) || strstr(path, "//")) {
		snprintf(err, errlen, "%s:%u: grant path must be absolute and normalised", file, line);
		return -EINVAL;
	}
	if (c->n_grants == KWD_MAX_GRANTS) {
		snprintf(err, errlen, "%s:%u: at most %d grants", file, line, KWD_MAX_GRANTS);
		return -E2BIG;
	}
	g = &c->grants[c->n_grants];
	g->is_group = who[0] == '@';
	if (g->is_group)
		who++;
	errno = 0;
	n = strtoul(who, &end, 10);
	if (*who && !*end && !errno && n < 0xffffffffu) {
		g->id = (uint32_t)n;
	} else if (g->is_group) {
		struct group *gr = getgrnam(who);

		if (!gr) {
			snprintf(err, errlen, "%s:%u: unknown group '%s'", file, line, who);
			return -ENOENT;
		}
		g->id = gr->gr_gid;
	} else {
		struct passwd *pw = getpwnam(who);

		if (!pw) {
			snprintf(err, errlen, "%s:%u: unknown user '%s'", file, line, who);
			return -ENOENT;
		}
		g->id = pw->pw_uid;
	}
	g->path = strdup(path);
	if (!g->path)
		return -ENOMEM;
	c->n_grants++;
	return 0;
}

int kwd_config_load(struct kwd_config *c, const char *path, bool must_exist, char *err,
		    size_t errlen)
{
	FILE *f = fopen(path, "re");
	char line[2048];
	unsigned lineno = 0;
	int e = 0;

	if (!f) {
		if (errno == ENOENT && !must_exist)
			return 0;
		e = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return e;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq, *key, *val;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%u: line too long", path, lineno);
			e = -EINVAL;
			break;
		}
		s = trim(line);
		if (!*s || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%u: expected 'key = value'", path, lineno);
			e = -EINVAL;
			break;
		}
		*eq = '\0';
		key = trim(s);
		val = trim(eq + 1);
		if (!*val) {
			snprintf(err, errlen, "%s:%u: %s has no value", path, lineno, key);
			e = -EINVAL;
			break;
		}
		if (!strcmp(key, "group")) {
			e = set_group(c, val);
			if (e)
				snprintf(err, errlen, "%s:%u: unknown group '%s'", path, lineno, val);
		} else if (!strcmp(key, "ringbuf_size")) {
			size_t n;

			e = parse_ringbuf_size(val, &n);
			if (e)
				snprintf(err, errlen,
					 "%s:%u: ringbuf_size must be a power of two from 4096 to 1G",
					 path, lineno);
			else if (!c->ringbuf_from_cli)
				c->ringbuf_size = n;
		} else if (!strcmp(key, "max_sessions_per_user") ||
			   !strcmp(key, "root_reserved_sessions")) {
			e = set_quota(c, key, val, err, errlen, path, lineno);
		} else if (kwd_export_config_key(&c->exports, key, val, &e, err, errlen, path, lineno)) {
			/* watch_queue, otlp_*: export_config.c */
		} else if (!strcmp(key, "checkpoint_interval") ||
			   !strcmp(key, "checkpoint_entries")) {
			e = set_checkpoint(c, key, val, err, errlen, path, lineno);
		} else if (!strcmp(key, "checkpoint_tlog")) {
			e = strcmp(val, "true") && strcmp(val, "false") ? -EINVAL : 0;
			if (e)
				snprintf(err, errlen, "%s:%u: checkpoint_tlog must be true or false",
					 path, lineno);
			c->checkpoint_tlog = !strcmp(val, "true");
		} else if (!strcmp(key, "log_backlog")) {
			uint64_t n;

			e = kw_segment_bytes_parse(val, &n) || n > KWD_LOG_BACKLOG_MAX ? -EINVAL : 0;
			if (e)
				snprintf(err, errlen, "%s:%u: log_backlog must be 0 or a size from "
					 "4096 to 1G (K, M, G suffixes)", path, lineno);
			else
				c->log_backlog = n;
		} else if (!strcmp(key, "log_segment_bytes")) {
			e = kw_segment_bytes_parse(val, &c->log_segment_bytes);
			if (e)
				snprintf(err, errlen, "%s:%u: log_segment_bytes must be 0 or a size from "
					 "4096 to 1T (K, M, G, T suffixes)", path, lineno);
		} else if (!strcmp(key, "grant")) {
			e = add_grant(c, val, err, errlen, path, lineno);
		} else if (!strcmp(key, "verifier")) {
			e = set_string(&c->verifier, val);
		} else if (!strcmp(key, "model_provider")) {
			e = set_string(&c->model_provider, val);
		} else if (!strcmp(key, "model_id")) {
			e = set_string(&c->model_id, val);
		} else if (!strcmp(key, "data_class")) {
			e = set_string(&c->data_class, val);
		} else if (!strcmp(key, "estate")) {
			if (strncmp(val, "postgresql://", 13) && strncmp(val, "postgres://", 11) &&
			    strncmp(val, "sqlite:", 7)) {
				snprintf(err, errlen, "%s:%u: estate must be postgresql://... or sqlite:PATH",
					 path, lineno);
				e = -EINVAL;
			} else {
				e = set_string(&c->estate, val);
			}
		} else if (!strcmp(key, "tpm") || !strcmp(key, "tpm_pcrs") ||
			   !strcmp(key, "tpm_enrollment") || !strcmp(key, "tpm_ak")) {
			char **slot = key[3] == '\0'  ? &c->tpm
				      : key[4] == 'p' ? &c->tpm_pcrs
				      : key[4] == 'a' ? &c->tpm_ak
						      : &c->tpm_enrollment;

			/* The command line wins over the file. */
			if (!*slot)
				e = set_string(slot, val);
		} else if (!strcmp(key, "record_profile")) {
			enum kw_record_profile prof;

			e = kw_record_profile_parse(val, &prof);
			if (e)
				snprintf(err, errlen, "%s:%u: record_profile must be trace-v0.2 or trace-v0.3-draft",
					 path, lineno);
			else if (!c->record_profile_from_cli)
				c->record_profile = prof;
		} else if (!strcmp(key, "metrics") || !strcmp(key, "metrics_session_labels")) {
			e = kwd_config_metrics(c, key, val, err, errlen, path, lineno);
		} else if (!strcmp(key, "syslog_decisions")) {
			enum kwd_syslog_decisions v;

			e = kwd_syslog_decisions_parse(val, &v);
			if (e)
				snprintf(err, errlen, "%s:%u: syslog_decisions must be deny, all or off",
					 path, lineno);
			else
				c->syslog_decisions = v;
		} else if (!strcmp(key, "loop_priority")) {
			e = kwd_loop_priority_parse(val, &c->loop_priority);
			if (e)
				snprintf(err, errlen, "%s:%u: loop_priority must be normal or realtime",
					 path, lineno);
		} else if (!strcmp(key, "log")) {
			e = set_string(&c->log_dir, val);
		} else if (!strcmp(key, "log_key")) {
			e = set_string(&c->log_key, val);
		} else if (!strcmp(key, "log_policy")) {
			e = set_string(&c->log_policy, val);
		} else if (!strcmp(key, "log_witness")) {
			if (c->n_log_witness == KWD_LOG_WITNESSES_MAX) {
				snprintf(err, errlen, "%s:%u: at most %d log_witness lines", path, lineno,
					 KWD_LOG_WITNESSES_MAX);
				e = -EINVAL;
			} else {
				e = set_string(&c->log_witness[c->n_log_witness], val);
				if (!e)
					c->n_log_witness++;
			}
		} else {
			snprintf(err, errlen, "%s:%u: unknown key '%s'", path, lineno, key);
			e = -EINVAL;
		}
		if (e)
			break;
	}
	fclose(f);
	return e;
}

void kwd_config_free(struct kwd_config *c)
{
	free(c->log_dir);
	free(c->log_key);
	free(c->log_policy);
	for (size_t i = 0; i < c->n_log_witness; i++)
		free(c->log_witness[i]);
	free(c->verifier);
	free(c->model_provider);
	free(c->model_id);
	free(c->data_class);
	free(c->tpm);
	free(c->tpm_pcrs);
	free(c->tpm_enrollment);
	free(c->tpm_ak);
	free(c->estate);
	free(c->metrics_addr);
	c->estate = c->metrics_addr = NULL;
	c->tpm = c->tpm_pcrs = c->tpm_enrollment = c->tpm_ak = NULL;
	for (unsigned i = 0; i < c->n_grants; i++)
		free(c->grants[i].path);
	c->n_grants = 0;
	c->verifier = c->model_provider = c->model_id = c->data_class = NULL;
}

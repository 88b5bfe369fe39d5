/* SPDX-License-Identifier: Apache-2.0 */
/* Reaching a witness, see witness_client.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trace/key.h"
#include "tlog/witness_client.h"

int tlog_witness_client_open(const char *spec, const struct tlog_key *log,
			     struct tlog_witness_client *out, char *err, size_t errlen)
{
	char buf[1024], *name, *key, *state;
	struct kw_key *k = NULL;
	int ret;

	memset(out, 0, sizeof(*out));
	out->w.statefd = -1;
	if (!strncmp(spec, "http://", 7)) {
		if (http_url_parse(spec, &out->url)) {
			snprintf(err, errlen, "%s: not http://HOST[:PORT][/PREFIX]", spec);
			return -EINVAL;
		}
		return 0;
	}
	if (strncmp(spec, "local:", 6) || strlen(spec) >= sizeof(buf)) {
		snprintf(err, errlen, "%.200s: a witness is http://HOST:PORT or local:NAME:KEYFILE:STATEDIR",
			 spec);
		return -EINVAL;
	}
	strcpy(buf, spec + 6);
	name = buf;
	key = strchr(name, ':');
	state = key ? strchr(key + 1, ':') : NULL;
	if (!state) {
		snprintf(err, errlen, "%.200s: local:NAME:KEYFILE:STATEDIR", spec);
		return -EINVAL;
	}
	*key++ = '\0';
	*state++ = '\0';
	ret = kw_key_load_private(key, &k);
	if (!ret)
		ret = tlog_key_from(name, TLOG_SIG_COSIGNATURE, k, &out->w.key);
	if (ret) {
		kw_key_free(k);
		snprintf(err, errlen, "witness key %.200s: %s", key, strerror(-ret));
		return ret;
	}
	if (mkdir(state, 0700) < 0 && errno != EEXIST) {
		ret = -errno;
	} else {
		out->w.statefd = open(state, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		ret = out->w.statefd < 0 ? -errno : 0;
	}
	if (ret) {
		snprintf(err, errlen, "witness state %.200s: %s", state, strerror(-ret));
		tlog_witness_client_close(out);
		return ret;
	}
	out->local = true;
	out->w.logs = log;
	out->w.nlogs = 1;
	return 0;
}

int tlog_witness_client_submit(void *ctx, const char *req, size_t len, struct kw_buf *resp)
{
	struct tlog_witness_client *c = ctx;

	if (c->local)
		return tlog_witness_add_checkpoint(&c->w, req, len, (uint64_t)time(NULL), resp);
	return http_post(&c->url, "/add-checkpoint", req, len, TLOG_NOTE_MAX, resp);
}

void tlog_witness_client_close(struct tlog_witness_client *c)
{
	if (c->w.statefd >= 0)
		close(c->w.statefd);
	tlog_key_clear(&c->w.key);
	c->w.statefd = -1;
}

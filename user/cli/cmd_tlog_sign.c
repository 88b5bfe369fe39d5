/* SPDX-License-Identifier: Apache-2.0 */
/* kwitness tlog sign: sign a built record once and log it (the sign-once
 * order of collector/publish.c), as kwitnessd does with `log = DIR`. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "lib/buf.h"
#include "jcs/jcs.h"
#include "collector/publish.h"
#include "cli_key.h"
#include "cli_record.h"
#include "cli_tlog.h"
#include "tlog/log.h"
#include "tlog/witness_client.h"


void cli_tlog_sign_usage(FILE *f)
{
	fprintf(f,
		"usage: kwitness tlog sign DIR --key LOGKEY --signing-key KEY [--witness-at W]...\n"
		"                          [--witness-policy POLICY] --out RECORD UNSIGNED\n\n"
		"Signs the unsigned record UNSIGNED (kwitness record build) once, with its\n"
		"transparency URL set, appends it to the log in DIR, has the witnesses cosign\n"
		"the new checkpoint, and writes RECORD and RECORD.tlog-proof. When a step\n"
		"fails the record is written without transparency (re-signed), no proof is\n"
		"written, and the exit status is 1.\n\n"
		"  --key LOGKEY           the log's private key (its name: the log's origin)\n"
		"  --signing-key KEY      the record's signing key (TRACE_PRIVATE_KEY_PEM if absent)\n"
		"  --witness-at W         http://HOST:PORT[/PREFIX] or local:NAME:KEYFILE:STATEDIR\n"
		"  --witness-policy FILE  a tlog-policy the cosigned checkpoint must meet\n"
		"  --out RECORD           where to write the signed record\n");
}

static int write_out(const char *path, const struct kw_buf *b)
{
	int ret = kw_write_file_atomic(path, b->data, b->len, 0644);

	if (ret)
		fprintf(stderr, "kwitness tlog sign: %s: %s\n", path, strerror(-ret));
	return ret;
}

/* Reads UNSIGNED, runs the sign-once order with pub, writes RECORD and (when
 * logged) RECORD.tlog-proof. Exit status: 0 logged, 1 not logged or error. */
static int sign_and_write(const struct kw_publish *pub, const struct kw_key *key, const char *out,
			  const char *unsigned_path)
{
	struct kw_buf text = { 0 }, proof = { 0 }, rec_text = { 0 };
	char why[600], path[4096];
	json_t *rec = NULL;
	int status = 1, ret;

	if (cli_read("tlog", "record", unsigned_path, CLI_RECORD_MAX, &text))
		goto out;
	rec = jcs_parse(text.data ? text.data : "", text.len, NULL);
	if (!rec || !json_is_object(rec)) {
		fprintf(stderr, "kwitness tlog sign: %s is not a JSON object\n", unsigned_path);
		goto out;
	}
	json_object_del(rec, "signature");
	json_object_del(rec, "transparency");
	ret = kw_publish_record(rec, key, pub, &proof, why, sizeof(why));
	status = 1;
	if (ret == -EKEYREJECTED) {
		fprintf(stderr, "kwitness tlog sign: %s; the record could not be re-signed\n", why);
		goto out;
	}
	/* The proof first: a record with a URI never appears without it. */
	snprintf(path, sizeof(path), "%s.tlog-proof", out);
	if (ret)
		remove(path);
	else if (write_out(path, &proof))
		goto out;
	if (jcs_dump(rec, &rec_text) || kw_buf_putc(&rec_text, '\n') || write_out(out, &rec_text))
		goto out;
	if (ret) {
		fprintf(stderr, "kwitness tlog sign: not logged: %s; %s written without transparency\n",
			why, out);
		goto out;
	}
	printf("logged: %s, proof %s\n", json_string_value(json_object_get(rec, "transparency")), path);
	status = 0;
out:
	json_decref(rec);
	kw_buf_free(&text);
	kw_buf_free(&proof);
	kw_buf_free(&rec_text);
	return status;
}

int cli_tlog_sign(const char *dir, const char *logkey, const char *signkey, char **witnesses,
		 size_t nw, const char *policy_path, const char *out, const char *unsigned_path)
{
	struct tlog_key lk = { 0 };
	struct kw_key *key = NULL;
	struct cli_tlog_witnesses wit = { 0 };
	struct kw_publish pub = { .log_dir = dir };
	struct kw_buf cp = { 0 };
	struct tlog_note n;
	struct tlog_checkpoint c;
	int status = 2, fd;

	if (nw > CLI_WITNESSES_MAX) {
		fprintf(stderr, "kwitness tlog sign: at most %d witnesses\n", CLI_WITNESSES_MAX);
		return 2;
	}
	/* The log's origin names its key. */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || tlog_read_checkpoint(fd, &cp, &n, &c)) {
		fprintf(stderr, "kwitness tlog sign: %s holds no log\n", dir);
		if (fd >= 0)
			close(fd);
		goto out;
	}
	close(fd);
	if (cli_tlog_key("tlog", logkey, c.origin, TLOG_SIG_ED25519, &lk) ||
	    cli_load_signing_key("tlog", signkey, &key))
		goto out;
	if (cli_tlog_witnesses_open("tlog sign", &wit, witnesses, nw, &lk, policy_path))
		goto out;
	pub.log_key = &lk;
	pub.witnesses = wit.pw;
	pub.nwitnesses = nw;
	pub.policy = wit.policy;
	status = sign_and_write(&pub, key, out, unsigned_path);
out:
	cli_tlog_witnesses_close(&wit);
	tlog_key_clear(&lk);
	kw_key_free(key);
	kw_buf_free(&cp);
	return status;
}

int cli_tlog_sign_remote(const char *url, const char *log_vkey, const char *token_file,
			const char *signkey, const char *out, const char *unsigned_path)
{
	struct kw_publish pub = { .remote = url };
	struct tlog_key lk = { 0 };
	struct kw_key *key = NULL;
	struct kw_buf token = { 0 };
	int status = 2;

	if (!log_vkey || !token_file) {
		fprintf(stderr, "kwitness tlog sign: a shared writer needs --log-vkey VKEY and --token FILE\n");
		return 2;
	}
	if (tlog_key_parse_vkey(log_vkey, strlen(log_vkey), &lk) || lk.type != TLOG_SIG_ED25519) {
		tlog_key_clear(&lk);
		fprintf(stderr, "kwitness tlog sign: --log-vkey is not a log verifier key\n");
		return 2;
	}
	status = 1;
	if (cli_read("tlog", "token", token_file, 4096, &token) || cli_load_signing_key("tlog", signkey, &key))
		goto out;
	while (token.len && (token.data[token.len - 1] == '\n' || token.data[token.len - 1] == '\r'))
		token.data[--token.len] = '\0';
	pub.token = token.data ? token.data : "";
	pub.log_key = &lk;
	status = sign_and_write(&pub, key, out, unsigned_path);
out:
	tlog_key_clear(&lk);
	kw_key_free(key);
	if (token.data)
		OPENSSL_cleanse(token.data, token.len);
	kw_buf_free(&token);
	return status;
}

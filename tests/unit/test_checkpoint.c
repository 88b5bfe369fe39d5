/* SPDX-License-Identifier: Apache-2.0 */
/* Interim checkpoints: the transcript prefix (a copy of the running digest)
 * against SHA-256 of the array built here at random cut points; the signed
 * line read back; the chain walk's verdicts (forged, removed, reordered,
 * another key, a changed vouched line, a torn last checkpoint, a cut log);
 * and the signature form checked by node (Ed25519) and the npm canonicalize
 * package, an RFC 8785 implementation of its own. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <openssl/sha.h>

#include "lib/buf.h"
#include "collector/checkpoint.h"
#include "collector/transcript.h"
#include "trace/key.h"
#include "verify/checkpoint.h"

#define N_ENTRIES 600
#define SESSION "0123456789abcdef0123456789abcdef"

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct kw_key *key_from(uint8_t fill)
{
	uint8_t seed[32];
	struct kw_key *key = NULL;

	memset(seed, fill, sizeof(seed));
	assert_int_equal(kw_key_from_seed(seed, &key), 0);
	return key;
}

/* Entry i: a canonical object whose length varies (some longer than the
 * transcript's stage, so both of its paths run). */
static void entry(int i, struct kw_buf *out)
{
	size_t pad = next_rand() % 97 == 0 ? 5000 : next_rand() % 300;

	char head[48];

	kw_buf_reset(out);
	kw_buf_append(out, head, (size_t)snprintf(head, sizeof(head), "{\"i\":%d,\"pad\":\"", i));
	for (size_t k = 0; k < pad; k++)
		kw_buf_putc(out, (char)('a' + next_rand() % 26));
	kw_buf_append(out, "\"}", 2);
}

/* "sha256:" + hex of SHA-256 over "[" + the first n entries joined by "," + "]",
 * with OpenSSL's one-shot SHA256 (not the streaming code under test). */
static void expected_prefix(char **entries, int n, char out[KW_DIGEST_STR_MAX])
{
	struct kw_buf arr = { 0 };
	unsigned char md[SHA256_DIGEST_LENGTH];

	kw_buf_putc(&arr, '[');
	for (int i = 0; i < n; i++) {
		if (i)
			kw_buf_putc(&arr, ',');
		kw_buf_append(&arr, entries[i], strlen(entries[i]));
	}
	kw_buf_putc(&arr, ']');
	SHA256((const unsigned char *)arr.data, arr.len, md);
	strcpy(out, "sha256:");
	for (int i = 0; i < SHA256_DIGEST_LENGTH; i++)
		sprintf(out + 7 + 2 * i, "%02x", md[i]);
	kw_buf_free(&arr);
}

static char **make_entries(void)
{
	char **e = calloc(N_ENTRIES, sizeof(*e));
	struct kw_buf b = { 0 };

	for (int i = 0; i < N_ENTRIES; i++) {
		entry(i, &b);
		e[i] = strndup(b.data, b.len);
	}
	kw_buf_free(&b);
	return e;
}

static void free_entries(char **e)
{
	for (int i = 0; i < N_ENTRIES; i++)
		free(e[i]);
	free(e);
}

static void test_prefix_random_cuts(void **state)
{
	char **e = make_entries();
	struct kw_transcript t;
	char got[KW_DIGEST_STR_MAX], want[KW_DIGEST_STR_MAX];
	uint64_t count;
	int i = 0, checked = 0;

	(void)state;
	assert_int_equal(kw_transcript_init(&t), 0);
	kw_transcript_prefix(&t, got, &count);
	expected_prefix(e, 0, want);
	assert_string_equal(got, want); /* "[]" */
	while (i < N_ENTRIES) {
		/* a run of entries, one at a time or as written lines */
		int run = 1 + (int)(next_rand() % 40);

		if (run > N_ENTRIES - i)
			run = N_ENTRIES - i;
		if (next_rand() % 2) {
			for (int k = 0; k < run; k++, i++)
				assert_int_equal(kw_transcript_append(&t, e[i], strlen(e[i])), 0);
		} else {
			struct kw_buf lines = { 0 };

			for (int k = 0; k < run; k++, i++) {
				kw_buf_append(&lines, e[i], strlen(e[i]));
				kw_buf_putc(&lines, '\n');
			}
			assert_int_equal(kw_transcript_append_lines(&t, lines.data, lines.len), 0);
			kw_buf_free(&lines);
		}
		assert_int_equal(kw_transcript_prefix(&t, got, &count), 0);
		assert_int_equal(count, (uint64_t)i);
		expected_prefix(e, i, want);
		assert_string_equal(got, want);
		checked++;
	}
	assert_true(checked > 20);
	/* the prefixes left the stream as it was */
	assert_int_equal(kw_transcript_final(&t, got, &count), 0);
	expected_prefix(e, N_ENTRIES, want);
	assert_string_equal(got, want);
	free_entries(e);
}

/* A log of n lines in dir/log and a checkpoint at each of cuts[], signed
 * with key, in dir/log.checkpoints. */
static void write_session(const char *dir, char **e, int n, const int *cuts, int ncuts,
			  const struct kw_key *key)
{
	char path[512], prev[KW_DIGEST_STR_MAX] = "";
	FILE *log, *ck;
	struct kw_buf line = { 0 };

	snprintf(path, sizeof(path), "%s/log", dir);
	log = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/log" KW_CHECKPOINT_SUFFIX, dir);
	ck = fopen(path, "w");
	assert_non_null(log);
	assert_non_null(ck);
	for (int i = 0; i < n; i++)
		fprintf(log, "%s\n", e[i]);
	for (int c = 0; c < ncuts; c++) {
		struct kw_checkpoint k = { .n = (uint64_t)c + 1, .lines = (uint64_t)cuts[c],
					   .last_seq = cuts[c] - 2, .decisions = (uint64_t)cuts[c] - 1,
					   .ts = 1796000000000000 + c };

		strcpy(k.session, SESSION);
		strcpy(k.prev, prev);
		expected_prefix(e, cuts[c], k.prefix);
		assert_int_equal(kw_checkpoint_sign(&k, key, &line, prev), 0);
		fprintf(ck, "%.*s\n", (int)line.len, line.data);
	}
	fclose(log);
	fclose(ck);
	kw_buf_free(&line);
}

/* The chain walk over dir/log with the checkpoints at ckpath. */
static enum kw_verify_reason walk(const char *dir, const char *ckname, const struct kw_key *key,
				  struct verify_cut *out)
{
	char log[512], ck[512], err[512];

	snprintf(log, sizeof(log), "%s/log", dir);
	snprintf(ck, sizeof(ck), "%s/%s", dir, ckname);
	assert_int_equal(verify_log_checkpoints(key, log, ck, out, err, sizeof(err)), 0);
	return out->ck.problem;
}

/* Rewrites dir/log.checkpoints into dir/NAME through a shell command. */
static void derive(const char *dir, const char *name, const char *cmd)
{
	char sh[1200];

	snprintf(sh, sizeof(sh), "cd '%s' && %s <log.checkpoints >%s", dir, cmd, name);
	assert_int_equal(system(sh), 0);
}

static void test_chain(void **state)
{
	static const int cuts[] = { 10, 60, 61, 200, 333, 500 };
	char dir[] = "/tmp/kw-ckpt-XXXXXX", sh[1200];
	char **e = make_entries();
	struct kw_key *key = key_from(7), *other = key_from(8);
	struct verify_cut r;

	(void)state;
	assert_non_null(mkdtemp(dir));
	write_session(dir, e, 520, cuts, 6, key);
	assert_int_equal(walk(dir, "log.checkpoints", key, &r), KW_VERIFY_OK);
	assert_int_equal(r.ck.vouched_n, 6);
	assert_int_equal(r.ck.vouched_lines, 500);
	assert_int_equal(r.ck.chain, 6);
	assert_true(r.valid);

	assert_int_equal(walk(dir, "log.checkpoints", other, &r), KW_VERIFY_CHECKPOINT_KEY_MISMATCH);
	derive(dir, "forged", "sed '2s/\"decisions\":59/\"decisions\":58/'");
	assert_int_equal(walk(dir, "forged", key, &r), KW_VERIFY_CHECKPOINT_SIGNATURE_INVALID);
	assert_int_equal(r.ck.vouched_n, 1);
	derive(dir, "removed", "sed 3d");
	assert_int_equal(walk(dir, "removed", key, &r), KW_VERIFY_CHECKPOINT_CHAIN_GAP);
	derive(dir, "reordered", "awk 'NR==4{h=$0;next} NR==5{print;print h;next} {print}'");
	assert_int_equal(walk(dir, "reordered", key, &r), KW_VERIFY_CHECKPOINT_REORDERED);
	derive(dir, "dup", "awk '{print} NR==2{print}'");
	assert_int_equal(walk(dir, "dup", key, &r), KW_VERIFY_CHECKPOINT_REORDERED);
	derive(dir, "garbage", "sed '2s/^{/[/'");
	assert_int_equal(walk(dir, "garbage", key, &r), KW_VERIFY_CHECKPOINT_MALFORMED);
	/* a torn last checkpoint (the power went while it was written) is ignored */
	derive(dir, "torn", "head -c -40");
	assert_int_equal(walk(dir, "torn", key, &r), KW_VERIFY_OK);
	assert_true(r.ck.torn);
	assert_int_equal(r.ck.vouched_n, 5);

	/* the log cut inside line 250: vouched through checkpoint 4 (200 lines) */
	snprintf(sh, sizeof(sh), "cd '%s' && head -n 249 log >cut && printf '{\"i\":' >>cut && mv cut log",
		 dir);
	assert_int_equal(system(sh), 0);
	assert_int_equal(walk(dir, "log.checkpoints", key, &r), KW_VERIFY_OK);
	assert_int_equal(r.ck.vouched_lines, 200);
	assert_int_equal(r.ck.vouched_n, 4);
	assert_int_equal(r.ck.chain, 6); /* the rest of the chain is still checked */
	assert_true(r.ck.beyond_log);
	assert_int_equal(r.stop, KW_VERIFY_LOG_TRUNCATED);
	assert_true(r.valid);

	/* a vouched line changed */
	snprintf(sh, sizeof(sh), "cd '%s' && sed -i '30s/\"i\":29/\"i\":28/' log", dir);
	assert_int_equal(system(sh), 0);
	assert_int_equal(walk(dir, "log.checkpoints", key, &r), KW_VERIFY_CHECKPOINT_PREFIX_MISMATCH);
	assert_int_equal(r.ck.vouched_n, 1);
	assert_false(r.valid);

	snprintf(sh, sizeof(sh), "rm -rf '%s'", dir);
	assert_int_equal(system(sh), 0);
	kw_key_free(key);
	kw_key_free(other);
	free_entries(e);
}

/* node's Ed25519 over the npm canonicalize package's bytes of the line
 * without "signature", under the signer's JWK; and the line is its own
 * canonical form. */
static void test_node_signature(void **state)
{
	const char *root = getenv("KW_ROOT") ? getenv("KW_ROOT") : ".";
	struct kw_key *key = key_from(9);
	struct kw_checkpoint k = { .n = 2, .lines = 41, .last_seq = 39, .decisions = 40,
				   .denials = 3, .dropped = 1, .gaps = 1, .ts = 1796000000123456 };
	struct kw_buf line = { 0 };
	char npm[1024], cmd[4096], hash[KW_DIGEST_STR_MAX], file[] = "/tmp/kw-ckpt-node-XXXXXX";
	json_t *jwk = kw_key_public_jwk(key);
	char *jwk_text = json_dumps(jwk, JSON_COMPACT);
	FILE *f;
	int fd;

	(void)state;
	snprintf(npm, sizeof(npm), "%s/build/npm/node_modules/canonicalize/package.json", root);
	if (system("command -v node >/dev/null 2>&1") != 0 || access(npm, R_OK) != 0)
		fail_msg("node or the npm canonicalize package is missing: run scripts/deps.sh");
	strcpy(k.session, SESSION);
	strcpy(k.prefix, "sha256:00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
	strcpy(k.prev, "sha256:ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100");
	assert_int_equal(kw_checkpoint_sign(&k, key, &line, hash), 0);
	fd = mkstemp(file);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fprintf(f, "%s\n%.*s\n", jwk_text, (int)line.len, line.data);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s/build/npm' && node --input-type=module -e '"
		 "import fs from \"fs\"; import crypto from \"crypto\"; import canonicalize from \"canonicalize\";"
		 "const [jwk, line] = fs.readFileSync(process.argv[1], \"utf8\").split(\"\\n\");"
		 "const o = JSON.parse(line); if (canonicalize(o) !== line) process.exit(3);"
		 "const sig = Buffer.from(o.signature, \"base64url\"); delete o.signature;"
		 "const key = crypto.createPublicKey({ key: JSON.parse(jwk), format: \"jwk\" });"
		 "const ok = crypto.verify(null, Buffer.from(canonicalize(o)), key, sig);"
		 "const h = \"sha256:\" + crypto.createHash(\"sha256\").update(line).digest(\"hex\");"
		 "process.stdout.write((ok ? \"valid \" : \"invalid \") + h);' %s",
		 root, file);
	f = popen(cmd, "r");
	assert_non_null(f);
	char out[256] = "", want[300];
	size_t got = fread(out, 1, sizeof(out) - 1, f);
	out[got] = '\0';
	assert_int_equal(pclose(f), 0);
	snprintf(want, sizeof(want), "valid %s", hash);
	assert_string_equal(out, want);
	/* and a changed byte is refused by node too */
	line.data[line.len - 3] = line.data[line.len - 3] == '1' ? '2' : '1';
	f = fopen(file, "w");
	fprintf(f, "%s\n%.*s\n", jwk_text, (int)line.len, line.data);
	fclose(f);
	f = popen(cmd, "r");
	got = fread(out, 1, sizeof(out) - 1, f);
	out[got] = '\0';
	pclose(f);
	assert_int_equal(strncmp(out, "invalid ", 8), 0);
	unlink(file);
	free(jwk_text);
	json_decref(jwk);
	kw_buf_free(&line);
	kw_key_free(key);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefix_random_cuts),
		cmocka_unit_test(test_chain),
		cmocka_unit_test(test_node_signature),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

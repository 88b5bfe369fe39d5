/* SPDX-License-Identifier: Apache-2.0 */
/* The user-error messages (lib/messages.c): the edit distance and "did you
 * mean", the valid-names list, and each signing-key case names its fix. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/messages.h"
#include "trace/key.h"

static void test_distance(void **state)
{
	(void)state;
	assert_int_equal(kw_edit_distance("", ""), 0);
	assert_int_equal(kw_edit_distance("connect", "connect"), 0);
	assert_int_equal(kw_edit_distance("conect", "connect"), 1);  /* deletion */
	assert_int_equal(kw_edit_distance("kye", "key"), 1);         /* neighbours swapped */
	assert_int_equal(kw_edit_distance("kitten", "sitting"), 3);  /* the textbook pair */
	assert_int_equal(kw_edit_distance("abc", ""), 3);
}

static void test_nearest(void **state)
{
	static const char *const classes[] = { "connect", "bind", "sendmsg", "dns", NULL };

	(void)state;
	assert_string_equal(kw_nearest("conect", classes), "connect");
	assert_string_equal(kw_nearest("bnid", classes), "bind");
	assert_null(kw_nearest("egress", classes)); /* not near anything */
	assert_null(kw_nearest("x", classes));
}

static void test_valid_names(void **state)
{
	static const char *const modes[] = { "enforce", "observe", NULL };
	char buf[120];

	(void)state;
	assert_string_equal(kw_valid_names(buf, sizeof(buf), "enforced", modes),
			    "valid: enforce, observe; did you mean \"enforce\"?");
	assert_string_equal(kw_valid_names(buf, sizeof(buf), "declared", modes),
			    "valid: enforce, observe");
	assert_string_equal(kw_valid_names(buf, 10, NULL, modes), "valid: en"); /* cut, terminated */
}

static void test_signing_key(void **state)
{
	char dir[] = "/tmp/kw-msgtest.XXXXXX", path[128], buf[600];
	struct kw_key *k = NULL;
	FILE *f;
	int e;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/missing.pem", dir);
	e = kw_key_load_private(path, &k);
	assert_int_equal(e, -ENOENT);
	kw_msg_signing_key(buf, sizeof(buf), path, e, "--key");
	assert_non_null(strstr(buf, "kwitness keygen --out "));
	assert_non_null(strstr(buf, path));
	assert_non_null(strstr(buf, "--key FILE"));

	/* a public JWK given as the signing key, at 0644 (refused for its mode
	 * first) and at 0600 (not PEM): both say it is a public key */
	snprintf(path, sizeof(path), "%s/pub.jwk", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"crv\":\"Ed25519\",\"kty\":\"OKP\",\"x\":\"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo\"}\n", f);
	fclose(f);
	for (int mode = 0; mode < 2; mode++) {
		chmod(path, mode ? 0600 : 0644);
		e = kw_key_load_private(path, &k);
		assert_int_equal(e, mode ? -EINVAL : -EPERM);
		kw_msg_signing_key(buf, sizeof(buf), path, e, "--key");
		assert_non_null(strstr(buf, "is a public JWK, not a signing key"));
		assert_non_null(strstr(buf, "kwitness keygen --out FILE"));
	}
	unlink(path);
	rmdir(dir);
}

static void test_unreachable(void **state)
{
	char buf[400];

	(void)state;
	kw_msg_unreachable(buf, sizeof(buf), "/run/x.sock", ENOENT);
	assert_non_null(strstr(buf, "cannot reach kwitnessd at /run/x.sock"));
	assert_non_null(strstr(buf, "systemctl start kwitnessd"));
	assert_non_null(strstr(buf, "--socket PATH or KWITNESS_SOCKET"));
	kw_msg_unreachable(buf, sizeof(buf), "/run/x.sock", EACCES);
	assert_non_null(strstr(buf, "`group` in kwitnessd.conf"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_distance),
		cmocka_unit_test(test_nearest),
		cmocka_unit_test(test_valid_names),
		cmocka_unit_test(test_signing_key),
		cmocka_unit_test(test_unreachable),
	};

	return cmocka_run_group_tests_name("messages", tests, NULL, NULL);
}

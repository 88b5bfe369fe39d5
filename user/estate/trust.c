/* SPDX-License-Identifier: Apache-2.0 */
/* Trusted signer keys, see trust.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kwitness/buf.h"
#include "estate/trust.h"

struct trusted_key {
	char thumbprint[KW_THUMBPRINT_MAX];
	struct kw_key *key;
};

struct estate_trust {
	struct trusted_key *keys;
	size_t n, cap;
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && !strcmp(s + n - m, suffix);
}

static int by_thumbprint(const void *a, const void *b)
{
	return strcmp(((const struct trusted_key *)a)->thumbprint,
		      ((const struct trusted_key *)b)->thumbprint);
}

struct estate_trust *estate_trust_load(const char *dir, char *err, size_t errlen)
{
	struct estate_trust *t = calloc(1, sizeof(*t));
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!t || !d) {
		snprintf(err, errlen, "cannot open the trust folder %s: %s", dir,
			 t ? strerror(errno) : "out of memory");
		goto fail;
	}
	while ((de = readdir(d))) {
		char path[4096];
		struct stat st;
		int rc;

		if (de->d_name[0] == '.' || !(ends_with(de->d_name, ".jwk") ||
					      ends_with(de->d_name, ".json") || ends_with(de->d_name, ".pem")))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st) || !S_ISREG(st.st_mode)) {
			snprintf(err, errlen, "trust folder: %s is not a regular file", path);
			goto fail;
		}
		if (t->n == ESTATE_TRUST_MAX) {
			snprintf(err, errlen, "trust folder: more than %d keys", ESTATE_TRUST_MAX);
			goto fail;
		}
		if (t->n == t->cap) {
			struct trusted_key *k = kw_array_grow(t->keys, &t->cap, sizeof(*k), 16);

			if (!k) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
			t->keys = k;
		}
		rc = kw_key_load_public(path, &t->keys[t->n].key);
		if (rc) {
			snprintf(err, errlen, "trust folder: %s is not a public key: %s", path, strerror(-rc));
			goto fail;
		}
		t->n++;
		if (kw_key_thumbprint(t->keys[t->n - 1].key, t->keys[t->n - 1].thumbprint)) {
			snprintf(err, errlen, "trust folder: %s: cannot compute its thumbprint", path);
			goto fail;
		}
	}
	closedir(d);
	if (t->n)
		qsort(t->keys, t->n, sizeof(*t->keys), by_thumbprint);
	return t;
fail:
	if (d)
		closedir(d);
	estate_trust_free(t);
	return NULL;
}

struct estate_trust *estate_trust_of_key(const struct kw_key *key, char *err, size_t errlen)
{
	struct estate_trust *t = calloc(1, sizeof(*t));
	json_t *jwk = key ? kw_key_public_jwk(key) : NULL;

	if (!t || !jwk || !(t->keys = calloc(1, sizeof(*t->keys))) ||
	    kw_key_from_jwk(jwk, &t->keys[0].key)) {
		snprintf(err, errlen, "cannot take the public half of the signing key");
		json_decref(jwk);
		estate_trust_free(t);
		return NULL;
	}
	json_decref(jwk);
	t->n = t->cap = 1;
	if (kw_key_thumbprint(t->keys[0].key, t->keys[0].thumbprint)) {
		snprintf(err, errlen, "cannot compute the signing key's thumbprint");
		estate_trust_free(t);
		return NULL;
	}
	return t;
}

const struct kw_key *estate_trust_find(const struct estate_trust *t, const char *thumbprint)
{
	struct trusted_key k = { 0 }, *hit;

	if (!t || !t->n || !thumbprint || strlen(thumbprint) >= sizeof(k.thumbprint))
		return NULL;
	strcpy(k.thumbprint, thumbprint);
	hit = bsearch(&k, t->keys, t->n, sizeof(*t->keys), by_thumbprint);
	return hit ? hit->key : NULL;
}

size_t estate_trust_count(const struct estate_trust *t)
{
	return t ? t->n : 0;
}

void estate_trust_free(struct estate_trust *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		kw_key_free(t->keys[i].key);
	free(t->keys);
	free(t);
}

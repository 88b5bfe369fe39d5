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

#include "lib/buf.h"
#include "estate/trust.h"

struct trusted_key {
	char thumbprint[KW_THUMBPRINT_MAX];
	char file[256];               /* its file name in the folder */
	struct kw_key *key;
};

/* One line of the hosts file: NULL fields are not constrained. */
struct binding {
	char thumbprint[KW_THUMBPRINT_MAX];
	char *hostname, *machine_id;
};

struct estate_trust {
	struct trusted_key *keys;
	size_t n, cap;
	bool binds;
	struct binding *bindings;
	size_t nb, capb;
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

static int by_binding(const void *a, const void *b)
{
	return strcmp(((const struct binding *)a)->thumbprint,
		      ((const struct binding *)b)->thumbprint);
}

static const struct trusted_key *key_by_file(const struct estate_trust *t, const char *file)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->keys[i].file, file))
			return &t->keys[i];
	return NULL;
}

/* One line "KEYFILE field=value..." into b; a message in err when it is not
 * one. */
static int parse_binding(const struct estate_trust *t, char *line, struct binding *b, char *err,
			 size_t errlen)
{
	char *save = NULL, *word = strtok_r(line, " \t", &save);
	const struct trusted_key *k = key_by_file(t, word);

	if (!k) {
		snprintf(err, errlen, "binds %.200s, which is no key file of the folder", word);
		return -1;
	}
	memcpy(b->thumbprint, k->thumbprint, sizeof(b->thumbprint));
	while ((word = strtok_r(NULL, " \t", &save))) {
		char **field = !strncmp(word, "hostname=", 9) ? &b->hostname
			     : !strncmp(word, "machine_id=", 11) ? &b->machine_id : NULL;
		const char *v = strchr(word, '=');

		if (!field || !v || !v[1] || *field) {
			snprintf(err, errlen, "'%.200s' is not hostname=NAME or machine_id=ID (once each)",
				 word);
			return -1;
		}
		if (!(*field = strdup(v + 1))) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	if (!b->hostname && !b->machine_id) {
		snprintf(err, errlen, "binds %.200s to no host (want hostname= or machine_id=)",
			 k->file);
		return -1;
	}
	return 0;
}

/* The folder's hosts file, when there is one (not through a link). */
static int load_hosts(struct estate_trust *t, int dirfd, const char *dir, char *err, size_t errlen)
{
	int fd = openat(dirfd, ESTATE_TRUST_HOSTS, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char line[ESTATE_BINDING_LINE_MAX + 2], why[400];
	unsigned lineno = 0;
	struct stat st;
	FILE *f;

	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		snprintf(err, errlen, "trust folder: %s/%s is not a readable regular file", dir,
			 ESTATE_TRUST_HOSTS);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	t->binds = true;
	while (fgets(line, sizeof(line), f)) {
		char *hash = strchr(line, '#'), *p = line;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(why, sizeof(why), "a line longer than %d bytes", ESTATE_BINDING_LINE_MAX);
			goto bad;
		}
		if (hash)
			*hash = '\0';
		line[strcspn(line, "\r\n")] = '\0';
		p += strspn(p, " \t");
		if (!*p)
			continue;
		if (t->nb == ESTATE_BINDINGS_MAX) {
			snprintf(why, sizeof(why), "more than %d bindings", ESTATE_BINDINGS_MAX);
			goto bad;
		}
		if (t->nb == t->capb) {
			struct binding *b = kw_array_grow(t->bindings, &t->capb, sizeof(*b), 16);

			if (!b) {
				snprintf(why, sizeof(why), "out of memory");
				goto bad;
			}
			t->bindings = b;
		}
		memset(&t->bindings[t->nb], 0, sizeof(t->bindings[0]));
		t->nb++;
		if (parse_binding(t, p, &t->bindings[t->nb - 1], why, sizeof(why)))
			goto bad;
	}
	fclose(f);
	if (t->nb)
		qsort(t->bindings, t->nb, sizeof(*t->bindings), by_binding);
	return 0;
bad:
	snprintf(err, errlen, "trust folder: %s/%s line %u: %s", dir, ESTATE_TRUST_HOSTS, lineno, why);
	fclose(f);
	return -1;
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
		snprintf(t->keys[t->n].file, sizeof(t->keys[0].file), "%s", de->d_name);
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
	if (t->n)
		qsort(t->keys, t->n, sizeof(*t->keys), by_thumbprint);
	if (load_hosts(t, dirfd(d), dir, err, errlen))
		goto fail;
	closedir(d);
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

void estate_trust_key_at(const struct estate_trust *t, size_t i, const char **file,
			 const char **thumbprint)
{
	*file = t->keys[i].file;
	*thumbprint = t->keys[i].thumbprint;
}

bool estate_trust_binds_hosts(const struct estate_trust *t)
{
	return t && t->binds;
}

static bool field_holds(const char *want, const char *have)
{
	return !want || (have && !strcmp(want, have));
}

bool estate_trust_allows_host(const struct estate_trust *t, const char *thumbprint,
			      const char *hostname, const char *machine_id)
{
	struct binding k = { 0 };
	const struct binding *hit;
	size_t i;

	if (!t || !t->binds)
		return true;
	if (!t->nb || !thumbprint || strlen(thumbprint) >= sizeof(k.thumbprint))
		return false;
	strcpy(k.thumbprint, thumbprint);
	hit = bsearch(&k, t->bindings, t->nb, sizeof(*t->bindings), by_binding);
	if (!hit)
		return false;
	/* Every binding of this key: the run around the hit. */
	for (i = (size_t)(hit - t->bindings); i > 0 && !by_binding(&t->bindings[i - 1], &k); i--)
		;
	for (; i < t->nb && !by_binding(&t->bindings[i], &k); i++)
		if (field_holds(t->bindings[i].hostname, hostname) &&
		    field_holds(t->bindings[i].machine_id, machine_id))
			return true;
	return false;
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
	for (size_t i = 0; i < t->nb; i++) {
		free(t->bindings[i].hostname);
		free(t->bindings[i].machine_id);
	}
	free(t->bindings);
	free(t->keys);
	free(t);
}

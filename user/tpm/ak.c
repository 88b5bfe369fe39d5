/* SPDX-License-Identifier: Apache-2.0 */
/* The attestation key only kwitnessd can use. A primary key is the same for
 * everyone who sends its template, and whoever creates it chooses its
 * authorisation; so the AK is an ordinary key made inside the TPM under a
 * storage primary, with a random 32-byte authValue. Its blobs and that value
 * are kept in the AK file (owner-only, mode 0600), which `kwitness tpm
 * enroll` writes and kwitnessd reads: a local user who may talk to the TPM
 * but cannot read the file has no key with the enrolled name, and the blobs
 * alone are refused without the value. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <tss2/tss2_mu.h>

#include "lib/base64.h"
#include "jcs/jcs.h"
#include "device.h"

/* The parent's unique field: keeps it apart from other storage primaries. */
static const char PARENT_LABEL[] = "kwitness attestation key parent";

/* The storage primary in the endorsement hierarchy the AK lives under:
 * derived from the template, so nothing about it is stored. */
static TSS2_RC load_parent(struct kw_tpm *t, ESYS_TR *parent)
{
	TPM2B_PUBLIC tmpl = { 0 };
	TPMT_PUBLIC *p = &tmpl.publicArea;

	p->type = TPM2_ALG_ECC;
	p->nameAlg = TPM2_ALG_SHA256;
	p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
			      TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
			      TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT;
	p->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
	p->parameters.eccDetail.symmetric.keyBits.aes = 128;
	p->parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
	p->parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
	p->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
	p->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
	p->unique.ecc.x.size = sizeof(PARENT_LABEL) - 1;
	memcpy(p->unique.ecc.x.buffer, PARENT_LABEL, sizeof(PARENT_LABEL) - 1);
	return kw_tpm_create_endorsement_primary(t, &tmpl, parent, NULL);
}

/* Restricted ECDSA P-256 signing key, fixed to its TPM. noDA: a local user
 * guessing the 256-bit value cannot lock kwitnessd out of its own key. */
static void ak_template(TPM2B_PUBLIC *tmpl)
{
	TPMT_PUBLIC *p = &tmpl->publicArea;

	memset(tmpl, 0, sizeof(*tmpl));
	p->type = TPM2_ALG_ECC;
	p->nameAlg = TPM2_ALG_SHA256;
	p->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT |
			      TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH |
			      TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_SIGN_ENCRYPT;
	p->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
	p->parameters.eccDetail.scheme.scheme = TPM2_ALG_ECDSA;
	p->parameters.eccDetail.scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
	p->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
	p->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
}

static int b64_member(const json_t *ak, const char *name, uint8_t *out, size_t cap, size_t *len)
{
	const char *s = json_string_value(json_object_get(ak, name));

	return s && *s && !kw_b64_decode(KW_B64_URL, s, strlen(s), out, cap, len) ? 0 : -EINVAL;
}

/* Loads the key (public area, private blob) under the parent and gives
 * ESYS its authValue; t->ak and t->ak_public are set on success. */
static int load(struct kw_tpm *t, const TPM2B_PUBLIC *pub, const TPM2B_PRIVATE *priv,
		const TPM2B_AUTH *auth, char *err, size_t errlen)
{
	uint8_t buf[sizeof(TPMT_PUBLIC)];
	ESYS_TR parent = ESYS_TR_NONE;
	size_t off = 0;
	TSS2_RC rc;

	rc = load_parent(t, &parent);
	if (rc) {
		kw_tpm_rc_error(err, errlen, "AK parent creation (endorsement hierarchy)", rc);
		return -EIO;
	}
	rc = Esys_Load(t->ctx, parent, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, priv, pub, &t->ak);
	Esys_FlushContext(t->ctx, parent);
	if (rc) {
		t->ak = ESYS_TR_NONE;
		kw_tpm_rc_error(err, errlen, "AK load (was the AK file made on this TPM?)", rc);
		return -EIO;
	}
	if (Esys_TR_SetAuth(t->ctx, t->ak, auth) ||
	    Tss2_MU_TPMT_PUBLIC_Marshal(&pub->publicArea, buf, sizeof(buf), &off)) {
		snprintf(err, errlen, "cannot use the AK's public area");
		return -EIO;
	}
	t->ak_public = malloc(off);
	if (!t->ak_public)
		return -ENOMEM;
	memcpy(t->ak_public, buf, off);
	t->ak_public_len = off;
	return 0;
}

int kw_tpm_load_ak(struct kw_tpm *t, char *err, size_t errlen)
{
	uint8_t pubm[sizeof(TPM2B_PUBLIC)], privm[sizeof(TPM2B_PRIVATE)];
	TPM2B_PUBLIC pub = { 0 };
	TPM2B_PRIVATE priv = { 0 };
	TPM2B_AUTH auth = { 0 };
	size_t publen = 0, privlen = 0, authlen = 0, off;
	int ret = -EINVAL;

	if (t->ak != ESYS_TR_NONE)
		return 0;
	if (!t->ak_file) {
		snprintf(err, errlen, "no attestation key file given (kwitness tpm enroll --ak-out makes one)");
		return -ENOENT;
	}
	if (b64_member(t->ak_file, "public", pubm, sizeof(pubm), &publen) ||
	    b64_member(t->ak_file, "private", privm, sizeof(privm), &privlen) ||
	    b64_member(t->ak_file, "auth", auth.buffer, sizeof(auth.buffer), &authlen) ||
	    (off = 0, Tss2_MU_TPM2B_PUBLIC_Unmarshal(pubm, publen, &off, &pub)) || off != publen ||
	    (off = 0, Tss2_MU_TPM2B_PRIVATE_Unmarshal(privm, privlen, &off, &priv)) || off != privlen) {
		snprintf(err, errlen, "the AK file's public, private and auth members are not well-formed");
		goto out;
	}
	auth.size = (uint16_t)authlen;
	ret = load(t, &pub, &priv, &auth, err, errlen);
out:
	OPENSSL_cleanse(&auth, sizeof(auth));
	OPENSSL_cleanse(privm, sizeof(privm));
	OPENSSL_cleanse(&priv, sizeof(priv));
	return ret;
}

json_t *kw_tpm_ak_create(struct kw_tpm *t, char *err, size_t errlen)
{
	uint8_t pubm[sizeof(TPM2B_PUBLIC)], privm[sizeof(TPM2B_PRIVATE)];
	TPM2B_SENSITIVE_CREATE sens = { 0 };
	TPM2B_PUBLIC tmpl, *pub = NULL;
	TPM2B_PRIVATE *priv = NULL;
	TPM2B_DATA outside = { 0 };
	TPML_PCR_SELECTION none = { 0 };
	TPM2B_CREATION_DATA *cdata = NULL;
	TPM2B_DIGEST *chash = NULL;
	TPMT_TK_CREATION *ticket = NULL;
	ESYS_TR parent = ESYS_TR_NONE;
	size_t puboff = 0, privoff = 0;
	json_t *ak = NULL;
	TSS2_RC rc;

	if (t->ak != ESYS_TR_NONE) {
		snprintf(err, errlen, "an AK is already loaded");
		return NULL;
	}
	ak_template(&tmpl);
	sens.sensitive.userAuth.size = 32;
	if (RAND_bytes(sens.sensitive.userAuth.buffer, 32) != 1) {
		snprintf(err, errlen, "no random bytes for the AK's authorisation value");
		return NULL;
	}
	rc = load_parent(t, &parent);
	if (rc) {
		kw_tpm_rc_error(err, errlen, "AK parent creation (endorsement hierarchy)", rc);
		goto out;
	}
	rc = Esys_Create(t->ctx, parent, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &sens, &tmpl,
			 &outside, &none, &priv, &pub, &cdata, &chash, &ticket);
	Esys_FlushContext(t->ctx, parent);
	if (rc) {
		kw_tpm_rc_error(err, errlen, "AK creation", rc);
		goto out;
	}
	if (Tss2_MU_TPM2B_PUBLIC_Marshal(pub, pubm, sizeof(pubm), &puboff) ||
	    Tss2_MU_TPM2B_PRIVATE_Marshal(priv, privm, sizeof(privm), &privoff)) {
		snprintf(err, errlen, "cannot marshal the new AK");
		goto out;
	}
	if (load(t, pub, priv, &sens.sensitive.userAuth, err, errlen))
		goto out;
	ak = json_pack("{s:s, s:o, s:o, s:o}", "kind", KW_TPM_AK_KIND, "public",
		       kw_tpm_b64_json(pubm, puboff), "private", kw_tpm_b64_json(privm, privoff), "auth",
		       kw_tpm_b64_json(sens.sensitive.userAuth.buffer, sens.sensitive.userAuth.size));
	if (!ak)
		snprintf(err, errlen, "out of memory");
out:
	OPENSSL_cleanse(&sens, sizeof(sens));
	OPENSSL_cleanse(privm, sizeof(privm));
	Esys_Free(pub);
	Esys_Free(priv);
	Esys_Free(cdata);
	Esys_Free(chash);
	Esys_Free(ticket);
	return ak;
}

void kw_tpm_use_ak(struct kw_tpm *t, const json_t *ak)
{
	json_t *old = t->ak_file;

	t->ak_file = json_incref((json_t *)ak);
	json_decref(old);
}

json_t *kw_tpm_ak_read(const char *path, char *err, size_t errlen)
{
	struct kw_buf text = { 0 };
	struct stat st;
	json_t *ak = NULL;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), e;

	if (fd < 0) {
		snprintf(err, errlen, "AK file %.200s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		snprintf(err, errlen,
			 "AK file %.200s must be a regular file owned by this user with mode 0600", path);
		close(fd);
		return NULL;
	}
	e = kw_read_fd(fd, KW_TPM_EVIDENCE_MAX, &text);
	close(fd);
	if (e)
		snprintf(err, errlen, "AK file %.200s: %s", path, strerror(-e));
	else if (!json_is_object(ak = jcs_parse(text.data ? text.data : "", text.len, NULL)) ||
		 !json_is_string(json_object_get(ak, "kind")) ||
		 strcmp(json_string_value(json_object_get(ak, "kind")), KW_TPM_AK_KIND)) {
		snprintf(err, errlen, "AK file %.200s is not a %s object", path, KW_TPM_AK_KIND);
		json_decref(ak);
		ak = NULL;
	}
	if (text.data)
		OPENSSL_cleanse(text.data, text.len);
	kw_buf_free(&text);
	return ak;
}

int kw_tpm_ak_write(const char *path, const json_t *ak, char *err, size_t errlen)
{
	struct kw_buf text = { 0 };
	int ret = jcs_dump(ak, &text) ?: kw_buf_putc(&text, '\n');

	ret = ret ?: kw_write_file_atomic(path, text.data, text.len, 0600);
	if (ret)
		snprintf(err, errlen, "AK file %.200s: %s", path, strerror(-ret));
	if (text.data)
		OPENSSL_cleanse(text.data, text.len);
	kw_buf_free(&text);
	return ret;
}

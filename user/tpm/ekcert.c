/* SPDX-License-Identifier: Apache-2.0 */
/* The EK certificate chain, checked against the EK CA the caller trusts. */
#include <errno.h>
#include <stdio.h>

#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include "tpm/tpm.h"

int kw_ek_chain_verify(const struct kw_buf *certs, size_t n, const char *ca_file, char *why,
		       size_t whylen)
{
	X509_STORE *store = X509_STORE_new();
	X509_STORE_CTX *ctx = X509_STORE_CTX_new();
	STACK_OF(X509) *inter = sk_X509_new_null();
	X509 *leaf = NULL;
	int ret = -EBADMSG;

	if (!store || !ctx || !inter) {
		ret = -ENOMEM;
		goto out;
	}
	if (n == 0) {
		snprintf(why, whylen, "the evidence holds no EK certificate");
		goto out;
	}
	if (!ca_file || X509_STORE_load_file(store, ca_file) != 1) {
		snprintf(why, whylen, "cannot load the EK CA from %.200s", ca_file ? ca_file : "(none)");
		ret = -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const unsigned char *p = (const unsigned char *)certs[i].data;
		X509 *c = d2i_X509(NULL, &p, (long)certs[i].len);

		if (!c || p != (const unsigned char *)certs[i].data + certs[i].len) {
			X509_free(c);
			snprintf(why, whylen, "EK certificate %zu is not DER X.509", i);
			goto out;
		}
		if (i == 0)
			leaf = c;
		else if (!sk_X509_push(inter, c)) {
			X509_free(c);
			ret = -ENOMEM;
			goto out;
		}
	}
	if (X509_STORE_CTX_init(ctx, store, leaf, inter) != 1) {
		ret = -ENOMEM;
		goto out;
	}
	if (X509_verify_cert(ctx) != 1) {
		snprintf(why, whylen, "the EK certificate does not chain to the EK CA: %s",
			 X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
		goto out;
	}
	ret = 0;
out:
	ERR_clear_error();
	X509_free(leaf);
	sk_X509_pop_free(inter, X509_free);
	X509_STORE_CTX_free(ctx);
	X509_STORE_free(store);
	return ret;
}

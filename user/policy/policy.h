/* SPDX-License-Identifier: Apache-2.0 */
/* Policy bundles: parse and validate the JSON bundle (docs/policy.md) into a
 * compiled form the loader writes into BPF maps. Bundles are hostile input. */
#ifndef KWITNESS_POLICY_H
#define KWITNESS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kwitness/abi/event.h"
#include "policy/net_names.h"

/* Bounds: a bundle over these is refused with an error naming the field. */
#define KW_POLICY_MAX_BYTES (256 * 1024)
#define KW_POLICY_MAX_NET_RULES 256   /* per section */
#define KW_POLICY_MAX_DEV_RULES 64
#define KW_POLICY_MAX_PATH_RULES 32   /* per fs/exec list */

struct kw_net_rule {
	uint8_t op;        /* enum kw_net_op */
	uint8_t family;    /* 4 or 6 */
	uint8_t prefixlen; /* 0..32 or 0..128 */
	uint8_t allow;     /* 1 allow, 0 deny ("!" rule) */
	uint8_t addr[16];  /* masked to prefixlen */
	uint16_t port_lo, port_hi;
	uint16_t index;    /* position in its policy list */
};

struct kw_dev_rule_spec {
	uint32_t type;     /* BPF_DEVCG_DEV_CHAR / _BLOCK */
	uint32_t major, minor; /* KW_DEV_ANY for '*' */
	uint32_t access;   /* BPF_DEVCG_ACC_* bits */
	uint16_t index;
};

enum kw_path_kind { KW_PATH_READ = 1, KW_PATH_WRITE = 2, KW_PATH_DENY = 3, KW_PATH_EXEC = 4,
		    KW_PATH_UNIX = 5 };

struct kw_path_rule {
	uint8_t kind;      /* enum kw_path_kind */
	uint16_t index;
	uint16_t len;
	char path[KW_PATH_MAX]; /* absolute and normalised, or an object name
				   (kw_path_object_name); NUL-terminated */
	bool pinned;       /* exec.allow {"path", "sha256"}: only this build here */
	uint8_t sha256[KW_SHA256_LEN];
};

/* exec.allow "sha256:<hex>": that build may run, whatever its path. */
struct kw_exec_digest {
	uint16_t index;
	uint8_t sha256[KW_SHA256_LEN];
};

/* How a SHA-256 is written in policies and logs: the prefix, then 64
 * lowercase hex digits. */
#define KW_SHA256_PREFIX "sha256:"
/* Parses "sha256:<64 lowercase hex>" into out. 0 or -EINVAL. */
int kw_sha256_parse(const char *s, uint8_t out[KW_SHA256_LEN]);

/* 1 when s names files that have no path, "kind:" or "kind:name": memfd:,
 * pipe:, socket:, anon: (docs/lsm.md). Allowed in fs and exec lists. */
int kw_path_object_name(const char *s);

struct kw_policy {
	uint8_t mode;        /* enum kw_mode */
	uint8_t record;      /* enum kw_record_mode */
	uint8_t on_failure;  /* enum kw_on_failure */
	uint32_t classes;    /* enum kw_class: the sections present */

	struct kw_net_rule *net; size_t n_net;           /* connect, send, bind */
	struct kw_name_rule *names; size_t n_names;      /* connect, send: host names */
	bool dns_steer;                                  /* names or a net.dns section:
							    the session's DNS goes through kwitnessd */
	struct kw_dns_conf dns;                          /* net.dns, or its defaults */
	uint64_t socket_allow;                           /* as kw_session.socket_allow */
	uint8_t socket_rule[KW_SOCK_BITS];               /* as kw_session.socket_rule */
	bool socket_implicit;                            /* KW_SESSF_SOCKET_IMPLICIT */
	struct kw_dev_rule_spec *dev; size_t n_dev;
	bool sysctl_write;
	struct kw_path_rule *paths; size_t n_paths;      /* fs.read/write/deny, exec.allow, net.unix */
	struct kw_exec_digest *exec_digests;             /* exec.allow digests, KW_POLICY_MAX_PATH_RULES */
	size_t n_exec_digests;
	bool mount_allow;                                /* mount: {"allow": true} */
	bool bpf_allow;                                  /* bpf: {"allow": true} */
	bool signal_outside;                             /* proc: {"signal_outside": true} */
};

/* Parses bundle bytes. Returns 0, or -EINVAL with err naming the field, e.g.
 * "net.connect[2]: bad CIDR '10.0.0.0/33'". *out is freed with kw_policy_free. */
int kw_policy_parse(const char *bundle, size_t len, struct kw_policy **out, char *err,
		    size_t errlen);
void kw_policy_free(struct kw_policy *p);

/* "enforce" / "advisory" / "silent" */
const char *kw_mode_name(uint8_t mode);
/* "net.connect[3]" or "net.connect:default" for KW_RULE_DEFAULT; into buf. */
const char *kw_rule_name(uint16_t event_kind, uint16_t rule, char *buf, size_t len);
/* Comma-free names of the classes in mask, e.g. "net.connect" — i-th set bit. */
const char *kw_class_name(uint32_t class_bit);

#endif

// SPDX-License-Identifier: Apache-2.0
/* The resolver guard, user side (resolver_guard.h, docs/hooks.md "The
 * resolver guard"). A socket is named by what the kernel says of it
 * (getsockname, SO_PROTOCOL), never by what the caller thinks it opened. */
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kwitness/abi/name_match.h"
#include "kwitness.skel.h"
#include "resolver_guard.h"

/* fd's family (4 or 6), protocol and local port (host order). */
static int sock_facts(int fd, uint32_t *family, uint32_t *proto, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int p;
	socklen_t plen = sizeof(p);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) ||
	    getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &p, &plen))
		return -errno;
	if (ss.ss_family == AF_INET) {
		*family = 4;
		*port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		*family = 6;
		*port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	} else {
		return -EAFNOSUPPORT;
	}
	*proto = (uint32_t)p;
	return *port ? 0 : -EINVAL;
}

static int guard_port(struct kw_hooks *h, int fd, uint32_t owner, bool listener)
{
	struct kwitness_bpf *skel = kw_hooks_skeleton(h);
	uint32_t family, proto, key;
	uint16_t port;
	uint64_t sock = (uint64_t)fd;
	int r = sock_facts(fd, &family, &proto, &port);

	if (r)
		return r;
	key = KW_GUARD_KEY(0, proto, port);
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.kw_resolver_ports), &key, &owner, BPF_ANY))
		return -errno;
	if (!listener)
		return 0;
	key = KW_GUARD_KEY(family, proto, port);
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.kw_resolver_socks), &key, &sock, BPF_ANY)) {
		r = -errno;
		kw_resolver_guard_release(h, fd);
		return r;
	}
	return 0;
}

int kw_resolver_guard_listener(struct kw_hooks *h, uint32_t slot, int fd)
{
	return guard_port(h, fd, slot, true);
}

int kw_resolver_guard_upstream(struct kw_hooks *h, int fd)
{
	return guard_port(h, fd, KW_GUARD_UPSTREAM, false);
}

void kw_resolver_guard_release(struct kw_hooks *h, int fd)
{
	struct kwitness_bpf *skel = kw_hooks_skeleton(h);
	uint32_t family, proto, key;
	uint16_t port;

	if (sock_facts(fd, &family, &proto, &port))
		return;
	key = KW_GUARD_KEY(0, proto, port);
	bpf_map_delete_elem(bpf_map__fd(skel->maps.kw_resolver_ports), &key);
	/* a listener's entry also leaves the socket map when it closes */
	key = KW_GUARD_KEY(family, proto, port);
	bpf_map_delete_elem(bpf_map__fd(skel->maps.kw_resolver_socks), &key);
}

void kw_resolver_guard_forget(struct kw_hooks *h)
{
	struct kwitness_bpf *skel = kw_hooks_skeleton(h);
	int fd = bpf_map__fd(skel->maps.kw_resolver_ports);
	uint32_t key;

	while (bpf_map_get_next_key(fd, NULL, &key) == 0)
		if (bpf_map_delete_elem(fd, &key))
			break;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Every row of KW_EVENT_TABLE (kwitness/abi/events.h): one record of its
 * kind, with fixed values, gives the entry the collector wrote before the
 * table replaced its switch (lines taken from that code, issue 29), and a
 * record one byte shorter than the row's struct is refused. A new row fails
 * here until its record and known line are added. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <linux/bpf.h>

#include "collector/decision.h"
#include "kwitness/abi/event.h"
#include "policy/policy.h"

#define B2R 1700000000000000000LL
/* room for the largest record */
#define REC_MAX (sizeof(struct kw_ev_task) + 64 > sizeof(struct kw_ev_exec) ? \
		 sizeof(struct kw_ev_task) + 64 : sizeof(struct kw_ev_exec))

static const char *const known[KW_EV_LIMIT] = {
	/* not decisions: "proc" entries (no decision, rule, enforced) */
	[KW_EV_PROC_FORK] =
		"{\"cgroup\":\"1234\",\"comm\":\"curl\",\"event\":\"fork\",\"gid\":100"
		",\"parent\":\"7-5\",\"pid\":42,\"ppid\":7,\"proc\":\"42-0\",\"seq\":5"
		",\"tool\":\"proc\",\"ts\":1700000002000000,\"uid\":1000}",
	[KW_EV_PROC_EXEC] =
		"{\"argv\":\"sh\\u0000-c\\u0000x\\u0000\",\"argv_len\":2000"
		",\"argv_truncated\":true,\"cgroup\":\"1234\",\"comm\":\"curl\""
		",\"event\":\"exec\",\"exe\":\"/bin/sh\",\"gid\":100,\"parent\":\"7-5\""
		",\"pid\":42,\"ppid\":7,\"proc\":\"42-0\",\"seq\":5,\"tool\":\"proc\""
		",\"ts\":1700000002000000,\"uid\":1000}",
	[KW_EV_NET_CONNECT] =
		"{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\""
		",\"enforced\":true,\"host\":\"93.184.216.34\",\"pid\":42,\"port\":443"
		",\"proto\":\"tcp\",\"rule\":\"net.connect[2]\",\"seq\":5"
		",\"tool\":\"net.connect\",\"ts\":1700000002000000,\"uid\":1000"
		",\"via\":\"example.org\",\"via_seq\":3}",
	[KW_EV_NET_SEND] =
		"{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\""
		",\"enforced\":true,\"host\":\"93.184.216.34\",\"pid\":42,\"port\":443"
		",\"proto\":\"tcp\",\"rule\":\"net.send[2]\",\"seq\":5"
		",\"tool\":\"net.send\",\"ts\":1700000002000000,\"uid\":1000"
		",\"via\":\"example.org\",\"via_seq\":3}",
	[KW_EV_NET_BIND] =
		"{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\""
		",\"enforced\":true,\"host\":\"93.184.216.34\",\"pid\":42,\"port\":443"
		",\"proto\":\"tcp\",\"rule\":\"net.bind[2]\",\"seq\":5"
		",\"tool\":\"net.bind\",\"ts\":1700000002000000,\"uid\":1000"
		",\"via\":\"example.org\",\"via_seq\":3}",
	[KW_EV_NET_SOCKET] =
		"{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\""
		",\"enforced\":true,\"family\":\"inet6\",\"pid\":42,\"protocol\":17"
		",\"rule\":\"net.socket[2]\",\"seq\":5,\"tool\":\"net.socket\""
		",\"ts\":1700000002000000,\"type\":\"dgram\",\"uid\":1000}",
	[KW_EV_DEV] =
		"{\"access\":\"rw\",\"cgroup\":\"1234\",\"comm\":\"curl\""
		",\"decision\":\"deny\",\"dev\":\"c 1:3\",\"enforced\":true,\"pid\":42"
		",\"rule\":\"dev.allow[2]\",\"seq\":5,\"tool\":\"dev.access\""
		",\"ts\":1700000002000000,\"uid\":1000}",
	[KW_EV_SYSCTL] =
		"{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\""
		",\"enforced\":true,\"name\":\"net/ipv4/ip_forward\",\"pid\":42"
		",\"rule\":\"sysctl:default\",\"seq\":5,\"tool\":\"sysctl.write\""
		",\"ts\":1700000002000000,\"uid\":1000}",
	[KW_EV_CGROUP_UNTRACKED] =
		"{\"cgroup\":\"1234\",\"child_cgroup\":\"77\",\"comm\":\"curl\""
		",\"decision\":\"deny\",\"enforced\":true,\"pid\":42"
		",\"rule\":\"cgroups.session_quota\",\"seq\":5"
		",\"tool\":\"cgroup.untracked\",\"ts\":1700000002000000,\"uid\":1000}",
	[KW_EV_CGROUP_MOVE] =
		"{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\""
		",\"enforced\":true,\"pid\":42,\"rule\":\"session.follow\",\"seq\":5"
		",\"target_cgroup\":\"99\",\"target_pid\":43,\"tool\":\"cgroup.move\""
		",\"ts\":1700000002000000,\"uid\":1000,\"via\":\"clone_into_cgroup\"}",
	[KW_EV_FS_OPEN] =
		"{\"access\":\"rw\",\"cgroup\":\"1234\",\"comm\":\"curl\""
		",\"decision\":\"deny\",\"enforced\":true,\"path\":\"/etc/passwd\""
		",\"pid\":42,\"rule\":\"fs.write[1]\",\"seq\":5,\"tool\":\"fs.open\""
		",\"ts\":1700000002000000,\"uid\":1000}",
	[KW_EV_FS_EXEC] =
		"{\"access\":\"x\",\"cgroup\":\"1234\",\"comm\":\"curl\""
		",\"decision\":\"deny\",\"dev\":\"8:1\""
		",\"digest\":\"sha256:000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\""
		",\"enforced\":true,\"generation\":7,\"ino\":\"12\""
		",\"path\":\"/etc/passwd\",\"pid\":42"
		",\"rule\":\"exec.allow[4]:digest_mismatch\",\"seq\":5"
		",\"tool\":\"fs.exec\",\"ts\":1700000002000000,\"uid\":1000"
		",\"verity_digest\":\"sha256:fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0efeeedecebeae9e8e7e6e5e4e3e2e1e0\"}",
	[KW_EV_FS_PATHOP] =
		"{\"access\":\"w\",\"cgroup\":\"1234\",\"comm\":\"curl\""
		",\"decision\":\"deny\",\"enforced\":true,\"path\":\"/etc/passwd\""
		",\"pid\":42,\"rule\":\"fs.write[1]\",\"seq\":5,\"tool\":\"fs.mkdir\""
		",\"ts\":1700000002000000,\"uid\":1000}",
	[KW_EV_MOUNT] =
		"{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\""
		",\"enforced\":true,\"mount\":\"detached\",\"path\":\"/etc/passwd\""
		",\"pid\":42,\"rule\":\"fs.write[1]\",\"seq\":5,\"tool\":\"fs.umount\""
		",\"ts\":1700000002000000,\"uid\":1000}",
	[KW_EV_PROC_KILL] =
		"{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\""
		",\"enforced\":true,\"pid\":42,\"rule\":\"proc.signal_outside\""
		",\"seq\":5,\"signal\":9,\"target_cgroup\":\"99\",\"target_pid\":43"
		",\"tool\":\"proc.kill\",\"ts\":1700000002000000,\"uid\":1000}",
	[KW_EV_PROC_PTRACE] =
		"{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\""
		",\"enforced\":true,\"mode\":9,\"pid\":42"
		",\"rule\":\"proc.signal_outside\",\"seq\":5,\"target_cgroup\":\"99\""
		",\"target_pid\":43,\"tool\":\"proc.ptrace\",\"ts\":1700000002000000"
		",\"uid\":1000}",
	[KW_EV_NET_UNIX] =
		"{\"access\":\"send\",\"cgroup\":\"1234\",\"comm\":\"curl\""
		",\"decision\":\"deny\",\"enforced\":true,\"path\":\"/etc/passwd\""
		",\"pid\":42,\"rule\":\"fs.write[1]\",\"seq\":5,\"tool\":\"net.unix\""
		",\"ts\":1700000002000000,\"uid\":1000}",
	[KW_EV_PROC_SIGIO] =
		"{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\""
		",\"enforced\":true,\"pid\":42,\"rule\":\"proc.signal_outside\""
		",\"seq\":5,\"signal\":9,\"target_cgroup\":\"99\",\"target_pid\":43"
		",\"tool\":\"proc.sigio\",\"ts\":1700000002000000,\"uid\":1000}",
	/* added with the kind (no earlier code): written out by hand */
	[KW_EV_BPF] =
		"{\"cgroup\":\"1234\",\"cmd\":5,\"comm\":\"curl\",\"decision\":\"deny\",\"enforced\":true,"
		"\"pid\":42,\"rule\":\"bpf:default\",\"seq\":5,\"tool\":\"bpf\",\"ts\":1700000002000000,"
		"\"uid\":1000}",
};

/* The kind's record with fixed values; its size, or 0 for a kind this test
 * does not know. */
static size_t every_kind_record(uint16_t kind, unsigned char *rec, size_t cap, uint16_t *rule)
{
	struct kw_ev_exec *x = (struct kw_ev_exec *)rec;
	struct kw_ev_path *p = &x->p;
	struct kw_ev_net *n = (struct kw_ev_net *)rec;
	struct kw_ev_socket *s = (struct kw_ev_socket *)rec;
	struct kw_ev_dev *d = (struct kw_ev_dev *)rec;
	struct kw_ev_sysctl *c = (struct kw_ev_sysctl *)rec;
	struct kw_ev_cgroup *u = (struct kw_ev_cgroup *)rec;
	struct kw_ev_proc *r = (struct kw_ev_proc *)rec;
	struct kw_ev_task *t = (struct kw_ev_task *)rec;
	static const unsigned char v4[4] = { 93, 184, 216, 34 };
	size_t i;

	memset(rec, 0, cap);
	*rule = 2;
	switch (kind) {
	case KW_EV_NET_CONNECT:
	case KW_EV_NET_SEND:
	case KW_EV_NET_BIND:
		n->family = 4;
		n->proto = 6;
		n->port = 443;
		memcpy(n->addr, v4, 4);
		n->via_seq = 3;
		n->h.flags = KW_EVF_VIA;
		return sizeof(*n);
	case KW_EV_NET_SOCKET:
		s->family = 10;
		s->type = 2;
		s->protocol = 17;
		return sizeof(*s);
	case KW_EV_DEV:
		d->type = BPF_DEVCG_DEV_CHAR;
		d->major = 1;
		d->minor = 3;
		d->access = BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE;
		return sizeof(*d);
	case KW_EV_SYSCTL:
		memcpy(c->name, "net/ipv4/ip_forward", 19);
		c->name_len = 19;
		c->write = 1;
		*rule = KW_RULE_DEFAULT;
		return sizeof(*c);
	case KW_EV_CGROUP_UNTRACKED:
		u->child_cgroup = 77;
		*rule = KW_UNTRACKED_QUOTA;
		return sizeof(*u);
	case KW_EV_CGROUP_MOVE:
	case KW_EV_PROC_KILL:
	case KW_EV_PROC_PTRACE:
	case KW_EV_PROC_SIGIO:
		r->target_pid = 43;
		r->target_cgroup = 99;
		r->sig_or_mode = kind == KW_EV_CGROUP_MOVE ? KW_MOVE_CLONE_INTO : 9;
		return sizeof(*r);
	case KW_EV_PROC_FORK:
	case KW_EV_PROC_EXEC:
		t->ppid = 7;
		t->parent_start_ns = 5;
		t->gid = 100;
		if (kind == KW_EV_PROC_FORK)
			return sizeof(*t);
		/* the path and argv follow the record */
		memcpy(t + 1, "/bin/shsh\0-c\0x\0", 15);
		t->path_len = 7;
		t->argv_len = 8;
		t->argv_full = 2000; /* cut */
		return sizeof(*t) + 15;
	case KW_EV_BPF:
		((struct kw_ev_bpf *)rec)->cmd = BPF_PROG_LOAD;
		*rule = KW_RULE_DEFAULT;
		return sizeof(struct kw_ev_bpf);
	case KW_EV_FS_OPEN:
	case KW_EV_FS_EXEC:
	case KW_EV_FS_PATHOP:
	case KW_EV_MOUNT:
	case KW_EV_NET_UNIX:
		memcpy(p->path, "/etc/passwd", 11);
		p->path_len = 11;
		p->access = kind == KW_EV_FS_OPEN ? KW_ACC_READ | KW_ACC_WRITE :
			    kind == KW_EV_FS_EXEC ? KW_ACC_EXEC :
			    kind == KW_EV_FS_PATHOP ? KW_PATHOP_MKDIR :
			    kind == KW_EV_MOUNT ? KW_MOUNTOP_UMOUNT : KW_UNIX_SEND;
		p->h.flags = kind == KW_EV_MOUNT ? KW_EVF_DETACHED : 0;
		*rule = (uint16_t)(KW_PATH_WRITE << 12 | 1);
		if (kind != KW_EV_FS_EXEC)
			return sizeof(*p);
		x->ino = 12;
		x->dev = 8u << 20 | 1;
		x->generation = 7;
		x->digest_status = KW_DIGEST_OK;
		for (i = 0; i < KW_SHA256_LEN; i++)
			x->sha256[i] = (unsigned char)i;
		x->verity_len = 32;
		for (i = 0; i < 32; i++)
			x->verity[i] = (unsigned char)(255 - i);
		*rule = (uint16_t)(KW_RULE_KIND_DIGEST_MISMATCH << 12 | 4);
		return sizeof(*x);
	}
	return 0;
}

static void check_kind(uint16_t kind, size_t record_size)
{
	unsigned char rec[REC_MAX];
	struct kw_event_hdr *h = (struct kw_event_hdr *)rec;
	struct kw_buf b = { 0 };
	uint16_t rule;
	size_t n;

	n = every_kind_record(kind, rec, sizeof(rec), &rule);
	assert_int_equal(n, record_size + (kind == KW_EV_PROC_EXEC ? 15 : 0)); /* + path, argv */
	assert_non_null(known[kind]);
	h->seq = 5;
	h->ts_ns = 2000000500ULL;
	h->cgroup_id = 1234;
	h->pid = 42;
	h->uid = 1000;
	h->kind = kind;
	h->rule = rule;
	h->decision = KW_DENY;
	h->enforced = 1;
	memcpy(h->comm, "curl", 5);
	assert_int_equal(kw_event_to_entry_via(rec, n, B2R, "example.org", &b), 0);
	assert_string_equal(b.data, known[kind]);
	b.len = 0;
	assert_int_equal(kw_event_to_entry_via(rec, n - 1, B2R, "example.org", &b), -EINVAL);
	assert_int_equal(b.len, 0);
	kw_buf_free(&b);
}

static void test_every_kind(void **state)
{
	size_t rows = 0, lines = 0, i;

	(void)state;
#define CHECK_(id, value, record, format, tool, rules, section, single) \
	check_kind(KW_EV_##id, sizeof(struct record));                   \
	rows++;
	KW_EVENT_TABLE(CHECK_)
#undef CHECK_
	for (i = 0; i < KW_EV_LIMIT; i++)
		lines += known[i] != NULL;
	assert_int_equal(rows, lines); /* no known line for a kind gone from the table */
}

/* Kinds outside the table are refused; their rules are named "unknown". */
static void test_unknown_kinds(void **state)
{
	unsigned char rec[REC_MAX] = { 0 };
	struct kw_event_hdr *h = (struct kw_event_hdr *)rec;
	struct kw_buf b = { 0 };
	char name[48];
	uint16_t kind;

	(void)state;
	for (kind = 0; kind < 200; kind++) {
		if (kind < KW_EV_LIMIT && known[kind])
			continue;
		h->kind = kind;
		assert_int_equal(kw_event_to_entry(rec, sizeof(rec), B2R, &b), -EINVAL);
		assert_int_equal(b.len, 0);
		assert_string_equal(kw_rule_name(kind, 3, name, sizeof(name)), "unknown[3]");
		assert_string_equal(kw_rule_name(kind, KW_RULE_DEFAULT, name, sizeof(name)),
				    "unknown:default");
	}
	kw_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_kind),
		cmocka_unit_test(test_unknown_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

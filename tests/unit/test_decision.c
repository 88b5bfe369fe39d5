/* SPDX-License-Identifier: Apache-2.0 */
/* Kernel events -> canonical decision-log entries: one known answer per
 * event kind, written out by hand (keys in RFC 8785 order, no spaces). */
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
#include "jcs/jcs.h"
#include "policy/policy.h"

/* realtime - boottime: 1.7e18 ns; events at 2 s of boot time */
#define B2R 1700000000000000000LL
#define TS_NS 2000000500ULL /* the 500 ns are cut off: microseconds */

static void hdr(struct kw_event_hdr *h, uint16_t kind, uint8_t decision, uint8_t enforced,
		uint16_t rule)
{
	h->seq = 5;
	h->ts_ns = TS_NS;
	h->cgroup_id = 1234;
	h->pid = 42;
	h->uid = 1000;
	h->slot = 3;
	h->generation = 1;
	h->kind = kind;
	h->rule = rule;
	h->decision = decision;
	h->enforced = enforced;
	memcpy(h->comm, "curl", 5);
}


static void expect(const void *ev, size_t size, const char *want)
{
	struct kw_buf b = { 0 };

	assert_int_equal(kw_event_to_entry(ev, size, B2R, &b), 0);
	assert_string_equal(b.data, want);
	kw_buf_free(&b);
}

static void test_net_connect(void **state)
{
	struct kw_ev_net e = { 0 };

	(void)state;
	hdr(&e.h, KW_EV_NET_CONNECT, KW_DENY, 1, 2);
	e.family = 4;
	e.proto = 6;
	e.port = 443;
	e.sock_type = 1;
	e.addr[0] = 10;
	e.addr[3] = 1;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\",\"enforced\":true,"
	       "\"host\":\"10.0.0.1\",\"pid\":42,\"port\":443,\"proto\":\"tcp\","
	       "\"rule\":\"net.connect[2]\",\"seq\":5,\"tool\":\"net.connect\","
	       "\"ts\":1700000002000000,\"uid\":1000}");
	/* permitted by an address a DNS answer opened: via and via_seq, last */
	hdr(&e.h, KW_EV_NET_CONNECT, KW_PERMIT, 0, 1);
	e.h.flags = KW_EVF_VIA;
	e.via_seq = 4;
	{
		struct kw_buf b = { 0 };

		assert_int_equal(kw_event_to_entry_via(&e, sizeof(e), B2R, "api.example.org", &b), 0);
		assert_string_equal(b.data,
				    "{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"permit\","
				    "\"enforced\":false,\"host\":\"10.0.0.1\",\"pid\":42,\"port\":443,"
				    "\"proto\":\"tcp\",\"rule\":\"net.connect[1]\",\"seq\":5,"
				    "\"tool\":\"net.connect\",\"ts\":1700000002000000,\"uid\":1000,"
				    "\"via\":\"api.example.org\",\"via_seq\":4}");
		/* the name unknown: via_seq alone */
		kw_buf_reset(&b);
		assert_int_equal(kw_event_to_entry(&e, sizeof(e), B2R, &b), 0);
		assert_non_null(strstr(b.data, "\"uid\":1000,\"via_seq\":4}"));
		/* a via_seq no decision can have */
		kw_buf_reset(&b);
		e.via_seq = (uint64_t)1 << 53;
		assert_int_equal(kw_event_to_entry(&e, sizeof(e), B2R, &b), -EINVAL);
		assert_int_equal(b.len, 0);
		kw_buf_free(&b);
	}
}

static void test_net_send_v6(void **state)
{
	struct kw_ev_net e = { 0 };

	(void)state;
	hdr(&e.h, KW_EV_NET_SEND, KW_PERMIT, 0, 0);
	e.family = 6;
	e.proto = 17;
	e.port = 53;
	e.addr[0] = 0x20;
	e.addr[1] = 0x01;
	e.addr[2] = 0x0d;
	e.addr[3] = 0xb8;
	e.addr[15] = 1;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"permit\",\"enforced\":false,"
	       "\"host\":\"2001:db8::1\",\"pid\":42,\"port\":53,\"proto\":\"udp\","
	       "\"rule\":\"net.send[0]\",\"seq\":5,\"tool\":\"net.send\","
	       "\"ts\":1700000002000000,\"uid\":1000}");
}

static void test_net_bind_advisory(void **state)
{
	struct kw_ev_net e = { 0 };

	(void)state;
	/* advisory: a deny that was not enforced; unknown protocol as a number */
	hdr(&e.h, KW_EV_NET_BIND, KW_DENY, 0, KW_RULE_DEFAULT);
	e.family = 4;
	e.proto = 0;
	e.port = 8080;
	e.addr[0] = 127;
	e.addr[3] = 1;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\",\"enforced\":false,"
	       "\"host\":\"127.0.0.1\",\"pid\":42,\"port\":8080,\"proto\":\"0\","
	       "\"rule\":\"net.bind:default\",\"seq\":5,\"tool\":\"net.bind\","
	       "\"ts\":1700000002000000,\"uid\":1000}");
}

static void test_net_socket(void **state)
{
	struct kw_ev_socket e = { 0 };

	(void)state;
	hdr(&e.h, KW_EV_NET_SOCKET, KW_DENY, 1, KW_RULE_DEFAULT);
	e.family = 10;
	e.type = 3;
	e.protocol = 255;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\",\"enforced\":true,"
	       "\"family\":\"inet6\",\"pid\":42,\"protocol\":255,\"rule\":\"net.socket:default\","
	       "\"seq\":5,\"tool\":\"net.socket\",\"ts\":1700000002000000,\"type\":\"raw\","
	       "\"uid\":1000}");
	/* a packet socket (17), decided by lsm/socket_create: its protocol is
	 * socket()'s argument as given (htons(ETH_P_IP) reads 8 on x86) */
	e.family = 17;
	e.type = 2;
	e.protocol = 8;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\",\"enforced\":true,"
	       "\"family\":\"packet\",\"pid\":42,\"protocol\":8,\"rule\":\"net.socket:default\","
	       "\"seq\":5,\"tool\":\"net.socket\",\"ts\":1700000002000000,\"type\":\"dgram\","
	       "\"uid\":1000}");
	/* families and types without a name stay numbers */
	e.family = 16;
	e.type = 10;
	e.protocol = 0;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\",\"enforced\":true,"
	       "\"family\":16,\"pid\":42,\"protocol\":0,\"rule\":\"net.socket:default\","
	       "\"seq\":5,\"tool\":\"net.socket\",\"ts\":1700000002000000,\"type\":10,"
	       "\"uid\":1000}");
}

static void test_dev(void **state)
{
	struct kw_ev_dev e = { 0 };

	(void)state;
	hdr(&e.h, KW_EV_DEV, KW_PERMIT, 0, 1);
	e.type = BPF_DEVCG_DEV_BLOCK;
	e.major = 8;
	e.minor = 0;
	e.access = BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE | BPF_DEVCG_ACC_MKNOD;
	expect(&e, sizeof(e),
	       "{\"access\":\"rwm\",\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"permit\","
	       "\"dev\":\"b 8:0\",\"enforced\":false,\"pid\":42,\"rule\":\"dev.allow[1]\","
	       "\"seq\":5,\"tool\":\"dev.access\",\"ts\":1700000002000000,\"uid\":1000}");
	e.type = BPF_DEVCG_DEV_CHAR;
	e.major = 1;
	e.minor = 3;
	e.access = BPF_DEVCG_ACC_MKNOD;
	expect(&e, sizeof(e),
	       "{\"access\":\"m\",\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"permit\","
	       "\"dev\":\"c 1:3\",\"enforced\":false,\"pid\":42,\"rule\":\"dev.allow[1]\","
	       "\"seq\":5,\"tool\":\"dev.access\",\"ts\":1700000002000000,\"uid\":1000}");
}

static void test_sysctl(void **state)
{
	struct kw_ev_sysctl e = { 0 };

	(void)state;
	hdr(&e.h, KW_EV_SYSCTL, KW_DENY, 1, 0);
	e.write = 1;
	strcpy(e.name, "net/ipv4/ip_forward");
	e.name_len = 19;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\",\"enforced\":true,"
	       "\"name\":\"net/ipv4/ip_forward\",\"pid\":42,\"rule\":\"sysctl.write\",\"seq\":5,"
	       "\"tool\":\"sysctl.write\",\"ts\":1700000002000000,\"uid\":1000}");
	/* truncated names say so; a name_len beyond the buffer is not trusted */
	e.h.flags = KW_EVF_TRUNCATED;
	memset(e.name, 'a', sizeof(e.name));
	e.name_len = 1000;
	{
		char want[512];

		snprintf(want, sizeof(want),
			 "{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\",\"enforced\":true,"
			 "\"name\":\"%.64s\",\"pid\":42,\"rule\":\"sysctl.write\",\"seq\":5,"
			 "\"tool\":\"sysctl.write\",\"truncated\":true,\"ts\":1700000002000000,"
			 "\"uid\":1000}", e.name);
		expect(&e, sizeof(e), want);
	}
}

static void test_paths(void **state)
{
	struct kw_ev_path e = { 0 };

	(void)state;
	hdr(&e.h, KW_EV_FS_OPEN, KW_PERMIT, 0, KW_RULE_PATH(KW_PATH_READ, 1));
	e.access = KW_ACC_READ;
	strcpy(e.path, "/etc/passwd");
	e.path_len = 11;
	expect(&e, sizeof(e),
	       "{\"access\":\"r\",\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"permit\","
	       "\"enforced\":false,\"path\":\"/etc/passwd\",\"pid\":42,\"rule\":\"fs.read[1]\","
	       "\"seq\":5,\"tool\":\"fs.open\",\"ts\":1700000002000000,\"uid\":1000}");

	hdr(&e.h, KW_EV_FS_PATHOP, KW_DENY, 1, KW_RULE_PATH(KW_PATH_DENY, 0));
	e.access = KW_PATHOP_MKDIR;
	e.h.flags = KW_EVF_TRUNCATED;
	strcpy(e.path, "/srv/agent/.ssh/x");
	e.path_len = 17;
	expect(&e, sizeof(e),
	       "{\"access\":\"w\",\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\","
	       "\"enforced\":true,\"path\":\"/srv/agent/.ssh/x\",\"pid\":42,"
	       "\"rule\":\"fs.deny[0]\",\"seq\":5,\"tool\":\"fs.mkdir\",\"truncated\":true,"
	       "\"ts\":1700000002000000,\"uid\":1000}");

	e.h.flags = 0;

	hdr(&e.h, KW_EV_NET_UNIX, KW_PERMIT, 0, KW_RULE_PATH(KW_PATH_UNIX, 0));
	e.access = KW_UNIX_CONNECT;
	strcpy(e.path, "/run/a.sock");
	e.path_len = 11;
	expect(&e, sizeof(e),
	       "{\"access\":\"connect\",\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"permit\","
	       "\"enforced\":false,\"path\":\"/run/a.sock\",\"pid\":42,\"rule\":\"net.unix[0]\","
	       "\"seq\":5,\"tool\":\"net.unix\",\"ts\":1700000002000000,\"uid\":1000}");

	/* a datagram */
	hdr(&e.h, KW_EV_NET_UNIX, KW_DENY, 1, KW_RULE_DEFAULT);
	e.access = KW_UNIX_SEND;
	expect(&e, sizeof(e),
	       "{\"access\":\"send\",\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\","
	       "\"enforced\":true,\"path\":\"/run/a.sock\",\"pid\":42,"
	       "\"rule\":\"net.unix:default\",\"seq\":5,\"tool\":\"net.unix\","
	       "\"ts\":1700000002000000,\"uid\":1000}");

	/* a path on a detached mount carries the marker */
	hdr(&e.h, KW_EV_FS_OPEN, KW_DENY, 1, KW_RULE_DEFAULT);
	e.access = KW_ACC_READ;
	e.h.flags = KW_EVF_DETACHED;
	strcpy(e.path, "/hostname");
	e.path_len = 9;
	expect(&e, sizeof(e),
	       "{\"access\":\"r\",\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\","
	       "\"enforced\":true,\"mount\":\"detached\",\"path\":\"/hostname\",\"pid\":42,"
	       "\"rule\":\"fs:default\",\"seq\":5,\"tool\":\"fs.open\","
	       "\"ts\":1700000002000000,\"uid\":1000}");
	e.h.flags = 0;

	/* metadata: a write */
	hdr(&e.h, KW_EV_FS_PATHOP, KW_DENY, 1, KW_RULE_DEFAULT);
	e.access = KW_PATHOP_UTIMES;
	strcpy(e.path, "/etc/x");
	e.path_len = 6;
	expect(&e, sizeof(e),
	       "{\"access\":\"w\",\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\","
	       "\"enforced\":true,\"path\":\"/etc/x\",\"pid\":42,\"rule\":\"fs:default\","
	       "\"seq\":5,\"tool\":\"fs.utimes\",\"ts\":1700000002000000,\"uid\":1000}");
	e.access = KW_PATHOP_SETXATTR;
	expect(&e, sizeof(e),
	       "{\"access\":\"w\",\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\","
	       "\"enforced\":true,\"path\":\"/etc/x\",\"pid\":42,\"rule\":\"fs:default\","
	       "\"seq\":5,\"tool\":\"fs.setxattr\",\"ts\":1700000002000000,\"uid\":1000}");

	/* the new mount API and umount */
	hdr(&e.h, KW_EV_MOUNT, KW_DENY, 1, KW_RULE_DEFAULT);
	e.access = KW_MOUNTOP_MOVE;
	strcpy(e.path, "/mnt");
	e.path_len = 4;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\",\"enforced\":true,"
	       "\"path\":\"/mnt\",\"pid\":42,\"rule\":\"mount:default\",\"seq\":5,"
	       "\"tool\":\"fs.move_mount\",\"ts\":1700000002000000,\"uid\":1000}");
	e.access = KW_MOUNTOP_UMOUNT;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\",\"enforced\":true,"
	       "\"path\":\"/mnt\",\"pid\":42,\"rule\":\"mount:default\",\"seq\":5,"
	       "\"tool\":\"fs.umount\",\"ts\":1700000002000000,\"uid\":1000}");
	e.access = KW_MOUNTOP_FSCONFIG;
	strcpy(e.path, "tmpfs");
	e.path_len = 5;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\",\"enforced\":true,"
	       "\"fstype\":\"tmpfs\",\"pid\":42,\"rule\":\"mount:default\",\"seq\":5,"
	       "\"tool\":\"fs.fsconfig\",\"ts\":1700000002000000,\"uid\":1000}");

}

/* exec: the path decision plus the file's identity and digest */
static void test_exec(void **state)
{
	struct kw_ev_exec e = { 0 };

	(void)state;
	hdr(&e.p.h, KW_EV_FS_EXEC, KW_DENY, 1, KW_RULE_DEFAULT);
	e.p.access = KW_ACC_EXEC;
	strcpy(e.p.path, "/tmp/x");
	e.p.path_len = 6;
	e.dev = (8u << 20) | 17u; /* the kernel's encoding of 8:17 */
	e.ino = 1ULL << 60;       /* beyond 2^53: a string */
	e.generation = 7;
	/* the SHA-256 of "abc" (FIPS 180-2, appendix B.1) */
	static const uint8_t abc[32] = {
		0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22,
		0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00,
		0x15, 0xad,
	};
	memcpy(e.sha256, abc, sizeof(abc));
	e.digest_status = KW_DIGEST_OK;
	expect(&e, sizeof(e),
	       "{\"access\":\"x\",\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\","
	       "\"dev\":\"8:17\",\"digest\":\"sha256:"
	       "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\","
	       "\"enforced\":true,\"generation\":7,\"ino\":\"1152921504606846976\","
	       "\"path\":\"/tmp/x\",\"pid\":42,\"rule\":\"exec:default\","
	       "\"seq\":5,\"tool\":\"fs.exec\",\"ts\":1700000002000000,\"uid\":1000}");

	/* no digest: never one the kernel did not give */
	hdr(&e.p.h, KW_EV_FS_EXEC, KW_PERMIT, 0, KW_RULE_PATH(KW_PATH_EXEC, 2));
	strcpy(e.p.path, "memfd:kwtest");
	e.p.path_len = 12;
	e.dev = 1;
	e.ino = 3;
	e.generation = 0;
	e.digest_status = KW_DIGEST_UNSUPPORTED;
	expect(&e, sizeof(e),
	       "{\"access\":\"x\",\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"permit\","
	       "\"dev\":\"0:1\",\"digest_unavailable\":\"unsupported\",\"enforced\":false,"
	       "\"generation\":0,\"ino\":\"3\",\"path\":\"memfd:kwtest\",\"pid\":42,"
	       "\"rule\":\"exec.allow[2]\",\"seq\":5,\"tool\":\"fs.exec\","
	       "\"ts\":1700000002000000,\"uid\":1000}");
	e.digest_status = KW_DIGEST_ERROR;
	e.digest_err = -95;
	e.p.h.flags = KW_EVF_INTERP;
	hdr(&e.p.h, KW_EV_FS_EXEC, KW_DENY, 1, KW_RULE_PATH(KW_RULE_KIND_DIGEST_MISMATCH, 3));
	e.p.h.flags = KW_EVF_INTERP;
	expect(&e, sizeof(e),
	       "{\"access\":\"x\",\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\","
	       "\"dev\":\"0:1\",\"digest_unavailable\":\"ima_error:EOPNOTSUPP\",\"enforced\":true,"
	       "\"generation\":0,\"ino\":\"3\",\"interpreter\":true,\"path\":\"memfd:kwtest\","
	       "\"pid\":42,\"rule\":\"exec.allow[3]:digest_mismatch\",\"seq\":5,"
	       "\"tool\":\"fs.exec\",\"ts\":1700000002000000,\"uid\":1000}");
	e.p.h.flags = 0;
	e.digest_status = KW_DIGEST_ALGORITHM;
	e.digest_err = 2;
	{
		struct kw_buf b = { 0 };

		assert_int_equal(kw_event_to_entry(&e, sizeof(e), B2R, &b), 0);
		assert_non_null(strstr(b.data, "\"digest_unavailable\":\"ima_algorithm:sha1\""));
		assert_null(strstr(b.data, "\"digest\":"));
		kw_buf_free(&b);
	}
	/* a file with an fs-verity digest: the last member */
	e.p.h.flags = 0;
	e.digest_status = KW_DIGEST_OK;
	e.verity_len = 32;
	memset(e.verity, 0xab, sizeof(e.verity));
	{
		struct kw_buf b = { 0 };
		const char *v;

		assert_int_equal(kw_event_to_entry(&e, sizeof(e), B2R, &b), 0);
		v = strstr(b.data, ",\"verity_digest\":\"sha256:abababababababababababababababab"
				   "abababababababababababababababab\"}");
		assert_non_null(v);
		kw_buf_reset(&b);
		e.verity_len = 64;
		assert_int_equal(kw_event_to_entry(&e, sizeof(e), B2R, &b), 0);
		assert_non_null(strstr(b.data, "\"verity_digest\":\"sha512:abab"));
		/* 128 hex digits and the closing quote */
		assert_int_equal(strlen(strstr(b.data, "sha512:")), 7 + 128 + 2);
		kw_buf_reset(&b);
		e.verity_len = 17; /* no such fs-verity digest: none written */
		assert_int_equal(kw_event_to_entry(&e, sizeof(e), B2R, &b), 0);
		assert_null(strstr(b.data, "verity"));
		kw_buf_free(&b);
	}
	e.verity_len = 0;
	/* a path-sized exec event is short */
	{
		struct kw_buf b = { 0 };

		assert_int_equal(kw_event_to_entry(&e, sizeof(struct kw_ev_path), B2R, &b), -EINVAL);
		assert_int_equal(b.len, 0);
		kw_buf_free(&b);
	}
}

static void test_proc(void **state)
{
	struct kw_ev_proc e = { 0 };

	(void)state;
	hdr(&e.h, KW_EV_PROC_KILL, KW_DENY, 1, KW_RULE_DEFAULT);
	e.target_pid = 77;
	e.sig_or_mode = 9;
	e.target_cgroup = 99;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\",\"enforced\":true,"
	       "\"pid\":42,\"rule\":\"proc:default\",\"seq\":5,\"signal\":9,\"target_cgroup\":\"99\","
	       "\"target_pid\":77,\"tool\":\"proc.kill\",\"ts\":1700000002000000,\"uid\":1000}");
	hdr(&e.h, KW_EV_PROC_PTRACE, KW_PERMIT, 0, 0);
	e.sig_or_mode = 2;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"permit\",\"enforced\":false,"
	       "\"mode\":2,\"pid\":42,\"rule\":\"proc.signal_outside\",\"seq\":5,"
	       "\"target_cgroup\":\"99\",\"target_pid\":77,\"tool\":\"proc.ptrace\","
	       "\"ts\":1700000002000000,\"uid\":1000}");
	hdr(&e.h, KW_EV_PROC_SIGIO, KW_DENY, 1, KW_RULE_DEFAULT);
	e.sig_or_mode = 29;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"1234\",\"comm\":\"curl\",\"decision\":\"deny\",\"enforced\":true,"
	       "\"pid\":42,\"rule\":\"proc:default\",\"seq\":5,\"signal\":29,\"target_cgroup\":\"99\","
	       "\"target_pid\":77,\"tool\":\"proc.sigio\",\"ts\":1700000002000000,\"uid\":1000}");
	/* the programs write mount decisions in the path layout only: one
	 * of the process layout's size is short */
	hdr(&e.h, KW_EV_MOUNT, KW_DENY, 1, KW_RULE_DEFAULT);
	{
		struct kw_buf b = { 0 };

		assert_int_equal(kw_event_to_entry(&e, sizeof(e), B2R, &b), -EINVAL);
		assert_int_equal(b.len, 0);
		kw_buf_free(&b);
	}
}

static void test_lossy_comm_and_big_ids(void **state)
{
	struct kw_ev_net e = { 0 };

	(void)state;
	hdr(&e.h, KW_EV_NET_CONNECT, KW_PERMIT, 0, 0);
	/* a comm of 16 bytes without NUL, one byte not UTF-8 */
	memcpy(e.h.comm, "ab\xff" "cdefghijklmnop", 16);
	e.h.cgroup_id = 9007199254740992ULL; /* 2^53: beyond JSON's safe integers */
	e.family = 4;
	e.proto = 6;
	e.port = 1;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"9007199254740992\",\"comm\":\"ab\xef\xbf\xbd" "cdefghijklmno\","
	       "\"decision\":\"permit\",\"enforced\":false,\"host\":\"0.0.0.0\",\"pid\":42,"
	       "\"port\":1,\"proto\":\"tcp\",\"rule\":\"net.connect[0]\",\"seq\":5,"
	       "\"tool\":\"net.connect\",\"ts\":1700000002000000,\"uid\":1000}");
}

/* Values a JSON number may not hold (above 2^53 - 1): kernel ids are decimal
 * strings whatever their size; the largest counters are integers; a seq or a
 * timestamp beyond them marks a corrupt event, which is refused, never written. */
static void test_numbers_beyond_2_53(void **state)
{
	struct kw_ev_proc e = { 0 };
	struct kw_buf b = { 0 };

	(void)state;
	hdr(&e.h, KW_EV_PROC_KILL, KW_DENY, 1, KW_RULE_DEFAULT);
	e.h.cgroup_id = UINT64_MAX;
	e.h.seq = 9007199254740991ULL;
	e.h.pid = UINT32_MAX;
	e.h.uid = UINT32_MAX;
	e.target_pid = UINT32_MAX;
	e.sig_or_mode = UINT32_MAX;
	e.target_cgroup = 9007199254740993ULL;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"18446744073709551615\",\"comm\":\"curl\",\"decision\":\"deny\","
	       "\"enforced\":true,\"pid\":4294967295,\"rule\":\"proc:default\","
	       "\"seq\":9007199254740991,\"signal\":4294967295,"
	       "\"target_cgroup\":\"9007199254740993\",\"target_pid\":4294967295,"
	       "\"tool\":\"proc.kill\",\"ts\":1700000002000000,\"uid\":4294967295}");
	e.target_cgroup = 0;
	e.h.cgroup_id = 0;
	e.h.seq = 0;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"0\",\"comm\":\"curl\",\"decision\":\"deny\","
	       "\"enforced\":true,\"pid\":4294967295,\"rule\":\"proc:default\","
	       "\"seq\":0,\"signal\":4294967295,"
	       "\"target_cgroup\":\"0\",\"target_pid\":4294967295,"
	       "\"tool\":\"proc.kill\",\"ts\":1700000002000000,\"uid\":4294967295}");

	e.h.seq = 9007199254740992ULL;
	assert_int_equal(kw_event_to_entry(&e, sizeof(e), B2R, &b), -EINVAL);
	e.h.seq = UINT64_MAX;
	assert_int_equal(kw_event_to_entry(&e, sizeof(e), B2R, &b), -EINVAL);
	e.h.seq = 1;
	e.h.ts_ns = UINT64_MAX; /* would overflow the wall-clock sum */
	assert_int_equal(kw_event_to_entry(&e, sizeof(e), B2R, &b), -EINVAL);
	e.h.ts_ns = 7500000000000000000ULL; /* sums to 9.2e18 ns: beyond 2^53 microseconds */
	assert_int_equal(kw_event_to_entry(&e, sizeof(e), B2R, &b), -EINVAL);
	assert_int_equal(b.len, 0);
	kw_buf_free(&b);
}

/* Not a decision: a cgroup made in the session that the kernel could not tag. */
static void test_cgroup_untracked(void **state)
{
	struct kw_ev_cgroup e = { 0 };

	(void)state;
	hdr(&e.h, KW_EV_CGROUP_UNTRACKED, KW_DENY, 0, KW_UNTRACKED_QUOTA);
	e.child_cgroup = 98765;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"1234\",\"child_cgroup\":\"98765\",\"comm\":\"curl\",\"decision\":\"deny\","
	       "\"enforced\":false,\"pid\":42,\"rule\":\"cgroups.session_quota\",\"seq\":5,"
	       "\"tool\":\"cgroup.untracked\",\"ts\":1700000002000000,\"uid\":1000}");
	e.h.rule = KW_UNTRACKED_MAP_FULL;
	expect(&e, sizeof(e),
	       "{\"cgroup\":\"1234\",\"child_cgroup\":\"98765\",\"comm\":\"curl\",\"decision\":\"deny\","
	       "\"enforced\":false,\"pid\":42,\"rule\":\"cgroups.table_full\",\"seq\":5,"
	       "\"tool\":\"cgroup.untracked\",\"ts\":1700000002000000,\"uid\":1000}");
	{
		struct kw_buf b = { 0 };

		assert_int_equal(kw_event_to_entry(&e, sizeof(e) - 1, B2R, &b), -EINVAL);
		kw_buf_free(&b);
	}
}

static void test_refusals(void **state)
{
	struct kw_ev_net e = { 0 };
	struct kw_buf b = { 0 };
	uint64_t seq = 0;

	(void)state;
	hdr(&e.h, KW_EV_NET_CONNECT, KW_PERMIT, 0, 0);
	e.family = 4;
	/* shorter than its kind's layout */
	assert_int_equal(kw_event_to_entry(&e, sizeof(e) - 1, B2R, &b), -EINVAL);
	assert_int_equal(kw_event_to_entry(&e, 3, B2R, &b), -EINVAL);
	/* a family that is neither 4 nor 6 */
	e.family = 5;
	assert_int_equal(kw_event_to_entry(&e, sizeof(e), B2R, &b), -EINVAL);
	e.family = 4;
	e.h.kind = 99;
	assert_int_equal(kw_event_to_entry(&e, sizeof(e), B2R, &b), -EINVAL);
	e.h.kind = KW_EV_NET_CONNECT;
	/* a boot-clock stamp that overflows wall time (found by fuzz_decision:
	 * signed overflow before) */
	e.h.ts_ns = (uint64_t)INT64_MAX - 10;
	assert_int_equal(kw_event_to_entry(&e, sizeof(e), B2R, &b), -EINVAL);
	e.h.ts_ns = 1ULL << 63;
	assert_int_equal(kw_event_to_entry(&e, sizeof(e), 0, &b), -EINVAL);
	assert_int_equal(b.len, 0);
	kw_buf_free(&b);

	assert_int_equal(kw_event_seq(&e, sizeof(e), &seq), 0);
	assert_int_equal(seq, 5);
	assert_int_equal(kw_event_seq(&e, sizeof(e.h) - 1, &seq), -EINVAL);
}

/* Kernel bytes are still bytes: random events of every kind and size give
 * an entry or -EINVAL, never a crash (ASan); an entry is one object that the
 * strict parser accepts (so no number beyond 2^53 - 1), a refusal writes
 * nothing. Most events get a plausible seq and clock, so most are entries. */
static void test_random_events(void **state)
{
	static const uint16_t kinds[] = { 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 99 };
	unsigned char ev[sizeof(struct kw_ev_exec) + 8];
	uint32_t x = 12345;
	size_t i, j, entries = 0;

	(void)state;
	for (i = 0; i < 20000; i++) {
		struct kw_buf b = { 0 };
		struct kw_event_hdr *h = (struct kw_event_hdr *)ev;
		size_t size;
		int ret;

		for (j = 0; j < sizeof(ev); j++) {
			x = x * 1103515245u + 12345u;
			ev[j] = (unsigned char)(x >> 16);
		}
		h->kind = kinds[i % (sizeof(kinds) / sizeof(kinds[0]))];
		if (i % 8) {
			h->seq &= (1ULL << 53) - 1;
			h->ts_ns &= (1ULL << 62) - 1;
		}
		if (i & 1)
			ev[offsetof(struct kw_ev_net, family)] = (i & 2) ? 4 : 6;
		size = (i % 7 == 0) ? (x >> 8) % sizeof(ev) : sizeof(ev);
		ret = kw_event_to_entry(ev, size, 0, &b);
		assert_true(ret == 0 || ret == -EINVAL);
		if (ret == 0) {
			struct kw_buf again = { 0 };

			assert_true(b.len > 2 && b.data[0] == '{' && b.data[b.len - 1] == '}');
			assert_int_equal(jcs_canonicalize(b.data, b.len, &again, NULL), 0);
			kw_buf_free(&again);
			entries++;
		} else {
			assert_int_equal(b.len, 0);
		}
		kw_buf_free(&b);
	}
	assert_true(entries > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_net_connect),
		cmocka_unit_test(test_net_send_v6),
		cmocka_unit_test(test_net_bind_advisory),
		cmocka_unit_test(test_net_socket),
		cmocka_unit_test(test_dev),
		cmocka_unit_test(test_sysctl),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_exec),
		cmocka_unit_test(test_proc),
		cmocka_unit_test(test_lossy_comm_and_big_ids),
		cmocka_unit_test(test_numbers_beyond_2_53),
		cmocka_unit_test(test_cgroup_untracked),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_random_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

// SPDX-License-Identifier: Apache-2.0
/* "proc" entries (see proc_entry.h): built with the decision entries'
 * builder (entry.h), so they are canonical by construction. */
#include <errno.h>
#include <string.h>

#include "collector/entry.h"
#include "collector/proc_entry.h"
#include "jcs/jcs.h"

size_t kw_proc_ref(char out[KW_PROC_REF_MAX], uint32_t pid, uint64_t start_ns)
{
	char *o = jcs_u64_at(out, pid);

	*o++ = '-';
	o = jcs_u64_at(o, start_ns);
	*o = '\0';
	return (size_t)(o - out);
}

int kw_proc_facts_entry(const struct kw_proc_facts *f, struct kw_buf *out)
{
	char ref[KW_PROC_REF_MAX], parent[KW_PROC_REF_MAX];
	struct entry ent = { 0 }, *e = &ent;
	size_t start = out->len;
	int ret;

	if (f->seq > (uint64_t)JCS_MAX_SAFE_INT || !f->event)
		return -EINVAL;
	if (f->argv && f->argv_len) {
		add_lossy(e, M_ARGV, f->argv, f->argv_len);
		if (f->argv_full > f->argv_len) {
			add_int(e, M_ARGV_LEN, (int64_t)f->argv_full);
			if (f->argv_sha256)
				add_plain(e, M_ARGV_SHA256, f->argv_sha256);
			add_bool(e, M_ARGV_TRUNCATED, true);
		}
	}
	if (f->has_cgroup)
		add_id(e, M_CGROUP, f->cgroup);
	if (f->comm)
		add_lossy(e, M_COMM, f->comm, f->comm_len);
	if (f->digest)
		add_plain(e, M_DIGEST, f->digest);
	add_plain(e, M_EVENT, f->event);
	if (f->exe)
		add_lossy(e, M_EXE, f->exe, f->exe_len);
	if (f->has_ids) {
		add_int(e, M_GID, f->gid);
		add_int(e, M_UID, f->uid);
	}
	if (f->has_parent) {
		add_plainn(e, M_PARENT, parent, kw_proc_ref(parent, f->ppid, f->parent_start_ns));
		add_int(e, M_PPID, f->ppid);
	}
	add_int(e, M_PID, f->pid);
	add_plainn(e, M_PROC, ref, kw_proc_ref(ref, f->pid, f->start_ns));
	add_int(e, M_SEQ, (int64_t)f->seq);
	add_plain(e, M_TOOL, "proc");
	if (f->exe_truncated)
		add_bool(e, M_TRUNCATED, true);
	add_int(e, M_TS, f->ts_us);
	ret = kw_entry_emit(e, out);
	if (ret && out->len > start) {
		out->len = start;
		out->data[start] = '\0';
	}
	return ret == -EILSEQ ? -EINVAL : ret;
}

int kw_proc_event_facts(const void *data, size_t size, int64_t boot_to_realtime_ns,
			struct kw_proc_facts *f)
{
	const struct kw_ev_task *ev = data;
	int64_t real_ns;

	if (!data || size < sizeof(*ev) || !kw_is_proc_kind(ev->h.kind) ||
	    ev->h.ts_ns > (uint64_t)INT64_MAX ||
	    __builtin_add_overflow((int64_t)ev->h.ts_ns, boot_to_realtime_ns, &real_ns))
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	f->seq = ev->h.seq;
	f->ts_us = real_ns / 1000;
	f->event = ev->h.kind == KW_EV_PROC_FORK ? "fork" : "exec";
	f->pid = ev->h.pid;
	f->start_ns = ev->h.start_ns;
	f->has_parent = true;
	f->ppid = ev->ppid;
	f->parent_start_ns = ev->parent_start_ns;
	f->has_ids = true;
	f->uid = ev->h.uid;
	f->gid = ev->gid;
	f->has_cgroup = true;
	f->cgroup = ev->h.cgroup_id;
	f->comm = ev->h.comm;
	f->comm_len = strnlen(ev->h.comm, sizeof(ev->h.comm));
	if (ev->h.kind == KW_EV_PROC_EXEC) {
		const char *tail = (const char *)(ev + 1);

		/* the path, then argv, within the record */
		if (ev->path_len >= KW_PATH_MAX || ev->argv_len > KW_ARGV_MAX ||
		    size - sizeof(*ev) < (size_t)ev->path_len + ev->argv_len)
			return -EINVAL;
		f->exe = tail;
		f->exe_len = strnlen(tail, ev->path_len);
		f->exe_truncated = ev->path_len == KW_PATH_MAX - 1;
		f->argv = tail + ev->path_len;
		f->argv_len = ev->argv_len;
		f->argv_full = ev->argv_full > f->argv_len ? ev->argv_full : f->argv_len;
		/* a whole argv: its last argument's NUL says nothing */
		if (f->argv_full == f->argv_len && f->argv_len && !f->argv[f->argv_len - 1])
			f->argv_full = --f->argv_len;
	}
	return 0;
}

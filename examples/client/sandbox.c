/* SPDX-License-Identifier: Apache-2.0 */
/* A command in a recorded sandbox, through libkwitness: the cgroup, the
 * session, the workload in it, and the close that kills what is left.
 * Build: cc sandbox.c $(pkg-config --cflags --libs kwitness)
 * Usage: kwitness-sandbox-example POLICY SANDBOX_ID IMAGE_DIGEST CMD [ARGS] */
#include <stdio.h>
#include <sys/wait.h>
#include <kwitness/client.h>

int main(int argc, char **argv)
{
	struct kwitness_open_params p = { 0 };
	struct kwitness_sandbox *s;
	struct kwitness_close_result r;
	struct kwitness_error err;
	int status = 0;
	pid_t pid;

	if (argc < 5) {
		fprintf(stderr, "usage: %s POLICY SANDBOX_ID IMAGE_DIGEST CMD [ARGS]\n", argv[0]);
		return 2;
	}
	p.policy_file = argv[1];
	p.sandbox_id = argv[2];
	p.image_digest = argv[3];
	if (kwitness_sandbox_open(NULL, &p, NULL, &s, &err)) {
		fprintf(stderr, "open: %s\n", err.message);
		return 125;
	}
	printf("cgroup %s\n", kwitness_sandbox_cgroup(s));
	if (kwitness_sandbox_spawn(s, argv + 4, NULL, &pid, &err))
		fprintf(stderr, "spawn: %s\n", err.message);
	else
		waitpid(pid, &status, 0);
	if (kwitness_sandbox_close(s, &r, &err)) {
		fprintf(stderr, "close: %s\n", err.message);
		return 125;
	}
	printf("record %s\nlog %s\ndecisions %llu denials %llu %s\nexit %d\n", r.record_path,
	       r.log_path, (unsigned long long)r.decisions, (unsigned long long)r.denials,
	       r.complete ? "complete" : "INCOMPLETE", WIFEXITED(status) ? WEXITSTATUS(status) : 128);
	kwitness_close_result_free(&r);
	return 0;
}

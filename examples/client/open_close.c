/* SPDX-License-Identifier: Apache-2.0 */
/* A runtime's side of kwitness in one page: open a session for a cgroup the
 * runtime made, let the workload run (here: until stdin closes), close the
 * session and report where the signed record is.
 * Build: cc open_close.c $(pkg-config --cflags --libs kwitness)
 * Usage: kwitness-client-example CGROUP POLICY SANDBOX_ID IMAGE_DIGEST */
#include <stdio.h>
#include <kwitness/client.h>

int main(int argc, char **argv)
{
	struct kwitness_open_params p = { 0 };
	struct kwitness_close_result r;
	struct kwitness_error err;
	char session[KWITNESS_SESSION_ID_MAX];

	if (argc != 5) {
		fprintf(stderr, "usage: %s CGROUP POLICY SANDBOX_ID IMAGE_DIGEST\n", argv[0]);
		return 2;
	}
	p.cgroup = argv[1];
	p.policy_file = argv[2];
	p.sandbox_id = argv[3];
	p.image_digest = argv[4];
	if (kwitness_open(NULL, &p, session, NULL, 0, &err)) {
		fprintf(stderr, "open: %s\n", err.message);
		return 1;
	}
	printf("session %s\n", session);
	fflush(stdout);
	while (getchar() != EOF) /* the workload runs in the cgroup meanwhile */
		;
	if (kwitness_close(NULL, session, &r, &err)) {
		fprintf(stderr, "close: %s\n", err.message);
		return 1;
	}
	printf("record %s\nlog %s\ndecisions %llu denials %llu %s\n", r.record_path, r.log_path,
	       (unsigned long long)r.decisions, (unsigned long long)r.denials,
	       r.complete ? "complete" : "INCOMPLETE");
	kwitness_close_result_free(&r);
	return 0;
}

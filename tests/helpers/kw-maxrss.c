/* SPDX-License-Identifier: Apache-2.0 */
/* kw-maxrss FILE CMD [ARGS]: runs CMD, writes the peak resident set size of
 * CMD (wait4's ru_maxrss, KiB) to FILE, and exits with CMD's status (128 +
 * signal when it was killed). Tests use it to hold a command to a memory
 * bound. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	FILE *f;
	pid_t pid;
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: kw-maxrss FILE CMD [ARGS]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return 2;
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%ld\n", ru.ru_maxrss) < 0 || fclose(f))
		return 2;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

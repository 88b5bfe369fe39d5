// SPDX-License-Identifier: Apache-2.0
/* bench_lineage's floor (bench/lineage_floor.bpf.c): attaches the empty
 * programs, prints "attached", and keeps them until its stdin ends. */
#include <stdio.h>
#include <unistd.h>

#include "bench/lineage_floor.skel.h"

int main(void)
{
	struct lineage_floor_bpf *skel = lineage_floor_bpf__open_and_load();
	char c;

	if (!skel || lineage_floor_bpf__attach(skel)) {
		fprintf(stderr, "bench_lineage_floor: cannot load or attach the floor programs\n");
		lineage_floor_bpf__destroy(skel);
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	lineage_floor_bpf__destroy(skel);
	return 0;
}

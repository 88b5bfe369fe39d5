/* PLACEHOLDER: replaced by the real command. */
#include <stdio.h>
#include "commands.h"
int cmd_record(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "kwitness %s: not built yet\n", argv[0]);
	return 2;
}
int cmd_sign(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "kwitness %s: not built yet\n", argv[0]);
	return 2;
}

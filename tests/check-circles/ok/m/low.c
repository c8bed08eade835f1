/* low.c - the bottom file; top_run() is named only in comments, strings and members. */
#include "m/low.h"
#include "m/shared.h"

static int
helper(void)
{
	return 1;
}

int
low_count(void)
{
	struct low l = {.top_run = 0};
	const char *s = "top_run()";
	return helper() + l.top_run + (s[0] == 't');
}

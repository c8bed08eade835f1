/* table.c - a global whose value comes from top.c: the circle table.c -> top.c -> table.c. */
#include "m/shared.h"

int top_run(void);

const int table_size = 4;

int table_run(void);

int
table_run(void)
{
	return top_run();
}

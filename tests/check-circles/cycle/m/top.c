/* top.c - calls low.c, reads table.c's global. */
#include "m/shared.h"

int top_run(void);

int
top_run(void)
{
	return low_count() + table_size;
}

/* low.c - calls mid.c and reads table.c: the circles low.c -> mid.c -> low.c and
 * low.c -> table.c -> top.c -> low.c. */
#include "m/low.h"
#include "m/shared.h"

int mid_size(const struct low *l);

int
low_count(void)
{
	struct low l = {.top_run = 0};
	return mid_size(&l) + table_size;
}

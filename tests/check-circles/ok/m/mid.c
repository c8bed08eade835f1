/* mid.c - includes low.c's module header: an edge to low.c. */
#include "m/low.h"

int mid_size(const struct low *l);

int
mid_size(const struct low *l)
{
	return l->top_run;
}

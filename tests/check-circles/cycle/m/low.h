/* m/low.h - low.c's module header. */
#ifndef M_LOW_H
#define M_LOW_H
struct low {
	int top_run; /* a member named like top.c's function: not a use */
};
#endif

/* m/shared.h - a shared header: declares what low.c and table.c define; no edge by itself. */
#ifndef M_SHARED_H
#define M_SHARED_H
int low_count(void);
extern const int table_size;
#endif

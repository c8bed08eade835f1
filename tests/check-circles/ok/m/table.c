/* table.c - a global. */
#include "m/shared.h"

const int table_size = 4;

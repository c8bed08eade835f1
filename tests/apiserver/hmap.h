/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_APISERVER_HMAP_H
#define VMDHCP_APISERVER_HMAP_H

#include <stddef.h>

/* String-keyed hash map with chaining; keys are copied, values borrowed. */
struct hmap;

struct hmap *hmap_new(void);
/* Frees the map and its keys; values are left to the caller. Accepts NULL, returns NULL. */
struct hmap *hmap_free(struct hmap *m);
/* Returns the value (borrowed) or NULL. */
void *hmap_get(const struct hmap *m, const char *key);
/* Sets key (copied) to value; returns the previous value or NULL. */
void *hmap_put(struct hmap *m, const char *key, void *value);
/* Removes key; returns its value or NULL. */
void *hmap_del(struct hmap *m, const char *key);
size_t hmap_size(const struct hmap *m);

/* Iteration: i starts at 0; returns 0 at the end. Do not modify the map while iterating. */
struct hmap_iter {
	size_t bucket;
	void *node;
};
int hmap_next(const struct hmap *m, struct hmap_iter *it, const char **ret_key, void **ret_value);

#endif

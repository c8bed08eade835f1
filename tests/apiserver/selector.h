/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_APISERVER_SELECTOR_H
#define VMDHCP_APISERVER_SELECTOR_H

#include <stdbool.h>

#include <jansson.h>

/*
 * Label selectors (=, ==, !=, in, notin, exists, !key) and field selectors (=, ==, != on a
 * dotted path such as metadata.name), as the Kubernetes API server parses them.
 */
struct selector;

/* Parse s (borrowed; NULL or "" = everything). Returns 0 and a new selector, or -EINVAL. */
int label_selector_parse(const char *s, struct selector **ret);
int field_selector_parse(const char *s, struct selector **ret);
struct selector *selector_free(struct selector *sel);

/* Does obj (borrowed) match? A NULL selector matches everything. */
bool selector_match(const struct selector *sel, json_t *obj);
/* True when the selector has no requirement (matches everything). */
bool selector_empty(const struct selector *sel);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_APISERVER_PATCH_H
#define VMDHCP_APISERVER_PATCH_H

#include <jansson.h>

/* RFC 7386 JSON merge patch. target and patch are borrowed (not modified); returns a new
 * reference to the patched document. */
json_t *merge_patch(json_t *target, json_t *patch);

/*
 * RFC 6902 JSON patch, the operations the tests send (add, remove, replace; move, copy and
 * test are refused as a bad patch), with RFC 6901 pointers. doc and ops are borrowed.
 * Returns 0 and a new reference in *ret; -EBADMSG when ops is not a valid patch document,
 * -EINVAL when an operation does not apply (missing path).
 */
int json_patch(json_t *doc, json_t *ops, json_t **ret);

#endif

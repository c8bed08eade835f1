/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer: ippool_decode_text against json_loadb + ippool_decode on the same bytes. Both
 * decode to the same pool (every allocated entry compared) or fail with the same code, path
 * and message; a text that is not JSON gives "not JSON: " and jansson's error. The root, a
 * watch event's "object" and each list item are tried (the informer hands the codec one
 * object's text; here it is cut out again with json_dumps). Any difference traps.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "tests/helpers/ippool-diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_CANDIDATES 16

static void
check(const char *text, size_t len)
{
	if (ippool_diff(text, len, NULL) != NULL)
		__builtin_trap();
}

static void
check_json(const json_t *obj)
{
	char *text = json_dumps(obj, JSON_COMPACT | JSON_ENCODE_ANY);

	if (text)
		check(text, strlen(text));
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *root;
	const json_t *items;

	check((const char *)data, size);
	root = json_loadb((const char *)data, size, 0, NULL);
	if (!json_is_object(root)) {
		json_decref(root);
		return 0;
	}
	if (json_object_get(root, "object"))
		check_json(json_object_get(root, "object"));
	items = json_object_get(root, "items");
	for (size_t i = 0; i < json_array_size(items) && i < MAX_CANDIDATES; i++)
		check_json(json_array_get(items, i));
	json_decref(root);
	return 0;
}

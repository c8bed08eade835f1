/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: watch-stream framing + JSON decode + store application. The first byte
 * picks the chunk size, so the same stream is also exercised split at odd places; each
 * decoded event is applied to a store keyed "ns/name" like the store of kube_watch_start's
 * users. The same stream also goes through the informer's path (kube_watch_framer_feed_raw):
 * each object handed is an exact object span that lib/jscan.h accepts, and every line the
 * json_t path decodes is one it hands too.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kube/kube-internal.h"
#include "lib/jscan.h"

struct ctx {
	struct kube_store *store;
	uint64_t events;
};

static void
on_event(void *userdata, enum kube_watch_type type, json_t *obj)
{
	struct ctx *c = userdata;
	char key[256];

	c->events++;
	(void)kube_watch_type_name(type);
	if (type == KUBE_WATCH_ERROR) {
		(void)kube_status_to_errno((long)json_integer_value(json_object_get(obj, "code")),
		    json_string_value(json_object_get(obj, "reason")));
		return;
	}
	if (kube_obj_key(obj, key, sizeof(key)) < 0)
		return;
	if (type == KUBE_WATCH_DELETED)
		kube_store_delete(c->store, key, NULL);
	else if (type != KUBE_WATCH_BOOKMARK)
		kube_store_put(
		    c->store, key, kube_obj_resource_version(obj), json_incref(obj), NULL);
}

static void
on_raw(void *userdata, enum kube_watch_type type, const char *text, size_t len)
{
	uint64_t *n = userdata;
	struct jscan_span v;

	(*n)++;
	if (jscan_value(text, len, &v) < 0 || v.p != text || v.len != len || text[0] != '{' ||
	    text[len - 1] != '}' || (size_t)type > KUBE_WATCH_ERROR)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kube_watch_framer f, fr;
	struct ctx c = {0};
	uint64_t raw = 0;
	size_t chunk;

	if (size < 1)
		return 0;
	chunk = (size_t)data[0] + 1;
	data++;
	size--;
	if (kube_store_new(NULL, &c.store) < 0)
		return 0;
	kube_watch_framer_init(&f, 4096);
	kube_watch_framer_init(&fr, 4096);
	for (size_t off = 0; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;

		if (kube_watch_framer_feed(&f, (const char *)data + off, n, on_event, &c) < 0 ||
		    kube_watch_framer_feed_raw(&fr, (const char *)data + off, n, on_raw, &raw) < 0)
			break;
	}
	if (raw < c.events || fr.lines != f.lines)
		__builtin_trap();
	kube_watch_framer_release(&f);
	kube_watch_framer_release(&fr);
	kube_store_free(c.store);
	return 0;
}

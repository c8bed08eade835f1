/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/ippool-text.c - one IPPool's JSON text straight into struct ippool, with its
 * status.ipv4.allocated map parsed into struct ippool_alloc entries instead of a jansson tree
 * of three allocations per entry (65 000 bindings: 1.5 MiB of heap at the peak, not 9.4).
 *
 * 1. lib/jscan.h finds the map: the last "status" member of the object, its last "ipv4", its
 *    last "allocated" (jansson keeps the last of duplicate keys too), every step checked.
 * 2. The map is parsed strictly (no escapes, keys IPv4, values MAC / EXCLUDED / RESERVED,
 *    ASCII only) into an exact-size array, sorted, one entry per address (the last in the
 *    text, as jansson keeps it). A map that does not qualify is left to jansson: the whole
 *    text then goes through json_loadb + ippool_decode, so that its error text is the same.
 * 3. json_loadb builds the rest: a copy of the text with the map replaced by "{}".
 *    ippool_decode runs on that tree and the entries become status.allocated.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crds/crds-internal.h"
#include "crds/ippool.h"
#include "lib/jscan.h"
#include "lib/util.h"

/* --- 1. finding the map ------------------------------------------------------------------ */

/* 1 and *map when the text's status.ipv4.allocated is an object, 0 when not, -EBADMSG. */
static int
find_map(const char *text, size_t len, struct jscan_span *map)
{
	struct jscan_span status, ipv4;
	int r;

	r = jscan_get(text, len, "status", &status);
	if (r <= 0 || jscan_type(status) != '{')
		return r;
	r = jscan_get(status.p, status.len, "ipv4", &ipv4);
	if (r <= 0 || jscan_type(ipv4) != '{')
		return r;
	r = jscan_get(ipv4.p, ipv4.len, "allocated", map);
	if (r <= 0 || jscan_type(*map) != '{')
		return r < 0 ? r : 0;
	return 1;
}

/* --- 2. the map -------------------------------------------------------------------------- */

static bool
is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

struct map_iter {
	const char *p, *end;
	bool first;
};

static void
map_ws(struct map_iter *it)
{
	while (it->p < it->end && is_ws(*it->p))
		it->p++;
}

/*
 * A string of at most max characters, each one accepted by ok, into buf (NUL-terminated).
 * Anything else (an escape, a control character, non-ASCII) refuses the map.
 */
static int
map_string(struct map_iter *it, char *buf, size_t max, bool (*ok)(char))
{
	size_t n = 0;

	if (it->p >= it->end || *it->p != '"')
		return -1;
	for (it->p++; it->p < it->end && *it->p != '"'; it->p++) {
		if (n == max || !ok(*it->p))
			return -1;
		buf[n++] = *it->p;
	}
	if (it->p >= it->end)
		return -1;
	it->p++;
	buf[n] = '\0';
	return 0;
}

static bool
ip_char(char c)
{
	return (c >= '0' && c <= '9') || c == '.';
}

static bool
value_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == ':' || c == '-' || c == '.';
}

/* Next entry of the map: 1 and *a, 0 at the end (the iterator then ends at the span's end), -1. */
static int
map_next(struct map_iter *it, struct ippool_alloc *a)
{
	char key[IPV4_STRLEN], val[MAC_STRLEN];

	map_ws(it);
	if (it->p < it->end && *it->p == '}') {
		it->p++;
		return it->p == it->end ? 0 : -1;
	}
	if (!it->first) {
		if (it->p >= it->end || *it->p != ',')
			return -1;
		it->p++;
		map_ws(it);
	}
	it->first = false;
	if (map_string(it, key, IPV4_STRLEN - 1, ip_char) < 0)
		return -1;
	map_ws(it);
	if (it->p >= it->end || *it->p != ':')
		return -1;
	it->p++;
	map_ws(it);
	if (map_string(it, val, MAC_STRLEN - 1, value_char) < 0)
		return -1;
	memset(a, 0, sizeof(*a));
	if (ipv4_parse(key, &a->addr) < 0)
		return -1;
	if (ippool_alloc_value_parse(val, a) < 0)
		return -1;
	return 1;
}

static void
map_begin(struct map_iter *it, struct jscan_span map)
{
	it->p = map.p + 1; /* past '{' */
	it->end = map.p + map.len;
	it->first = true;
}

static int
cmp_alloc(const void *x, const void *y)
{
	const struct ippool_alloc *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/*
 * Parse the map into *ret (n entries, sorted, unique). Returns 1 when taken, 0 when it is
 * left to jansson (an empty map too: nothing to gain), -ENOMEM.
 */
static int
map_take(struct jscan_span map, struct ippool_alloc **ret, size_t *ret_n)
{
	struct map_iter it;
	struct ippool_alloc a, *v;
	size_t n = 0, u;
	int r;

	map_begin(&it, map);
	while ((r = map_next(&it, &a)) == 1)
		n++;
	if (r < 0 || n == 0)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	map_begin(&it, map);
	for (size_t i = 0; i < n; i++)
		map_next(&it, &v[i]);
	qsort(v, n, sizeof(*v), cmp_alloc);
	for (u = 1; u < n && v[u].addr != v[u - 1].addr; u++)
		;
	if (u < n) {
		/* Duplicate keys: keep one slot per address, then replay the text in order. */
		for (size_t i = u + 1; i < n; i++)
			if (v[i].addr != v[u - 1].addr)
				v[u++] = v[i];
		map_begin(&it, map);
		while (map_next(&it, &a) == 1) {
			struct ippool_alloc *slot = bsearch(&a, v, u, sizeof(*v), cmp_alloc);

			*slot = a;
		}
		n = u;
	}
	*ret = v;
	*ret_n = n;
	return 1;
}

/* --- 3. the rest ------------------------------------------------------------------------- */

static int
decode_json(const char *text, size_t len, struct ippool **ret, struct crd_error *err)
{
	json_error_t je;
	json_t *obj = json_loadb(text, len, 0, &je);
	int r;

	if (!obj) {
		crd_error_set(err, "", "not JSON: %s", je.text);
		return -EBADMSG;
	}
	r = ippool_decode(obj, ret, err);
	json_decref(obj);
	return r;
}

int
ippool_decode_text(const char *text, size_t len, struct ippool **ret, struct crd_error *err)
{
	struct ippool_alloc *allocs = NULL;
	struct jscan_span map;
	struct ippool *p = NULL;
	size_t n = 0, start, tail;
	json_t *obj;
	char *f;
	int r;

	if (find_map(text, len, &map) <= 0)
		return decode_json(text, len, ret, err);
	r = map_take(map, &allocs, &n);
	if (r <= 0)
		return r < 0 ? r : decode_json(text, len, ret, err);
	start = (size_t)(map.p - text);
	tail = len - start - map.len;
	f = malloc(start + 2 + tail);
	if (!f) {
		free(allocs);
		return -ENOMEM;
	}
	memcpy(f, text, start);
	memcpy(f + start, "{}", 2);
	memcpy(f + start + 2, map.p + map.len, tail);
	obj = json_loadb(f, start + 2 + tail, 0, NULL);
	free(f);
	if (!obj) { /* a number out of range, say: jansson's error on the text itself */
		free(allocs);
		return decode_json(text, len, ret, err);
	}
	r = ippool_decode(obj, &p, err);
	json_decref(obj);
	if (r < 0) {
		free(allocs);
		return r;
	}
	if (!p->status.has_ipv4) { /* cannot happen: the map was found in status.ipv4 */
		free(allocs);
		ippool_free(p);
		return decode_json(text, len, ret, err);
	}
	p->status.allocated = allocs;
	p->status.n_allocated = n;
	*ret = p;
	return 0;
}

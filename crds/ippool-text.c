/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/ippool-text.c - one IPPool's JSON text straight into struct ippool, with its
 * status.ipv4.allocated map parsed into struct ippool_alloc entries instead of a jansson tree
 * of three allocations per entry (65 000 bindings: 1.5 MiB of heap at the peak, not 9.4).
 *
 * 1. lib/jscan.h walks the object down to the map: the last "status" member of the object,
 *    its last "ipv4", its last "allocated" (jansson keeps the last of duplicate keys too),
 *    checking every other member as it skips it.
 * 2. The map is scanned with lib/jscan.h and its strings taken strictly (no escapes, keys
 *    IPv4, values MAC / EXCLUDED / RESERVED, ASCII only) into an exact-size array, sorted,
 *    one entry per address (the last in the text, as jansson keeps it). A map that does not
 *    qualify is left to jansson: the whole text then goes through json_loadb +
 *    ippool_decode, so that its error text is the same; so does a text that is not JSON.
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

/* --- the map (step 2 above) ------------------------------------------------------------ */

/*
 * The inside of a string span (with its quotes, as lib/jscan.h hands it out) into buf
 * (NUL-terminated) when it has at most max characters, each one accepted by ok. Anything
 * else (another kind of value, an escape, a control character, non-ASCII) refuses the map.
 */
static int
span_chars(struct jscan_span v, char *buf, size_t max, bool (*ok)(char))
{
	size_t n;

	if (jscan_type(v) != '"' || v.len < 2 || v.len - 2 > max)
		return -1;
	n = v.len - 2;
	for (size_t i = 0; i < n; i++) {
		if (!ok(v.p[1 + i]))
			return -1;
		buf[i] = v.p[1 + i];
	}
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

/* Next entry of the map: 1 and *a, 0 at the end (the iterator then at the span's end), -1. */
static int
map_next(struct jscan_iter *it, struct ippool_alloc *a)
{
	char key[IPV4_STRLEN], val[MAC_STRLEN];
	struct jscan_span k, v;
	int r = jscan_next(it, &k, &v);

	if (r <= 0)
		return r < 0 ? -1 : 0;
	if (span_chars(k, key, IPV4_STRLEN - 1, ip_char) < 0 ||
	    span_chars(v, val, MAC_STRLEN - 1, value_char) < 0)
		return -1;
	memset(a, 0, sizeof(*a));
	if (ipv4_parse(key, &a->addr) < 0)
		return -1;
	if (ippool_alloc_value_parse(val, a) < 0)
		return -1;
	return 1;
}

/*
 * Iteration over the map span: lib/jscan.h checks its structure (commas, colons, brackets)
 * and hands out each key and value, whose strings span_chars then checks strictly.
 */
static int
map_begin(struct jscan_iter *it, struct jscan_span map)
{
	return jscan_open_span(it, map, true);
}

static int
cmp_alloc(const void *x, const void *y)
{
	const struct ippool_alloc *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/*
 * The map at text[pos] ('{') into *ret (n entries, sorted, unique) and *end past it. Its end is
 * found first without checks (jscan_skip_fast), its commas give the number of entries, then
 * one strict pass parses them. Returns 1 when taken, 0 when it is left to jansson (an empty
 * map too: nothing to gain), -ENOMEM.
 */
static int
map_take(
    const char *text, size_t len, size_t pos, struct ippool_alloc **ret, size_t *ret_n, size_t *end)
{
	struct jscan_span map = {text + pos, jscan_skip_fast(text, len, pos) - pos};
	struct jscan_iter it;
	struct ippool_alloc a, *v;
	size_t n = 1, i = 0, u;
	const char *p = map.p, *e = map.p + map.len;

	if (map.len < 2 || e[-1] != '}')
		return 0;
	while ((p = memchr(p, ',', (size_t)(e - p))) != NULL) {
		n++;
		p++;
	}
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (map_begin(&it, map) < 0) {
		free(v);
		return 0;
	}
	while (i < n && map_next(&it, &v[i]) == 1)
		i++;
	if (i == 0 || i < n || map_next(&it, &a) != 0) {
		free(v);
		return 0;
	}
	qsort(v, n, sizeof(*v), cmp_alloc);
	for (u = 1; u < n && v[u].addr != v[u - 1].addr; u++)
		;
	if (u < n) {
		/* Duplicate keys: keep one slot per address, then replay the text in order. */
		for (size_t k = u + 1; k < n; k++)
			if (v[k].addr != v[u - 1].addr)
				v[u++] = v[k];
		(void)map_begin(&it, map); /* it opened above */
		while (map_next(&it, &a) == 1) {
			struct ippool_alloc *slot = bsearch(&a, v, u, sizeof(*v), cmp_alloc);

			*slot = a;
		}
		n = u;
	}
	*ret = v;
	*ret_n = n;
	*end = pos + map.len;
	return 1;
}

/* --- finding the map (step 1) ---------------------------------------------------------- */

/* The last status.ipv4.allocated seen so far, when taken. */
struct found {
	size_t start, end; /* its span */
	struct ippool_alloc *allocs;
	size_t n;
};

static void
found_clear(struct found *f)
{
	free(f->allocs);
	f->allocs = NULL;
	f->n = 0;
}

static const char *const path_keys[] = {"status", "ipv4", "allocated"};

/*
 * The object at text[pos] on the path (level 0: the root, 1: status, 2: ipv4), checked as it
 * goes except for a map taken (parsed strictly instead). jansson keeps the last of duplicate
 * keys, so a key of the path met again clears what was found under its earlier value.
 * 0 with *end past the object, -EBADMSG, -ENOMEM.
 */
static int
walk(const char *text, size_t len, size_t pos, unsigned level, struct found *f, size_t *end)
{
	struct jscan_iter it;
	struct jscan_span k, v;
	int r;

	if ((level == 0 ? jscan_open(&it, text, len, true)
			: jscan_open_at(&it, text, len, pos, true)) < 0)
		return -EBADMSG;
	while ((r = jscan_next_key(&it, &k)) == 1) {
		bool on_path = jscan_key_is(k, path_keys[level]);
		size_t at = it.pos, e;

		if (on_path)
			found_clear(f);
		if (on_path && at < len && text[at] == '{') {
			if (level < 2) {
				r = walk(text, len, at, level + 1, f, &e);
				if (r < 0)
					return r;
				it.pos = e;
				continue;
			}
			r = map_take(text, len, at, &f->allocs, &f->n, &e);
			if (r < 0)
				return r;
			if (r > 0) {
				f->start = at;
				f->end = e;
				it.pos = e;
				continue;
			}
		}
		if (jscan_next_value(&it, &v) < 0)
			return -EBADMSG;
	}
	if (r < 0)
		return -EBADMSG;
	*end = it.pos;
	return 0;
}

/* --- the rest (step 3) ----------------------------------------------------------------- */

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
	struct found f = {0};
	struct ippool *p = NULL;
	size_t end, tail;
	json_t *obj;
	char *c;
	int r;

	r = walk(text, len, 0, 0, &f, &end);
	if (r == -ENOMEM) {
		found_clear(&f);
		return r;
	}
	if (r < 0 || !f.allocs) {
		found_clear(&f);
		return decode_json(text, len, ret, err);
	}
	tail = len - f.end;
	c = malloc(f.start + 2 + tail);
	if (!c) {
		found_clear(&f);
		return -ENOMEM;
	}
	memcpy(c, text, f.start);
	memcpy(c + f.start, "{}", 2);
	memcpy(c + f.start + 2, text + f.end, tail);
	obj = json_loadb(c, f.start + 2 + tail, 0, NULL);
	free(c);
	if (!obj) { /* a number out of range, say: jansson's error on the text itself */
		found_clear(&f);
		return decode_json(text, len, ret, err);
	}
	r = ippool_decode(obj, &p, err);
	json_decref(obj);
	if (r < 0) {
		found_clear(&f);
		return r;
	}
	if (!p->status.has_ipv4) { /* cannot happen: the map was found in status.ipv4 */
		found_clear(&f);
		ippool_free(p);
		return decode_json(text, len, ret, err);
	}
	p->status.allocated = f.allocs;
	p->status.n_allocated = f.n;
	*ret = p;
	return 0;
}

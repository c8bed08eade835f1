/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/ippool-text.c - one IPPool's JSON text straight into struct ippool, with its
 * status.ipv4.allocated and status.ipv6.allocated maps parsed into struct ippool_alloc and
 * ippool_alloc6 entries instead of a jansson tree of three allocations per entry (65 000
 * bindings: 1.5 MiB of heap at the peak, not 9.4).
 *
 * 1. lib/jscan.h walks the object down to the maps: the last "status" member of the object,
 *    its last "ipv4" and "ipv6", their last "allocated" (jansson keeps the last of duplicate
 *    keys too), checking every other member as it skips it.
 * 2. A map is scanned with lib/jscan.h and its strings taken strictly (no escapes, keys IPv4,
 *    or IPv6 in RFC 5952 form, values MAC / EXCLUDED / RESERVED, ASCII only) into an
 *    exact-size array, sorted, one entry per address (the last in the text, as jansson keeps
 *    it). A map that does not qualify is left to jansson: with none taken the whole text goes
 *    through json_loadb + ippool_decode, so that its error text is the same; so does a text
 *    that is not JSON.
 * 3. json_loadb builds the rest: a copy of the text with the maps taken replaced by "{}".
 *    ippool_decode runs on that tree and the entries become status.allocated and
 *    status.allocated6.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crds/crds-internal.h"
#include "crds/ippool.h"
#include "lib/ip6.h"
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
ip6_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == ':' || c == '.';
}

static bool
value_char(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       c == ':' || c == '-' || c == '.';
}

static int
parse4(const char *key, const char *val, void *entry)
{
	struct ippool_alloc *a = entry;

	memset(a, 0, sizeof(*a));
	if (ipv4_parse(key, &a->addr) < 0 || ippool_alloc_value_parse(val, a) < 0)
		return -1;
	return 0;
}

/*
 * A key in RFC 5952 form only (what the encoder writes): then two keys of one address are the
 * same text, and the last one wins as in jansson. Another form goes through jansson, whose
 * decoder reads it and refuses one address in two forms.
 */
static int
parse6(const char *key, const char *val, void *entry)
{
	struct ippool_alloc6 *e = entry;
	struct ippool_alloc a = {0};
	char canon[IPV6_STRLEN];

	memset(e, 0, sizeof(*e));
	if (ipv6_parse(key, &e->addr) < 0)
		return -1;
	ipv6_format(&e->addr, canon);
	if (strcmp(canon, key) != 0 || ippool_alloc_value_parse(val, &a) < 0)
		return -1;
	e->kind = a.kind;
	memcpy(e->mac, a.mac, MAC_LEN);
	return 0;
}

static int
cmp4(const void *x, const void *y)
{
	const struct ippool_alloc *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int
cmp6(const void *x, const void *y)
{
	return ipv6_cmp(
	    &((const struct ippool_alloc6 *)x)->addr, &((const struct ippool_alloc6 *)y)->addr);
}

/* status.ipv4.allocated and status.ipv6.allocated: their entries and how to read them. */
struct family {
	const char *key; /* the member of status */
	size_t size;	 /* of one entry */
	size_t key_max;
	bool (*key_char)(char);
	int (*parse)(const char *key, const char *val, void *entry); /* 0 or -1 */
	int (*cmp)(const void *, const void *);
};

static const struct family families[2] = {
    {"ipv4", sizeof(struct ippool_alloc), IPV4_STRLEN - 1, ip_char, parse4, cmp4},
    {"ipv6", sizeof(struct ippool_alloc6), IPV6_STRLEN - 1, ip6_char, parse6, cmp6},
};

/* Next entry of the map: 1 and *entry, 0 at the end (the iterator then at the span's end), -1. */
static int
map_next(struct jscan_iter *it, const struct family *fam, void *entry)
{
	char key[IPV6_STRLEN], val[MAC_STRLEN];
	struct jscan_span k, v;
	int r = jscan_next(it, &k, &v);

	if (r <= 0)
		return r < 0 ? -1 : 0;
	if (span_chars(k, key, fam->key_max, fam->key_char) < 0 ||
	    span_chars(v, val, MAC_STRLEN - 1, value_char) < 0)
		return -1;
	return fam->parse(key, val, entry) < 0 ? -1 : 1;
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

/* Sorted v[0..n) down to one entry per address, each the last of its address in the text. */
static size_t
map_unique(
    struct jscan_iter *it, struct jscan_span map, const struct family *fam, char *v, size_t n)
{
	union {
		struct ippool_alloc a4;
		struct ippool_alloc6 a6;
	} a;
	size_t u, sz = fam->size;

	for (u = 1; u < n && fam->cmp(v + u * sz, v + (u - 1) * sz) != 0; u++)
		;
	if (u == n)
		return n;
	/* Duplicate keys: keep one slot per address, then replay the text in order. */
	for (size_t k = u + 1; k < n; k++)
		if (fam->cmp(v + k * sz, v + (u - 1) * sz) != 0)
			memcpy(v + u++ * sz, v + k * sz, sz);
	(void)map_begin(it, map); /* it opened before */
	while (map_next(it, fam, &a) == 1)
		memcpy(bsearch(&a, v, u, sz, fam->cmp), &a, sz);
	return u;
}

/*
 * The map at text[pos] ('{') into *ret (n entries, sorted, unique) and *end past it. Its end is
 * found first without checks (jscan_skip_fast), its commas give the number of entries, then
 * one strict pass parses them. Returns 1 when taken, 0 when it is left to jansson (an empty
 * map too: nothing to gain), -ENOMEM.
 */
static int
map_take(const char *text, size_t len, size_t pos, const struct family *fam, void **ret,
    size_t *ret_n, size_t *end)
{
	struct jscan_span map = {text + pos, jscan_skip_fast(text, len, pos) - pos};
	struct jscan_iter it;
	union {
		struct ippool_alloc a4;
		struct ippool_alloc6 a6;
	} a;
	size_t n = 1, i = 0;
	const char *p = map.p, *e = map.p + map.len;
	char *v;

	if (map.len < 2 || e[-1] != '}')
		return 0;
	while ((p = memchr(p, ',', (size_t)(e - p))) != NULL) {
		n++;
		p++;
	}
	v = malloc(n * fam->size);
	if (!v)
		return -ENOMEM;
	if (map_begin(&it, map) < 0) {
		free(v);
		return 0;
	}
	while (i < n && map_next(&it, fam, v + i * fam->size) == 1)
		i++;
	if (i == 0 || i < n || map_next(&it, fam, &a) != 0) {
		free(v);
		return 0;
	}
	qsort(v, n, fam->size, fam->cmp);
	*ret = v;
	*ret_n = map_unique(&it, map, fam, v, n);
	*end = pos + map.len;
	return 1;
}

/* --- finding the maps (step 1) --------------------------------------------------------- */

/* The last status.ipv4.allocated and status.ipv6.allocated seen so far, when taken. */
struct found {
	size_t start, end; /* its span */
	void *allocs;
	size_t n;
};

static void
found_clear(struct found *f)
{
	free(f->allocs);
	f->allocs = NULL;
	f->n = 0;
}

/*
 * The object at text[pos] on the path (level 0: the root, 1: status, 2: status.ipv4 or
 * status.ipv6, family fam), checked as it goes except for a map taken (parsed strictly
 * instead). jansson keeps the last of duplicate keys, so a key of the path met again clears
 * what was found under its earlier value. f[0] is ipv4's map, f[1] ipv6's.
 * 0 with *end past the object, -EBADMSG, -ENOMEM.
 */
static int
walk(const char *text, size_t len, size_t pos, unsigned level, unsigned fam, struct found *f,
    size_t *end)
{
	struct jscan_iter it;
	struct jscan_span k, v;
	int r;

	if ((level == 0 ? jscan_open(&it, text, len, true)
			: jscan_open_at(&it, text, len, pos, true)) < 0)
		return -EBADMSG;
	while ((r = jscan_next_key(&it, &k)) == 1) {
		size_t at = it.pos, e;
		int on = -1; /* the family of the key on the path, 2 for both */

		if (level == 0 && jscan_key_is(k, "status"))
			on = 2;
		else if (level == 1 && jscan_key_is(k, "ipv4"))
			on = 0;
		else if (level == 1 && jscan_key_is(k, "ipv6"))
			on = 1;
		else if (level == 2 && jscan_key_is(k, "allocated"))
			on = (int)fam;
		if (on == 0 || on == 2)
			found_clear(&f[0]);
		if (on == 1 || on == 2)
			found_clear(&f[1]);
		if (on >= 0 && at < len && text[at] == '{') {
			if (level < 2) {
				r = walk(
				    text, len, at, level + 1, on == 2 ? 0 : (unsigned)on, f, &e);
				if (r < 0)
					return r;
				it.pos = e;
				continue;
			}
			r = map_take(text, len, at, &families[on], &f[on].allocs, &f[on].n, &e);
			if (r < 0)
				return r;
			if (r > 0) {
				f[on].start = at;
				f[on].end = e;
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

/* A copy of text with the spans of the maps taken replaced by "{}" (f: ordered by start). */
static char *
text_without(const char *text, size_t len, struct found *const *f, size_t n_f, size_t *ret_len)
{
	char *c = malloc(len + 2 * n_f), *o = c;
	size_t from = 0;

	if (!c)
		return NULL;
	for (size_t i = 0; i < n_f; i++) {
		memcpy(o, text + from, f[i]->start - from);
		o += f[i]->start - from;
		memcpy(o, "{}", 2);
		o += 2;
		from = f[i]->end;
	}
	memcpy(o, text + from, len - from);
	*ret_len = (size_t)(o - c) + len - from;
	return c;
}

int
ippool_decode_text(const char *text, size_t len, struct ippool **ret, struct crd_error *err)
{
	struct found f[2] = {{0}, {0}};
	struct found *taken[2];
	struct ippool *p = NULL;
	size_t end, n_taken = 0, clen;
	json_t *obj;
	char *c;
	int r;

	r = walk(text, len, 0, 0, 0, f, &end);
	for (size_t i = 0; r == 0 && i < 2; i++)
		if (f[i].allocs)
			taken[n_taken++] = &f[i];
	if (r < 0 || n_taken == 0) {
		found_clear(&f[0]);
		found_clear(&f[1]);
		return r == -ENOMEM ? r : decode_json(text, len, ret, err);
	}
	if (n_taken == 2 && taken[0]->start > taken[1]->start) {
		taken[0] = &f[1];
		taken[1] = &f[0];
	}
	c = text_without(text, len, taken, n_taken, &clen);
	obj = c ? json_loadb(c, clen, 0, NULL) : NULL;
	free(c);
	if (!obj) { /* a number out of range, say: jansson's error on the text itself */
		found_clear(&f[0]);
		found_clear(&f[1]);
		return c ? decode_json(text, len, ret, err) : -ENOMEM;
	}
	r = ippool_decode(obj, &p, err);
	json_decref(obj);
	/* cannot fail: the maps were found in status.ipv4 / status.ipv6 */
	if (r == 0 &&
	    ((f[0].allocs && !p->status.has_ipv4) || (f[1].allocs && !p->status.has_ipv6_status))) {
		p = ippool_free(p);
		r = 1;
	}
	if (r != 0) {
		found_clear(&f[0]);
		found_clear(&f[1]);
		return r < 0 ? r : decode_json(text, len, ret, err);
	}
	if (f[0].allocs) {
		p->status.allocated = f[0].allocs;
		p->status.n_allocated = f[0].n;
	}
	if (f[1].allocs) {
		p->status.allocated6 = f[1].allocs;
		p->status.n_allocated6 = f[1].n;
	}
	*ret = p;
	return 0;
}

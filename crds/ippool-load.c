/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/ippool-load.c - json_loadb for IPPool texts that parses each status.ipv4.allocated map
 * straight into struct ippool_alloc entries (IPPOOL_ALLOCATED_PACKED) instead of a jansson
 * tree of three allocations per entry.
 *
 * 1. A shallow, strict scan of the root object walks only the paths that lead to a map
 *    (root / root.object / root.items[i], then status, ipv4, allocated) and records each
 *    map's span; every other value is skipped without recursion (strings, escapes and
 *    bracket nesting counted). An object on those paths with a key spelled with an escape
 *    (it could alias a recognised key), a recognised key twice, or a packed member of its
 *    own gives up the maps found inside it.
 * 2. Each recorded map is parsed strictly (no escapes, keys IPv4, values MAC / EXCLUDED /
 *    RESERVED, ASCII only) into an exact-size array; a map that does not qualify stays in
 *    the text for jansson.
 * 3. json_loadb validates and builds the rest: a copy of the text without the taken maps
 *    (each becomes "{}"). The entries are then attached beside each "{}". When that copy
 *    does not parse, or anything does not line up, the original text goes to json_loadb.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crds/crds-internal.h"
#include "crds/ippool.h"
#include "lib/util.h"

#define CAND_ROOT (-2L)
#define CAND_OBJECT (-1L)

struct span {
	size_t start, end; /* the map's "{ ... }": text[start] == '{', text[end - 1] == '}' */
	long cand;	   /* CAND_ROOT, CAND_OBJECT, or the index in root.items */
	struct ippool_alloc *allocs;
	size_t n;
};

struct scan {
	const char *text;
	size_t len, pos;
	struct span *spans;
	size_t n_spans, cap;
	bool oom;
};

/* Objects on the paths to a map, and the keys recognised in each. */
enum level { L_ROOT, L_CAND, L_STATUS, L_IPV4 };

enum action {
	A_STATUS,    /* value: a status object */
	A_OBJECT,    /* value: the watch event's object (a candidate) */
	A_ITEMS,     /* value: an array of candidates */
	A_IPV4,	     /* value: status.ipv4 */
	A_ALLOCATED, /* value: the map */
	A_PACKED,    /* an IPPOOL_ALLOCATED_PACKED of the text's own: give up this object */
};

struct key_rule {
	const char *key;
	enum action action;
};

#define MAX_RULES 3
static const struct key_rule level_rules[][MAX_RULES + 1] = {
    [L_ROOT] = {{"status", A_STATUS}, {"object", A_OBJECT}, {"items", A_ITEMS}, {NULL, 0}},
    [L_CAND] = {{"status", A_STATUS}, {NULL, 0}},
    [L_STATUS] = {{"ipv4", A_IPV4}, {NULL, 0}},
    [L_IPV4] = {{"allocated", A_ALLOCATED}, {IPPOOL_ALLOCATED_PACKED, A_PACKED}, {NULL, 0}},
};

/* --- lexical helpers ------------------------------------------------------------------ */

static bool
is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void
skip_ws(struct scan *s)
{
	while (s->pos < s->len && is_ws(s->text[s->pos]))
		s->pos++;
}

static int
peek(const struct scan *s)
{
	return s->pos < s->len ? (unsigned char)s->text[s->pos] : -1;
}

/* At '"': move past the closing quote. *escaped tells whether a backslash occurred. */
static int
skip_string(struct scan *s, bool *escaped)
{
	*escaped = false;
	for (s->pos++; s->pos < s->len; s->pos++) {
		char c = s->text[s->pos];

		if (c == '\\') {
			*escaped = true;
			s->pos++;
		} else if (c == '"') {
			s->pos++;
			return 0;
		}
	}
	return -1;
}

/*
 * Skip one value without recursion. Brackets are only counted (a mismatch goes unnoticed
 * here; json_loadb refuses the text later, since skipped text is kept as it is).
 */
static int
skip_value(struct scan *s)
{
	size_t depth = 0, start = s->pos;
	bool esc;

	for (;;) {
		int c = peek(s);

		if (c < 0)
			return -1;
		if (c == '"') {
			if (skip_string(s, &esc) < 0)
				return -1;
		} else if (c == '{' || c == '[') {
			depth++;
			s->pos++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				return s->pos > start ? 0 : -1;
			depth--;
			s->pos++;
		} else if (depth == 0 && (c == ',' || c == ':' || is_ws((char)c))) {
			return s->pos > start ? 0 : -1;
		} else {
			s->pos++;
		}
		if (depth == 0 && (c == '"' || c == '}' || c == ']'))
			return 0;
	}
}

static int
push_span(struct scan *s, size_t start, size_t end, long cand)
{
	if (s->n_spans == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 8;
		struct span *v = realloc(s->spans, cap * sizeof(*v));

		if (!v) {
			s->oom = true;
			return -1;
		}
		s->spans = v;
		s->cap = cap;
	}
	s->spans[s->n_spans++] = (struct span){.start = start, .end = end, .cand = cand};
	return 0;
}

/* --- 1. the shallow scan ---------------------------------------------------------------- */

static int scan_object(struct scan *s, enum level level, long cand);

static int
scan_items(struct scan *s)
{
	long i = 0;

	s->pos++; /* '[' */
	skip_ws(s);
	if (peek(s) == ']') {
		s->pos++;
		return 0;
	}
	for (;; i++) {
		skip_ws(s);
		if (peek(s) == '{' ? scan_object(s, L_CAND, i) < 0 : skip_value(s) < 0)
			return -1;
		skip_ws(s);
		if (peek(s) == ']') {
			s->pos++;
			return 0;
		}
		if (peek(s) != ',')
			return -1;
		s->pos++;
	}
}

static int
scan_member_value(struct scan *s, enum action action, long cand)
{
	size_t start = s->pos;
	int c = peek(s);

	switch (action) {
	case A_STATUS:
		return c == '{' ? scan_object(s, L_STATUS, cand) : skip_value(s);
	case A_OBJECT:
		return c == '{' ? scan_object(s, L_CAND, CAND_OBJECT) : skip_value(s);
	case A_ITEMS:
		return c == '[' ? scan_items(s) : skip_value(s);
	case A_IPV4:
		return c == '{' ? scan_object(s, L_IPV4, cand) : skip_value(s);
	case A_ALLOCATED:
		if (skip_value(s) < 0)
			return -1;
		return c == '{' ? push_span(s, start, s->pos, cand) : 0;
	case A_PACKED:
		return skip_value(s);
	}
	return -1;
}

/*
 * At '{' of an object on a path to a map (bounded depth: root, object or items[i], status,
 * ipv4). Returns 0 at the closing brace's successor, -1 when the text is not JSON here or
 * without memory.
 */
static int
scan_object(struct scan *s, enum level level, long cand)
{
	const struct key_rule *rules = level_rules[level];
	unsigned seen[MAX_RULES] = {0};
	size_t mark = s->n_spans;
	bool give_up = false, esc;

	s->pos++; /* '{' */
	skip_ws(s);
	if (peek(s) == '}') {
		s->pos++;
		return 0;
	}
	for (;;) {
		const struct key_rule *rule = NULL;
		size_t key, key_len;

		skip_ws(s);
		if (peek(s) != '"')
			return -1;
		key = s->pos + 1;
		if (skip_string(s, &esc) < 0)
			return -1;
		key_len = s->pos - 1 - key;
		if (esc)
			give_up = true;
		for (size_t i = 0; !esc && rules[i].key; i++)
			if (strlen(rules[i].key) == key_len &&
			    memcmp(rules[i].key, s->text + key, key_len) == 0) {
				rule = &rules[i];
				if (seen[i]++ || rule->action == A_PACKED)
					give_up = true;
			}
		skip_ws(s);
		if (peek(s) != ':')
			return -1;
		s->pos++;
		skip_ws(s);
		if (rule ? scan_member_value(s, rule->action, cand) < 0 : skip_value(s) < 0)
			return -1;
		skip_ws(s);
		if (peek(s) == '}') {
			s->pos++;
			break;
		}
		if (peek(s) != ',')
			return -1;
		s->pos++;
	}
	if (give_up)
		s->n_spans = mark;
	return 0;
}

/* --- 2. the maps ------------------------------------------------------------------------ */

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
map_begin(struct map_iter *it, const char *text, const struct span *sp)
{
	it->p = text + sp->start + 1; /* past '{' */
	it->end = text + sp->end;
	it->first = true;
}

static int
cmp_alloc(const void *x, const void *y)
{
	const struct ippool_alloc *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/*
 * Parse the span's map into sp->allocs. Returns 1 when taken, 0 when it is left to jansson
 * (sp->allocs NULL), -ENOMEM.
 */
static int
map_take(const char *text, struct span *sp, size_t flags)
{
	struct map_iter it;
	struct ippool_alloc a, *v;
	size_t n = 0, u;
	int r;

	map_begin(&it, text, sp);
	while ((r = map_next(&it, &a)) == 1)
		n++;
	if (r < 0 || n == 0)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	map_begin(&it, text, sp);
	for (size_t i = 0; i < n; i++)
		map_next(&it, &v[i]);
	qsort(v, n, sizeof(*v), cmp_alloc);
	for (u = 1; u < n && v[u].addr != v[u - 1].addr; u++)
		;
	if (u < n) {
		/* Duplicate keys: keep one slot per address, then replay the text in order. */
		if (flags & JSON_REJECT_DUPLICATES) {
			free(v);
			return 0; /* jansson refuses them */
		}
		for (size_t i = u + 1; i < n; i++)
			if (v[i].addr != v[u - 1].addr)
				v[u++] = v[i];
		map_begin(&it, text, sp);
		while (map_next(&it, &a) == 1) {
			struct ippool_alloc *slot = bsearch(&a, v, u, sizeof(*v), cmp_alloc);

			*slot = a;
		}
		n = u;
	}
	sp->allocs = v;
	sp->n = n;
	return 1;
}

/* --- 3. load and attach ----------------------------------------------------------------- */

static json_t *
candidate(json_t *root, long cand)
{
	if (cand == CAND_ROOT)
		return root;
	if (cand == CAND_OBJECT)
		return json_object_get(root, "object");
	return json_array_get(json_object_get(root, "items"), (size_t)cand);
}

/* Put sp's entries beside the "{}" that replaced its map. 0, or -1 when it does not line up. */
static int
attach(json_t *root, const struct span *sp)
{
	json_t *ipv4 =
	    json_object_get(json_object_get(candidate(root, sp->cand), "status"), "ipv4");
	json_t *alloc = json_object_get(ipv4, "allocated"), *packed;

	if (!json_is_object(alloc) || json_object_size(alloc) != 0 ||
	    json_object_get(ipv4, IPPOOL_ALLOCATED_PACKED))
		return -1;
	packed = json_stringn_nocheck((const char *)sp->allocs, sp->n * sizeof(*sp->allocs));
	return json_object_set_new(ipv4, IPPOOL_ALLOCATED_PACKED, packed);
}

static json_t *
load_filtered(const char *text, size_t len, const struct span *spans, size_t n, size_t flags,
    json_error_t *error)
{
	size_t removed = 0, o = 0, from = 0;
	json_t *root;
	char *f;

	for (size_t i = 0; i < n; i++)
		removed += spans[i].end - spans[i].start - 2;
	f = malloc(len - removed);
	if (!f)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		memcpy(f + o, text + from, spans[i].start - from);
		o += spans[i].start - from;
		f[o++] = '{';
		f[o++] = '}';
		from = spans[i].end;
	}
	memcpy(f + o, text + from, len - from);
	o += len - from;
	root = json_loadb(f, o, flags, error);
	free(f);
	if (root && error)
		error->position += (int)removed; /* the position reached lies past every map */
	return root;
}

json_t *
ippool_json_loadb(const char *text, size_t len, size_t flags, json_error_t *error)
{
	struct scan s = {.text = text, .len = len};
	json_t *root = NULL;
	size_t n = 0;
	int r = 0;

	skip_ws(&s);
	if (peek(&s) == '{' && scan_object(&s, L_ROOT, CAND_ROOT) < 0)
		s.n_spans = 0;
	for (size_t i = 0; i < s.n_spans && r >= 0; i++) {
		r = map_take(text, &s.spans[i], flags);
		if (r > 0)
			s.spans[n++] = s.spans[i];
	}
	if (r >= 0 && n > 0) {
		root = load_filtered(text, len, s.spans, n, flags, error);
		for (size_t i = 0; i < n; i++) {
			if (root && attach(root, &s.spans[i]) < 0) {
				json_decref(root);
				root = NULL;
			}
			free(s.spans[i].allocs);
			s.spans[i].allocs = NULL;
		}
	} else {
		for (size_t i = 0; i < n; i++)
			free(s.spans[i].allocs);
	}
	free(s.spans);
	if (!root)
		root = json_loadb(text, len, flags, error);
	return root;
}

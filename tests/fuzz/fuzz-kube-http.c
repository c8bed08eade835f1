/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the incremental HTTP/1.1 response parser (kube/http-parse.c). The first
 * byte picks the piece size (1..128) and whether the answers are to a HEAD; the rest is what
 * a server sends, possibly several pipelined answers: after a completed answer the leftover
 * is parsed as the next one, and the end of input is the end of the connection.
 *
 * The input is parsed three times (in the chosen pieces, whole, one byte at a time) and the
 * answers must agree; invariants are checked after every call. A violation traps.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kube/kube-internal.h"

#define MAX_ANSWERS 32
#define MAX_HEADER (64u << 10)

struct answer {
	long status;
	bool keep_alive, done;
	uint64_t body_bytes, hash;
	size_t used; /* bytes of the input this answer took */
};

struct run {
	struct answer a[MAX_ANSWERS + 1]; /* the completed answers, then the last partial one */
	size_t n;			  /* completed answers (also those not stored) */
	int end;			  /* -EBADMSG, or kube_http_parse_eof's result */
	bool started;			  /* the last answer had begun when the input ended */
};

struct body_ctx {
	uint64_t bytes, hash;
};

static bool
on_body(void *userdata, const char *data, size_t len)
{
	struct body_ctx *c = userdata;

	if (len == 0)
		__builtin_trap(); /* empty pieces are never handed out */
	c->bytes += len;
	for (size_t i = 0; i < len; i++) /* FNV-1a: the same whatever the pieces */
		c->hash = (c->hash ^ (uint8_t)data[i]) * 0x100000001b3ull;
	return true;
}

static bool
no_body_status(const struct kube_http_parser *p)
{
	return p->head_request || p->status == 204 || p->status == 304;
}

/* Checks what holds after every call, whatever the input. */
static void
check_parser(const struct kube_http_parser *p, const struct body_ctx *c)
{
	if (c->bytes != p->body_bytes)
		__builtin_trap();
	if (p->header_bytes > MAX_HEADER)
		__builtin_trap();
	if (p->body_bytes && (!p->header_done || no_body_status(p)))
		__builtin_trap();
	if (p->status != 0 && (p->status < 100 || p->status > 999))
		__builtin_trap();
	if (p->header_done && p->status < 200)
		__builtin_trap();
	if (p->line_len >= p->line_cap && p->line_cap)
		__builtin_trap();
}

static void
record(struct run *r, const struct kube_http_parser *p, const struct body_ctx *c, size_t used,
    size_t slot)
{
	struct answer *a = &r->a[slot];

	a->status = p->status;
	a->keep_alive = p->keep_alive;
	a->done = kube_http_parser_done(p);
	a->body_bytes = c->bytes;
	a->hash = c->hash;
	a->used = used;
}

static void
run(const uint8_t *data, size_t size, size_t piece, bool head, struct run *r)
{
	struct kube_http_parser p = {0};
	struct body_ctx c = {0, 0xcbf29ce484222325ull};
	size_t off = 0, used = 0;
	bool length_known = false, has_length = false;
	uint64_t length = 0;

	memset(r, 0, sizeof(*r));
	kube_http_parser_init(&p, head);
	while (off < size) {
		size_t n = size - off < piece ? size - off : piece;
		ssize_t k = kube_http_parse(&p, (const char *)data + off, n, on_body, &c);

		if (k < 0) {
			if (k != -EBADMSG)
				__builtin_trap();
			r->end = (int)k;
			break;
		}
		if ((size_t)k > n)
			__builtin_trap();
		check_parser(&p, &c);
		used += (size_t)k;
		if (p.header_done && !length_known) {
			/* Content-Length left plus what was delivered: the field's value */
			length_known = true;
			has_length = p.has_length;
			length = p.length + p.body_bytes;
		}
		if (!kube_http_parser_done(&p)) {
			if ((size_t)k != n)
				__builtin_trap(); /* bytes left, answer not complete */
			off += n;
			continue;
		}
		/* A completed answer: check its framing, then parse the rest as the next one. */
		if (k == 0 && used == 0)
			__builtin_trap(); /* a fresh parser must take bytes */
		if (no_body_status(&p) && p.body_bytes)
			__builtin_trap();
		if (has_length && !no_body_status(&p) &&
		    (p.body_bytes != length || p.length != 0 || !p.has_length))
			__builtin_trap();
		if (kube_http_parse(&p, "X", 1, on_body, &c) != 0)
			__builtin_trap(); /* a finished answer takes no more bytes */
		record(r, &p, &c, used, r->n < MAX_ANSWERS ? r->n : MAX_ANSWERS);
		r->n++;
		off += (size_t)k;
		used = 0;
		length_known = has_length = false;
		c.bytes = 0;
		c.hash = 0xcbf29ce484222325ull;
		kube_http_parser_init(&p, head);
		if (kube_http_parser_started(&p) || kube_http_parser_done(&p))
			__builtin_trap();
	}
	if (r->end == 0) {
		r->started = kube_http_parser_started(&p);
		r->end = kube_http_parse_eof(&p);
		if (r->end != 0 && r->end != -EIO)
			__builtin_trap();
		if (r->end == 0 && (!kube_http_parser_done(&p) || p.keep_alive || !r->started))
			__builtin_trap(); /* only a body read to close ends with the connection */
		if (r->end == -EIO && kube_http_parser_done(&p))
			__builtin_trap();
	}
	record(r, &p, &c, used, r->n < MAX_ANSWERS ? r->n : MAX_ANSWERS);
	kube_http_parser_release(&p);
	if (p.line)
		__builtin_trap();
}

static void
same_runs(const struct run *x, const struct run *y)
{
	size_t n = (x->n < MAX_ANSWERS ? x->n : MAX_ANSWERS) + 1;

	if (x->n != y->n || x->end != y->end || x->started != y->started)
		__builtin_trap();
	for (size_t i = 0; i < n; i++) {
		const struct answer *a = &x->a[i], *b = &y->a[i];

		if (a->status != b->status || a->keep_alive != b->keep_alive ||
		    a->done != b->done || a->body_bytes != b->body_bytes || a->hash != b->hash)
			__builtin_trap();
		/* bytes used match but for the last, partial answer cut by an error */
		if (a->used != b->used && (i + 1 < n || x->end != -EBADMSG))
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run pieces, whole, bytes;
	size_t piece;
	bool head;

	if (size < 1)
		return 0;
	head = data[0] & 1;
	piece = (size_t)(data[0] >> 1) + 1;
	data++;
	size--;
	run(data, size, piece, head, &pieces);
	run(data, size, SIZE_MAX, head, &whole);
	run(data, size, 1, head, &bytes);
	same_runs(&whole, &pieces);
	same_runs(&whole, &bytes);
	return 0;
}

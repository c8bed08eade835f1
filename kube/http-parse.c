/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Incremental HTTP/1.1 response parser (RFC 9112) for kube/http-mbedtls.c: status line,
 * header fields, then the body framed by Transfer-Encoding: chunked, Content-Length, or the
 * end of the connection. Bytes arrive in pieces of any size; body bytes are handed to a
 * callback de-chunked, without copying. Only what a client of the Kubernetes API needs is
 * read from the header (status, framing, Connection); other fields are skipped.
 *
 * Everything the server sends is bounded: one header line and the whole header (64 KiB),
 * chunk-size lines (1 KiB), Content-Length and chunk sizes (2^62).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "kube/kube-internal.h"

#define MAX_HEADER (64u << 10)
#define MAX_CHUNK_LINE 1024u
#define MAX_SIZE ((uint64_t)1 << 62)

enum {
	ST_STATUS,
	ST_HEADER,
	ST_BODY_LENGTH,
	ST_BODY_EOF,
	ST_CHUNK_SIZE,
	ST_CHUNK_DATA,
	ST_CHUNK_CRLF,
	ST_TRAILER,
	ST_DONE,
};

/* p is zeroed or was initialised before (its line buffer is freed). */
void
kube_http_parser_init(struct kube_http_parser *p, bool head_request)
{
	free(p->line);
	memset(p, 0, sizeof(*p));
	p->head_request = head_request;
}

void
kube_http_parser_release(struct kube_http_parser *p)
{
	free(p->line);
	p->line = NULL;
	p->line_len = p->line_cap = 0;
}

bool
kube_http_parser_done(const struct kube_http_parser *p)
{
	return p->state == ST_DONE;
}

bool
kube_http_parser_started(const struct kube_http_parser *p)
{
	/* header_bytes counts complete lines: an interim answer or a stray line end */
	return p->state != ST_STATUS || p->line_len > 0 || p->header_bytes > 0;
}

/* Appends to the line under construction; -EBADMSG past max. */
static int
line_add(struct kube_http_parser *p, const char *data, size_t len, size_t max)
{
	if (p->line_len + len + 1 > max)
		return -EBADMSG;
	if (p->line_len + len + 1 > p->line_cap) {
		size_t cap = p->line_cap ? p->line_cap : 256;
		char *n;

		while (cap < p->line_len + len + 1)
			cap *= 2;
		n = realloc(p->line, cap);
		if (!n)
			return -ENOMEM;
		p->line = n;
		p->line_cap = cap;
	}
	memcpy(p->line + p->line_len, data, len);
	p->line_len += len;
	p->line[p->line_len] = '\0';
	return 0;
}

/* Decimal without sign or spaces, < MAX_SIZE. */
static int
parse_decimal(const char *s, size_t len, uint64_t *ret)
{
	uint64_t v = 0;

	if (len == 0)
		return -EBADMSG;
	for (size_t i = 0; i < len; i++) {
		uint64_t d;

		if (s[i] < '0' || s[i] > '9')
			return -EBADMSG;
		d = (uint64_t)(s[i] - '0');
		if (v > (MAX_SIZE - 1 - d) / 10)
			return -EBADMSG; /* checked before multiplying: no wrap-around */
		v = v * 10 + d;
	}
	*ret = v;
	return 0;
}

static int
parse_status_line(struct kube_http_parser *p, const char *l, size_t len)
{
	long status;

	/* HTTP/1.x SP 3DIGIT [SP reason] */
	if (len < 12 || memcmp(l, "HTTP/1.", 7) != 0 || (l[7] != '0' && l[7] != '1') || l[8] != ' ')
		return -EBADMSG;
	for (int i = 9; i < 12; i++)
		if (l[i] < '0' || l[i] > '9')
			return -EBADMSG;
	if (len > 12 && l[12] != ' ')
		return -EBADMSG;
	status = (l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0');
	if (status < 100)
		return -EBADMSG;
	p->status = status;
	p->keep_alive = l[7] == '1'; /* HTTP/1.0 closes unless told otherwise; we never ask */
	return 0;
}

static bool
token_in_list(const char *v, size_t len, const char *token)
{
	size_t tl = strlen(token);

	for (size_t i = 0; i < len;) {
		size_t j;

		while (i < len && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		j = i;
		while (j < len && v[j] != ',')
			j++;
		/* trim the element's trailing whitespace */
		size_t e = j;
		while (e > i && (v[e - 1] == ' ' || v[e - 1] == '\t'))
			e--;
		if (e - i == tl && strncasecmp(v + i, token, tl) == 0)
			return true;
		i = j;
	}
	return false;
}

/* The last transfer coding of a Transfer-Encoding value is chunked. */
static bool
ends_chunked(const char *v, size_t len)
{
	size_t e = len, s;

	while (e > 0 && (v[e - 1] == ' ' || v[e - 1] == '\t'))
		e--;
	s = e;
	while (s > 0 && v[s - 1] != ',')
		s--;
	while (s < e && (v[s] == ' ' || v[s] == '\t'))
		s++;
	return e - s == 7 && strncasecmp(v + s, "chunked", 7) == 0;
}

static int
parse_header_line(struct kube_http_parser *p, const char *l, size_t len)
{
	const char *colon = memchr(l, ':', len);
	size_t nlen, vlen;
	const char *v;

	if (!colon || colon == l)
		return -EBADMSG;
	nlen = (size_t)(colon - l);
	for (size_t i = 0; i < nlen; i++)
		if (l[i] == ' ' || l[i] == '\t') /* no whitespace before the colon (RFC 9112 5.1) */
			return -EBADMSG;
	v = colon + 1;
	vlen = len - nlen - 1;
	while (vlen && (*v == ' ' || *v == '\t'))
		v++, vlen--;
	while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
		vlen--;

	if (nlen == 14 && strncasecmp(l, "content-length", 14) == 0) {
		uint64_t n;

		if (parse_decimal(v, vlen, &n) < 0)
			return -EBADMSG;
		if (p->has_length && n != p->length)
			return -EBADMSG; /* two different lengths: request smuggling territory */
		p->has_length = true;
		p->length = n;
	} else if (nlen == 17 && strncasecmp(l, "transfer-encoding", 17) == 0) {
		p->has_te = true;
		p->chunked = ends_chunked(v, vlen);
	} else if (nlen == 10 && strncasecmp(l, "connection", 10) == 0) {
		if (token_in_list(v, vlen, "close"))
			p->keep_alive = false;
		else if (token_in_list(v, vlen, "keep-alive"))
			p->keep_alive = true;
	}
	return 0;
}

/* The header ended: pick the body framing (RFC 9112 6.3). */
static int
header_end(struct kube_http_parser *p)
{
	if (p->status < 200) {
		/* 1xx interim answer: the real one follows */
		bool head = p->head_request;
		uint64_t hb = p->header_bytes;

		kube_http_parser_release(p);
		memset(p, 0, sizeof(*p));
		p->head_request = head;
		p->header_bytes = hb;
		return 0;
	}
	p->header_done = true;
	if (p->head_request || p->status == 204 || p->status == 304) {
		p->state = ST_DONE;
	} else if (p->has_te) {
		/* Transfer-Encoding overrides Content-Length; not chunked last: read to close */
		/*
		 * Both fields: smuggling territory (RFC 9112 6.3); use the answer but not the
		 * connection.
		 */
		p->keep_alive = p->keep_alive && p->chunked && !p->has_length;
		p->has_length = false;
		p->state = p->chunked ? ST_CHUNK_SIZE : ST_BODY_EOF;
	} else if (p->has_length) {
		p->state = p->length ? ST_BODY_LENGTH : ST_DONE;
	} else {
		p->keep_alive = false;
		p->state = ST_BODY_EOF;
	}
	return 0;
}

static int
parse_chunk_size(struct kube_http_parser *p, const char *l, size_t len)
{
	uint64_t v = 0;
	size_t i = 0;

	for (; i < len; i++) {
		int d;
		char c = l[i];

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (v > (MAX_SIZE - 1 - (uint64_t)d) / 16)
			return -EBADMSG; /* checked before multiplying: no wrap-around */
		v = v * 16 + (uint64_t)d;
	}
	if (i == 0)
		return -EBADMSG;
	/* chunk extensions (";name=value") and trailing whitespace are ignored */
	while (i < len && (l[i] == ' ' || l[i] == '\t'))
		i++;
	if (i < len && l[i] != ';')
		return -EBADMSG;
	p->length = v;
	p->state = v ? ST_CHUNK_DATA : ST_TRAILER;
	return 0;
}

/*
 * Takes one CRLF- (or bare LF-) terminated line from data into p->line. Returns bytes
 * consumed; *complete tells whether the line ended (then p->line holds it, CR stripped).
 */
static ssize_t
take_line(struct kube_http_parser *p, const char *data, size_t len, size_t max, bool *complete)
{
	const char *nl = memchr(data, '\n', len);
	size_t n = nl ? (size_t)(nl - data) : len;
	int r = line_add(p, data, n, max);

	if (r < 0)
		return r;
	*complete = nl != NULL;
	if (nl) {
		if (p->line_len && p->line[p->line_len - 1] == '\r')
			p->line[--p->line_len] = '\0';
		if (memchr(p->line, '\0', p->line_len) || memchr(p->line, '\r', p->line_len))
			return -EBADMSG; /* NUL or a bare CR inside a line */
		return (ssize_t)n + 1;
	}
	return (ssize_t)n;
}

ssize_t
kube_http_parse(struct kube_http_parser *p, const char *data, size_t len,
    bool (*body)(void *userdata, const char *data, size_t len), void *userdata)
{
	size_t off = 0;

	while (off < len && p->state != ST_DONE) {
		const char *d = data + off;
		size_t n = len - off;
		bool complete = false;
		ssize_t used;
		int r = 0;

		switch (p->state) {
		case ST_STATUS:
		case ST_HEADER:
		case ST_TRAILER:
			used = take_line(p, d, n, MAX_HEADER - p->header_bytes, &complete);
			if (used < 0)
				return used;
			off += (size_t)used;
			if (!complete)
				break;
			p->header_bytes += p->line_len + 2;
			if (p->header_bytes > MAX_HEADER)
				return -EBADMSG;
			if (p->state == ST_STATUS) {
				if (p->line_len == 0 && p->header_bytes <= 8)
					r = 0; /* tolerate a stray empty line before the status */
				else if ((r = parse_status_line(p, p->line, p->line_len)) == 0)
					p->state = ST_HEADER;
			} else if (p->line_len == 0) {
				if (p->state == ST_TRAILER)
					p->state = ST_DONE;
				else
					r = header_end(p);
			} else if (p->state == ST_HEADER) {
				if (p->line[0] == ' ' || p->line[0] == '\t')
					r = -EBADMSG; /* obsolete line folding */
				else
					r = parse_header_line(p, p->line, p->line_len);
			} /* trailer fields are ignored */
			p->line_len = 0;
			if (r < 0)
				return r;
			break;
		case ST_CHUNK_SIZE:
		case ST_CHUNK_CRLF:
			used = take_line(p, d, n, MAX_CHUNK_LINE, &complete);
			if (used < 0)
				return used;
			off += (size_t)used;
			if (!complete)
				break;
			if (p->state == ST_CHUNK_CRLF) {
				r = p->line_len == 0 ? 0 : -EBADMSG;
				p->state = ST_CHUNK_SIZE;
			} else {
				r = parse_chunk_size(p, p->line, p->line_len);
			}
			p->line_len = 0;
			if (r < 0)
				return r;
			break;
		case ST_BODY_LENGTH:
		case ST_CHUNK_DATA:
		case ST_BODY_EOF:
			if (p->state != ST_BODY_EOF && n > p->length)
				n = (size_t)p->length;
			if (body && !body(userdata, d, n))
				return -ECANCELED;
			off += n;
			p->body_bytes += n;
			if (p->state == ST_BODY_EOF)
				break;
			p->length -= n;
			if (p->length == 0)
				p->state = p->state == ST_CHUNK_DATA ? ST_CHUNK_CRLF : ST_DONE;
			break;
		}
	}
	return (ssize_t)off;
}

int
kube_http_parse_eof(struct kube_http_parser *p)
{
	if (p->state == ST_BODY_EOF) {
		p->state = ST_DONE;
		return 0;
	}
	return p->state == ST_DONE ? 0 : -EIO;
}

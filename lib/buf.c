/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/buf.h"

#include <errno.h>
#include <string.h>

int
buf_get_u8(struct buf_reader *r, uint8_t *ret)
{
	if (r->left < 1)
		return -EBADMSG;
	*ret = r->p[0];
	r->p++;
	r->left--;
	return 0;
}

int
buf_get_be16(struct buf_reader *r, uint16_t *ret)
{
	if (r->left < 2)
		return -EBADMSG;
	*ret = be16_get(r->p);
	r->p += 2;
	r->left -= 2;
	return 0;
}

int
buf_get_be32(struct buf_reader *r, uint32_t *ret)
{
	if (r->left < 4)
		return -EBADMSG;
	*ret = be32_get(r->p);
	r->p += 4;
	r->left -= 4;
	return 0;
}

int
buf_get_bytes(struct buf_reader *r, void *dst, size_t n)
{
	if (r->left < n)
		return -EBADMSG;
	if (n > 0)
		memcpy(dst, r->p, n);
	r->p += n;
	r->left -= n;
	return 0;
}

int
buf_get_view(struct buf_reader *r, size_t n, const uint8_t **ret)
{
	if (r->left < n)
		return -EBADMSG;
	*ret = r->p;
	r->p += n;
	r->left -= n;
	return 0;
}

int
buf_skip(struct buf_reader *r, size_t n)
{
	if (r->left < n)
		return -EBADMSG;
	r->p += n;
	r->left -= n;
	return 0;
}

static int
buf_reserve(struct buf_writer *w, size_t n)
{
	if (w->overflow || w->cap - w->len < n) {
		w->overflow = true;
		return -ENOBUFS;
	}
	return 0;
}

void
buf_put_u8(struct buf_writer *w, uint8_t v)
{
	if (buf_reserve(w, 1) < 0)
		return;
	w->p[w->len++] = v;
}

void
buf_put_be16(struct buf_writer *w, uint16_t v)
{
	if (buf_reserve(w, 2) < 0)
		return;
	be16_put(w->p + w->len, v);
	w->len += 2;
}

void
buf_put_be32(struct buf_writer *w, uint32_t v)
{
	if (buf_reserve(w, 4) < 0)
		return;
	be32_put(w->p + w->len, v);
	w->len += 4;
}

void
buf_put_bytes(struct buf_writer *w, const void *src, size_t n)
{
	if (buf_reserve(w, n) < 0)
		return;
	if (n > 0)
		memcpy(w->p + w->len, src, n);
	w->len += n;
}

void
buf_put_zero(struct buf_writer *w, size_t n)
{
	if (buf_reserve(w, n) < 0)
		return;
	memset(w->p + w->len, 0, n);
	w->len += n;
}

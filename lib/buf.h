/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_BUF_H
#define VMDHCP_LIB_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Bounded cursors. A reader can never read past its end: every getter checks the remaining
 * length first and returns -EBADMSG (leaving the cursor unchanged) when it is too short.
 * A writer never writes past its capacity: on overflow it sets `overflow` (sticky) and
 * drops the write, so a sequence of puts needs one check at the end.
 */

struct buf_reader {
	const uint8_t *p; /* borrowed: next byte to read */
	size_t left;	  /* bytes remaining */
};

static inline struct buf_reader
buf_reader_init(const void *data, size_t len)
{
	return (struct buf_reader){.p = data, .left = len};
}

int buf_get_u8(struct buf_reader *r, uint8_t *ret);
int buf_get_be16(struct buf_reader *r, uint16_t *ret);
int buf_get_be32(struct buf_reader *r, uint32_t *ret);
/* Copies n bytes into dst. */
int buf_get_bytes(struct buf_reader *r, void *dst, size_t n);
/* Borrows n bytes: *ret points into the reader's buffer. */
int buf_get_view(struct buf_reader *r, size_t n, const uint8_t **ret);
int buf_skip(struct buf_reader *r, size_t n);

struct buf_writer {
	uint8_t *p; /* borrowed: start of the output buffer */
	size_t len; /* bytes written */
	size_t cap; /* capacity */
	bool overflow;
};

static inline struct buf_writer
buf_writer_init(void *data, size_t cap)
{
	return (struct buf_writer){.p = data, .len = 0, .cap = cap, .overflow = false};
}

static inline size_t
buf_writer_room(const struct buf_writer *w)
{
	return w->overflow ? 0 : w->cap - w->len;
}

void buf_put_u8(struct buf_writer *w, uint8_t v);
void buf_put_be16(struct buf_writer *w, uint16_t v);
void buf_put_be32(struct buf_writer *w, uint32_t v);
void buf_put_bytes(struct buf_writer *w, const void *src, size_t n);
void buf_put_zero(struct buf_writer *w, size_t n);

/* Unchecked big-endian helpers for fixed-layout code that has already checked lengths. */
static inline uint16_t
be16_get(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}
static inline uint32_t
be32_get(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void
be16_put(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void
be32_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

#endif

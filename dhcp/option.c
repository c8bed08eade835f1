/* SPDX-License-Identifier: Apache-2.0 */
/* Parse received options into a table by code, including overload (RFC 2132 §9.3). */
#include "dhcp/option.h"

#include <errno.h>
#include <string.h>

#include "dhcp/proto.h"
#include "lib/buf.h"

static int
option_store(struct dhcp_option_table *t, uint8_t code, const uint8_t *val, size_t len)
{
	size_t old;

	if (!dhcp_option_has(t, code)) {
		t->present[code >> 3] |= (uint8_t)(1u << (code & 7));
		t->val[code] = val;
		t->len[code] = (uint16_t)len;
		return 0;
	}
	/* RFC 3396: several instances of one option are concatenated in order. */
	old = t->len[code];
	if (old + len > UINT16_MAX)
		return -EBADMSG;
	if (t->val[code] + old == t->scratch + t->scratch_used) {
		/* already the last concatenation in scratch: append in place */
		if (len > sizeof(t->scratch) - t->scratch_used)
			return -EBADMSG;
		memcpy(t->scratch + t->scratch_used, val, len);
		t->len[code] = (uint16_t)(old + len);
		t->scratch_used += len;
		return 0;
	}
	if (old + len > sizeof(t->scratch) - t->scratch_used)
		return -EBADMSG;
	memmove(t->scratch + t->scratch_used, t->val[code], old);
	memcpy(t->scratch + t->scratch_used + old, val, len);
	t->val[code] = t->scratch + t->scratch_used;
	t->len[code] = (uint16_t)(old + len);
	t->scratch_used += old + len;
	return 0;
}

/*
 * One area (options field, file or sname). Cursor + remaining length: every read is
 * checked first. A missing END at the end of the area is tolerated (many clients omit it
 * in overloaded fields); anything running past the area is not.
 */
static int
parse_area(struct dhcp_option_table *t, const uint8_t *p, size_t left, bool main_area)
{
	while (left > 0) {
		uint8_t code = p[0];
		size_t len;

		if (code == DHCP_OPT_PAD) {
			p++;
			left--;
			continue;
		}
		if (code == DHCP_OPT_END)
			return 0;
		if (left < 2)
			goto too_short;
		len = p[1];
		if (left - 2 < len)
			goto too_short;
		/* Overload is only meaningful in the options field: ignoring it elsewhere makes
		 * file <-> sname loops impossible. */
		if (code != DHCP_OPT_OVERLOAD || main_area) {
			if (option_store(t, code, p + 2, len) < 0)
				goto too_short;
		}
		p += 2 + len;
		left -= 2 + len;
	}
	return 0;
too_short:
	return -EBADMSG;
}

int
dhcp_option_parse(struct dhcp_option_table *t, const uint8_t *msg, size_t len)
{
	const struct dhcp_msg *m = (const struct dhcp_msg *)msg;
	const uint8_t *ov;
	size_t ovlen = 0;
	int r;

	memset(t->present, 0, sizeof(t->present));
	t->scratch_used = 0;
	if (len < DHCP_FIXED_LEN + 4)
		return -EBADMSG;
	if (be32_get(msg + DHCP_FIXED_LEN) != DHCP_MAGIC_COOKIE)
		return -EBADMSG;
	r = parse_area(t, msg + DHCP_FIXED_LEN + 4, len - DHCP_FIXED_LEN - 4, true);
	if (r < 0)
		return r;
	ov = dhcp_option_get(t, DHCP_OPT_OVERLOAD, &ovlen);
	if (ov == NULL)
		return 0;
	if (ovlen != 1 || ov[0] < 1 || ov[0] > 3)
		return -EBADMSG;
	/* RFC 2131 §4.1: options field first, then 'file', then 'sname'. */
	if (ov[0] & DHCP_OVERLOAD_FILE) {
		r = parse_area(t, m->file, sizeof(m->file), false);
		if (r < 0)
			return r;
	}
	if (ov[0] & DHCP_OVERLOAD_SNAME) {
		r = parse_area(t, m->sname, sizeof(m->sname), false);
		if (r < 0)
			return r;
	}
	return 0;
}

uint16_t
dhcp_option_max_size(const struct dhcp_option_table *t)
{
	const uint8_t *v;
	size_t len = 0;
	uint16_t n;

	v = dhcp_option_get(t, DHCP_OPT_MAX_SIZE, &len);
	if (v == NULL || len != 2)
		return DHCP_MIN_MAX_SIZE;
	n = be16_get(v);
	return n < DHCP_MIN_MAX_SIZE ? DHCP_MIN_MAX_SIZE : n;
}

int
dhcp_option_get_addr(const struct dhcp_option_table *t, uint8_t code, uint32_t *ret)
{
	const uint8_t *v;
	size_t len = 0;

	v = dhcp_option_get(t, code, &len);
	if (v == NULL)
		return -ENOENT;
	if (len != 4)
		return -EBADMSG;
	*ret = be32_get(v);
	return 0;
}

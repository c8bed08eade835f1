/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DHCPv6 options (RFC 8415 §21): one bounded pass over a message's options into a table of
 * views, with the IAs (IA_NA, IA_TA, IA_PD) and their IAADDRs walked on the way.
 */
#include <errno.h>
#include <string.h>

#include "dhcp/dhcp6-internal.h"
#include "lib/buf.h"

/*
 * Calls fn for every option of p[0..len): each must lie within (§21.1: option-len counts the
 * data that follows). Returns 0, -EBADMSG on an overrun, or fn's negative result.
 */
static int
walk(const uint8_t *p, size_t len, int (*fn)(void *ud, uint16_t code, const uint8_t *d, uint16_t n),
    void *ud)
{
	while (len > 0) {
		uint16_t code, n;
		int r;

		if (len < DHCP6_OPT_HDR_LEN)
			return -EBADMSG;
		code = be16_get(p);
		n = be16_get(p + 2);
		if ((size_t)n > len - DHCP6_OPT_HDR_LEN)
			return -EBADMSG;
		if ((r = fn(ud, code, p + DHCP6_OPT_HDR_LEN, n)) < 0)
			return r;
		p += DHCP6_OPT_HDR_LEN + (size_t)n;
		len -= DHCP6_OPT_HDR_LEN + (size_t)n;
	}
	return 0;
}

/* The options inside an IA: IAADDRs kept (24 bytes at least, §21.6), IAPREFIX sized (25). */
static int
ia_option(void *ud, uint16_t code, const uint8_t *d, uint16_t n)
{
	struct dhcp6_ia *ia = ud;

	if (code == DHCP6_OPT_IAADDR) {
		if (n < DHCP6_IAADDR_LEN || ia->type == DHCP6_OPT_IA_PD)
			return -EBADMSG;
		if (ia->n_addrs < DHCP6_MAX_IA_ADDRS)
			memcpy(&ia->addrs[ia->n_addrs++], d, 16);
		/* its own options (a status code) are the server's business, not ours: skipped */
	} else if (code == DHCP6_OPT_IAPREFIX && n < 25) {
		return -EBADMSG;
	}
	return 0;
}

static int
parse_ia(struct dhcp6_opts *o, uint16_t code, const uint8_t *d, uint16_t n)
{
	size_t fixed = code == DHCP6_OPT_IA_TA ? DHCP6_IA_TA_LEN : DHCP6_IA_NA_LEN;
	struct dhcp6_ia ia = {.type = code};
	int r;

	if (n < fixed)
		return -EBADMSG;
	ia.iaid = be32_get(d);
	if ((r = walk(d + fixed, n - fixed, ia_option, &ia)) < 0)
		return r;
	if (o->n_ia < DHCP6_MAX_IA)
		o->ia[o->n_ia++] = ia;
	return 0;
}

static void
keep(struct dhcp6_view *v, const uint8_t *d, uint16_t n)
{
	if (v->p == NULL) {
		v->p = d;
		v->len = n;
	}
}

static int
top_option(void *ud, uint16_t code, const uint8_t *d, uint16_t n)
{
	struct dhcp6_opts *o = ud;

	switch (code) {
	case DHCP6_OPT_CLIENTID:
	case DHCP6_OPT_SERVERID:
		/* §11.1: a DUID is a 2-byte type and at most 128 bytes more */
		if (n < 3 || n > DHCP6_DUID_MAX)
			return -EBADMSG;
		keep(code == DHCP6_OPT_CLIENTID ? &o->client_id : &o->server_id, d, n);
		break;
	case DHCP6_OPT_ORO:
		if (n % 2 != 0)
			return -EBADMSG;
		keep(&o->oro, d, n);
		break;
	case DHCP6_OPT_RELAY_MSG:
		keep(&o->relay_msg, d, n);
		break;
	case DHCP6_OPT_INTERFACE_ID:
		keep(&o->interface_id, d, n);
		break;
	case DHCP6_OPT_CLIENT_LINKLAYER_ADDR:
		if (n < 2)
			return -EBADMSG;
		keep(&o->linklayer, d, n);
		break;
	case DHCP6_OPT_RAPID_COMMIT:
		if (n != 0)
			return -EBADMSG;
		o->rapid_commit = true;
		break;
	case DHCP6_OPT_IA_NA:
	case DHCP6_OPT_IA_TA:
	case DHCP6_OPT_IA_PD:
		return parse_ia(o, code, d, n);
	default:
		break; /* §16: unknown options are ignored */
	}
	return 0;
}

int
dhcp6_options_parse(const uint8_t *p, size_t len, struct dhcp6_opts *ret)
{
	memset(ret, 0, sizeof(*ret));
	return walk(p, len, top_option, ret);
}

const uint8_t *
dhcp6_duid_ethernet(const struct dhcp6_view *duid)
{
	/* §11.2: type 1, hardware type, time (4), link-layer address; §11.4: type 3, hardware
	 * type, link-layer address. Hardware type 1 (RFC 826) has a 6-byte address. */
	if (duid->p == NULL || duid->len < 4 || be16_get(duid->p + 2) != DHCP6_LINKLAYER_ETHERNET)
		return NULL;
	if (be16_get(duid->p) == DHCP6_DUID_LLT && duid->len == 4 + 4 + 6)
		return duid->p + 8;
	if (be16_get(duid->p) == DHCP6_DUID_LL && duid->len == 4 + 6)
		return duid->p + 4;
	return NULL;
}

bool
dhcp6_oro_has(const struct dhcp6_opts *o, uint16_t code)
{
	for (size_t i = 0; o->oro.p != NULL && i + 1 < o->oro.len; i += 2)
		if (be16_get(o->oro.p + i) == code)
			return true;
	return false;
}

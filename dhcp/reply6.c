/* SPDX-License-Identifier: Apache-2.0 */
/* DHCPv6 reply building (RFC 8415 §18.3, §21): bounded writes into the transmit buffer. */
#include <errno.h>
#include <string.h>

#include "dhcp/dhcp6-internal.h"
#include "lib/buf.h"
#include "lib/ip6.h"

static void
put_raw(struct dhcp6_writer *w, const void *data, size_t n)
{
	if (w->overflow || n > w->cap - w->len) {
		w->overflow = true;
		return;
	}
	if (n > 0)
		memcpy(w->p + w->len, data, n);
	w->len += n;
}

static void
put_be16(struct dhcp6_writer *w, uint16_t v)
{
	uint8_t b[2];

	be16_put(b, v);
	put_raw(w, b, 2);
}

static void
put_be32(struct dhcp6_writer *w, uint32_t v)
{
	uint8_t b[4];

	be32_put(b, v);
	put_raw(w, b, 4);
}

void
dhcp6_put_option(struct dhcp6_writer *w, uint16_t code, const void *data, size_t len)
{
	if (len > UINT16_MAX) {
		w->overflow = true;
		return;
	}
	put_be16(w, code);
	put_be16(w, (uint16_t)len);
	put_raw(w, data, len);
}

size_t
dhcp6_open_option(struct dhcp6_writer *w, uint16_t code)
{
	size_t at = w->len;

	put_be16(w, code);
	put_be16(w, 0);
	return at;
}

void
dhcp6_close_option(struct dhcp6_writer *w, size_t at)
{
	size_t n;

	if (w->overflow)
		return;
	n = w->len - at - DHCP6_OPT_HDR_LEN;
	if (n > UINT16_MAX) {
		w->overflow = true;
		return;
	}
	be16_put(w->p + at + 2, (uint16_t)n);
}

static const char *
status_text(uint16_t code)
{
	switch (code) {
	case DHCP6_STATUS_SUCCESS:
		return "success";
	case DHCP6_STATUS_NO_ADDRS_AVAIL:
		return "no addresses available";
	case DHCP6_STATUS_NO_BINDING:
		return "no binding";
	case DHCP6_STATUS_NOT_ON_LINK:
		return "not on link";
	case DHCP6_STATUS_USE_MULTICAST:
		return "use multicast";
	case DHCP6_STATUS_NO_PREFIX_AVAIL:
		return "no prefixes available";
	default:
		return "failure";
	}
}

/* Status Code (§21.13): the code and a UTF-8 message for the user. */
void
dhcp6_put_status(struct dhcp6_writer *w, uint16_t code)
{
	const char *msg = status_text(code);
	size_t at = dhcp6_open_option(w, DHCP6_OPT_STATUS_CODE);

	put_be16(w, code);
	put_raw(w, msg, strlen(msg));
	dhcp6_close_option(w, at);
}

/*
 * §19.3: the RELAY-REPL of each relay layer copies its hop-count, link-address and
 * peer-address, echoes its Interface-Id (§21.18) and carries the next layer in a Relay
 * Message option, outermost first. The Relay Message options are left open (at[]).
 */
size_t
dhcp6_reply_relay_open(struct dhcp6_writer *w, const struct dhcp6_request *req, size_t *at)
{
	for (size_t i = 0; i < req->n_relays; i++) {
		const struct dhcp6_relay *rl = &req->relays[i];
		struct dhcp6_relay_hdr h = *rl->hdr;

		h.type = DHCP6_MSG_RELAY_REPL;
		put_raw(w, &h, sizeof(h));
		if (rl->interface_id.p != NULL)
			dhcp6_put_option(
			    w, DHCP6_OPT_INTERFACE_ID, rl->interface_id.p, rl->interface_id.len);
		at[i] = dhcp6_open_option(w, DHCP6_OPT_RELAY_MSG);
	}
	return req->n_relays;
}

void
dhcp6_reply_relay_close(struct dhcp6_writer *w, const size_t *at, size_t n)
{
	while (n-- > 0)
		dhcp6_close_option(w, at[n]);
}

void
dhcp6_reply_start(struct dhcp6_writer *w, const struct dhcp6_optset *set,
    const struct dhcp6_request *req, int type)
{
	uint8_t h[DHCP6_HDR_LEN] = {
	    (uint8_t)type, (uint8_t)(req->xid >> 16), (uint8_t)(req->xid >> 8), (uint8_t)req->xid};

	put_raw(w, h, sizeof(h));
	/* §18.3.x: the Client Identifier as received, then ours */
	if (req->opts.client_id.p != NULL)
		dhcp6_put_option(
		    w, DHCP6_OPT_CLIENTID, req->opts.client_id.p, req->opts.client_id.len);
	dhcp6_put_option(w, DHCP6_OPT_SERVERID, set->o.duid, set->o.duid_len);
}

void
dhcp6_reply_config(
    struct dhcp6_writer *w, const struct dhcp6_optset *set, const struct dhcp6_request *req)
{
	if (set->dns_len > 0 && dhcp6_oro_has(&req->opts, DHCP6_OPT_DNS_SERVERS))
		dhcp6_put_option(w, DHCP6_OPT_DNS_SERVERS, set->dns_wire, set->dns_len);
	if (set->search_len > 0 && dhcp6_oro_has(&req->opts, DHCP6_OPT_DOMAIN_LIST))
		dhcp6_put_option(w, DHCP6_OPT_DOMAIN_LIST, set->search_wire, set->search_len);
}

/* The IA's fixed part: IAID, and T1/T2 but for IA_TA (§21.4, §21.5, §21.21). */
static size_t
open_ia(struct dhcp6_writer *w, const struct dhcp6_ia *ia, uint32_t t1, uint32_t t2)
{
	size_t at = dhcp6_open_option(w, ia->type);

	put_be32(w, ia->iaid);
	if (ia->type != DHCP6_OPT_IA_TA) {
		put_be32(w, t1);
		put_be32(w, t2);
	}
	return at;
}

static void
put_iaaddr(struct dhcp6_writer *w, const struct in6_addr *a, uint32_t preferred, uint32_t valid)
{
	size_t at = dhcp6_open_option(w, DHCP6_OPT_IAADDR);

	put_raw(w, a, 16);
	put_be32(w, preferred);
	put_be32(w, valid);
	dhcp6_close_option(w, at);
}

/* T1 = 0.5 and T2 = 0.8 of the preferred lifetime (§21.4 recommends 0.5 and 0.8);
 * an infinite preferred lifetime (0xffffffff) keeps them infinite. */
static void
times(const struct dhcp6_optset *set, uint32_t *pref, uint32_t *valid, uint32_t *t1, uint32_t *t2)
{
	*pref = set->o.preferred_lifetime ? set->o.preferred_lifetime : DHCP6_LIFETIME_DEFAULT;
	*valid = set->o.valid_lifetime ? set->o.valid_lifetime : DHCP6_LIFETIME_DEFAULT;
	if (*pref > *valid)
		*pref = *valid;
	if (*pref == UINT32_MAX) {
		*t1 = *t2 = UINT32_MAX;
		return;
	}
	*t1 = *pref / 2;
	*t2 = (uint32_t)((uint64_t)*pref * 4 / 5);
}

void
dhcp6_reply_ia_addr(struct dhcp6_writer *w, const struct dhcp6_optset *set,
    const struct dhcp6_ia *ia, const struct in6_addr *addr, bool zero_others)
{
	uint32_t pref, valid, t1, t2;
	size_t at;

	times(set, &pref, &valid, &t1, &t2);
	at = open_ia(w, ia, addr != NULL ? t1 : 0, addr != NULL ? t2 : 0);
	if (addr != NULL)
		put_iaaddr(w, addr, pref, valid);
	for (size_t i = 0; zero_others && i < ia->n_addrs; i++)
		if (addr == NULL || !ipv6_equal(&ia->addrs[i], addr))
			put_iaaddr(w, &ia->addrs[i], 0, 0);
	dhcp6_close_option(w, at);
}

void
dhcp6_reply_ia_status(struct dhcp6_writer *w, const struct dhcp6_ia *ia, uint16_t status)
{
	size_t at = open_ia(w, ia, 0, 0);

	dhcp6_put_status(w, status);
	dhcp6_close_option(w, at);
}

/* One name in RFC 1035 §3.1 wire form (labels 1..63 bytes, 255 in all, a trailing dot
 * allowed), no compression (RFC 3646 §4, RFC 8415 §10). Returns 0 or -EINVAL. */
static int
put_name(struct dhcp6_writer *w, const char *name)
{
	size_t start = w->len;

	if (*name == '\0')
		return -EINVAL;
	while (*name != '\0') {
		size_t n = strcspn(name, ".");

		if (n == 0 || n > 63)
			return -EINVAL;
		put_raw(w, &(uint8_t){(uint8_t)n}, 1);
		put_raw(w, name, n);
		name += n;
		if (*name == '.')
			name++;
	}
	put_raw(w, &(uint8_t){0}, 1);
	return w->overflow || w->len - start > 255 ? -EINVAL : 0;
}

int
dhcp6_optset_build(struct dhcp6_optset *set)
{
	struct dhcp6_writer w = {.p = set->search_wire, .cap = sizeof(set->search_wire)};

	for (size_t i = 0; i < set->o.n_dns; i++)
		memcpy(set->dns_wire + 16 * i, &set->o.dns[i], 16);
	set->dns_len = 16 * set->o.n_dns;
	for (size_t i = 0; i < set->o.n_search; i++) {
		if (strnlen(set->o.search[i], sizeof(set->o.search[i])) == sizeof(set->o.search[i]))
			return -EINVAL;
		if (put_name(&w, set->o.search[i]) < 0)
			return -EINVAL;
	}
	set->search_len = w.len;
	ipv6_prefix_network(&set->o.server_ip, set->o.prefix, &set->net);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* Option encoders (119, 121, RFC 3396 splitting) and the compiled option set. */
#include "dhcp/encode.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dhcp/proto.h"
#include "lib/buf.h"
#include "lib/util.h"

int
dhcp_encode_tlv(uint8_t code, const uint8_t *data, size_t len, uint8_t *out, size_t cap)
{
	size_t need = len == 0 ? 2 : len + 2 * ((len + 254) / 255);
	size_t n = 0;

	if (need > cap)
		return -ENOBUFS;
	do {
		size_t chunk = len > 255 ? 255 : len;

		out[n++] = code;
		out[n++] = (uint8_t)chunk;
		if (chunk > 0)
			memcpy(out + n, data, chunk);
		n += chunk;
		data += chunk;
		len -= chunk;
	} while (len > 0);
	return (int)n;
}

/* --- option 119: RFC 1035 §4.1.4 message compression ------------------------------------ */

struct suffix {
	uint16_t off;  /* where this suffix was written in the output */
	const char *s; /* borrowed: the suffix text (labels separated by dots, no final dot) */
	size_t len;
};

int
dhcp_encode_search(const char (*names)[256], size_t n, uint8_t *out, size_t cap)
{
	struct suffix *sfx;
	size_t n_sfx = 0, pos = 0;
	int r = 0;

	/* at most 127 labels per name */
	sfx = calloc(n * 128 + 1, sizeof(*sfx));
	if (sfx == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *name = names[i];
		size_t nlen = strnlen(name, 256);
		const char *p = name;

		if (nlen == 256) {
			r = -EINVAL;
			goto out;
		}
		if (nlen > 0 && name[nlen - 1] == '.')
			nlen--;
		if (nlen == 0 || nlen > 253) {
			r = -EINVAL;
			goto out;
		}
		for (;;) {
			size_t rest = nlen - (size_t)(p - name);
			const char *dot;
			size_t llen;
			bool found = false;

			if (rest == 0) {
				/* root label */
				if (pos + 1 > cap)
					goto nobufs;
				out[pos++] = 0;
				break;
			}
			/* an earlier occurrence of this whole suffix becomes a pointer */
			for (size_t k = 0; k < n_sfx; k++) {
				if (sfx[k].len == rest && strncasecmp(sfx[k].s, p, rest) == 0) {
					if (pos + 2 > cap)
						goto nobufs;
					out[pos++] = (uint8_t)(0xc0 | sfx[k].off >> 8);
					out[pos++] = (uint8_t)sfx[k].off;
					found = true;
					break;
				}
			}
			if (found)
				break;
			dot = memchr(p, '.', rest);
			llen = dot != NULL ? (size_t)(dot - p) : rest;
			if (llen == 0 || llen > 63) {
				r = -EINVAL;
				goto out;
			}
			if (pos < 0x3fff)
				sfx[n_sfx++] =
				    (struct suffix){.off = (uint16_t)pos, .s = p, .len = rest};
			if (pos + 1 + llen > cap)
				goto nobufs;
			out[pos++] = (uint8_t)llen;
			memcpy(out + pos, p, llen);
			pos += llen;
			p += llen;
			if (dot != NULL)
				p++; /* skip the dot */
		}
	}
	r = (int)pos;
	goto out;
nobufs:
	r = -ENOBUFS;
out:
	free(sfx);
	return r;
}

/* --- option 121: RFC 3442 classless static routes ----------------------------------------- */

static int
put_route(uint32_t dst, uint8_t prefix, uint32_t gw, uint8_t *out, size_t cap)
{
	size_t sig = (prefix + 7u) / 8u, n = 0;
	uint32_t masked;

	if (prefix > 32)
		return -EINVAL;
	masked = dst & ipv4_prefix_mask(prefix);
	if (1 + sig + 4 > cap)
		return -ENOBUFS;
	out[n++] = prefix;
	for (size_t i = 0; i < sig; i++)
		out[n++] = (uint8_t)(masked >> (24 - 8 * i));
	be32_put(out + n, gw);
	return (int)(n + 4);
}

int
dhcp_encode_routes(
    const struct dhcp_route *routes, size_t n, uint32_t default_router, uint8_t *out, size_t cap)
{
	bool have_default = false;
	size_t pos = 0;
	int r;

	for (size_t i = 0; i < n; i++) {
		r = put_route(routes[i].destination, routes[i].prefix, routes[i].gateway, out + pos,
		    cap - pos);
		if (r < 0)
			return r;
		pos += (size_t)r;
		if (routes[i].prefix == 0)
			have_default = true;
	}
	if (n > 0 && default_router != 0 && !have_default) {
		r = put_route(0, 0, default_router, out + pos, cap - pos);
		if (r < 0)
			return r;
		pos += (size_t)r;
	}
	return (int)pos;
}

/* --- the compiled option set -------------------------------------------------------------- */

/* Each writes option data (no header) into out and returns its length, 0 = not sent. */
typedef int (*optset_encoder)(const struct dhcp_options *o, uint8_t *out, size_t cap);

static int
put_addrs(const uint32_t *a, size_t n, uint8_t *out, size_t cap)
{
	if (n * 4 > cap)
		return -ENOBUFS;
	for (size_t i = 0; i < n; i++)
		be32_put(out + 4 * i, a[i]);
	return (int)(n * 4);
}

static int
enc_subnet(const struct dhcp_options *o, uint8_t *out, size_t cap)
{
	if (o->prefix == 0)
		return 0;
	be32_put(out, ipv4_prefix_mask(o->prefix));
	return 4;
}

static int
enc_router(const struct dhcp_options *o, uint8_t *out, size_t cap)
{
	return put_addrs(&o->router, o->router != 0, out, cap);
}

static int
enc_dns(const struct dhcp_options *o, uint8_t *out, size_t cap)
{
	return put_addrs(o->dns, o->n_dns, out, cap);
}

static int
enc_ntp(const struct dhcp_options *o, uint8_t *out, size_t cap)
{
	return put_addrs(o->ntp, o->n_ntp, out, cap);
}

static int
enc_domain(const struct dhcp_options *o, uint8_t *out, size_t cap)
{
	size_t n = strlen(o->domain_name);

	if (n > cap)
		return -ENOBUFS;
	memcpy(out, o->domain_name, n);
	return (int)n;
}

static int
enc_mtu(const struct dhcp_options *o, uint8_t *out, size_t cap)
{
	if (o->mtu == 0)
		return 0;
	be16_put(out, o->mtu);
	return 2;
}

static int
enc_broadcast(const struct dhcp_options *o, uint8_t *out, size_t cap)
{
	uint32_t mask = ipv4_prefix_mask(o->prefix);

	if (o->prefix == 0 || o->prefix >= 31)
		return 0;
	be32_put(out, (o->server_ip & mask) | ~mask);
	return 4;
}

static int
enc_lease(const struct dhcp_options *o, uint8_t *out, size_t cap)
{
	be32_put(out, o->lease_time);
	return 4;
}

/* RFC 2131 §4.4.5: T1 defaults to 0.5 * lease, T2 to 0.875 * lease. */
static int
enc_t1(const struct dhcp_options *o, uint8_t *out, size_t cap)
{
	be32_put(out, o->lease_time == UINT32_MAX ? UINT32_MAX : o->lease_time / 2);
	return 4;
}

static int
enc_t2(const struct dhcp_options *o, uint8_t *out, size_t cap)
{
	uint64_t t2 = (uint64_t)o->lease_time * 7 / 8;

	be32_put(out, o->lease_time == UINT32_MAX ? UINT32_MAX : (uint32_t)t2);
	return 4;
}

static int
enc_server_id(const struct dhcp_options *o, uint8_t *out, size_t cap)
{
	be32_put(out, o->server_ip);
	return 4;
}

static int
enc_search(const struct dhcp_options *o, uint8_t *out, size_t cap)
{
	return dhcp_encode_search((const char(*)[256])o->search, o->n_search, out, cap);
}

static int
enc_routes(const struct dhcp_options *o, uint8_t *out, size_t cap)
{
	return dhcp_encode_routes(o->routes, o->n_routes, o->router, out, cap);
}

static const struct {
	uint8_t code;
	optset_encoder encode;
} optset_encoders[] = {
    {DHCP_OPT_SUBNET_MASK, enc_subnet},
    {DHCP_OPT_ROUTER, enc_router},
    {DHCP_OPT_DNS, enc_dns},
    {DHCP_OPT_DOMAIN_NAME, enc_domain},
    {DHCP_OPT_MTU, enc_mtu},
    {DHCP_OPT_BROADCAST, enc_broadcast},
    {DHCP_OPT_NTP, enc_ntp},
    {DHCP_OPT_LEASE_TIME, enc_lease},
    {DHCP_OPT_SERVER_ID, enc_server_id},
    {DHCP_OPT_T1, enc_t1},
    {DHCP_OPT_T2, enc_t2},
    {DHCP_OPT_DOMAIN_SEARCH, enc_search},
    {DHCP_OPT_CLASSLESS_ROUTES, enc_routes},
};

static bool
string_ok(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

static int
options_validate(const struct dhcp_options *o)
{
	if (o->server_ip == 0 || o->prefix > 32)
		return -EINVAL;
	if (o->n_dns > DHCP_MAX_DNS || o->n_ntp > DHCP_MAX_NTP || o->n_search > DHCP_MAX_SEARCH ||
	    o->n_routes > DHCP_MAX_ROUTES)
		return -EINVAL;
	if (o->mtu != 0 && o->mtu < 68)
		return -EINVAL;
	if (!string_ok(o->domain_name, sizeof(o->domain_name)))
		return -EINVAL;
	for (size_t i = 0; i < o->n_search; i++)
		if (!string_ok(o->search[i], sizeof(o->search[i])))
			return -EINVAL;
	for (size_t i = 0; i < o->n_routes; i++)
		if (o->routes[i].prefix > 32)
			return -EINVAL;
	return 0;
}

int
dhcp_optset_compile(struct dhcp_optset *set, const struct dhcp_options *o)
{
	uint8_t tmp[4096];
	int r;

	r = options_validate(o);
	if (r < 0)
		return r;
	r = dhcp_boot_compile(&set->boot, &o->boot);
	if (r < 0)
		return r;
	memset(set->off, 0, sizeof(set->off));
	memset(set->len, 0, sizeof(set->len));
	set->o = *o;
	if (set->o.lease_time == 0)
		set->o.lease_time = DHCP_DEFAULT_LEASE_TIME;
	set->blob_len = 0;
	for (size_t i = 0; i < ELEMENTSOF(optset_encoders); i++) {
		uint8_t code = optset_encoders[i].code;
		int n;

		n = optset_encoders[i].encode(&set->o, tmp, sizeof(tmp));
		if (n < 0)
			return n == -ENOBUFS ? -EINVAL : n;
		if (n == 0)
			continue;
		r = dhcp_encode_tlv(code, tmp, (size_t)n, set->blob + set->blob_len,
		    sizeof(set->blob) - set->blob_len);
		if (r < 0)
			return -EINVAL;
		set->off[code] = (uint16_t)set->blob_len;
		set->len[code] = (uint16_t)r;
		set->blob_len += (size_t)r;
	}
	return 0;
}

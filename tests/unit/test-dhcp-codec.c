/* SPDX-License-Identifier: Apache-2.0 */
/* dhcp/: option parsing (overload, RFC 3396), encoders (119, 121), option sets, framing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/dhcp-internal.h"
#include "lib/buf.h"
#include "lib/util.h"
#include "tests/runner.h"

/* --- option parsing ------------------------------------------------------------------------ */

struct msg {
	struct dhcp_msg m;
	uint8_t cookie[4];
	uint8_t opts[512];
} __attribute__((packed));

static size_t
msg_init(struct msg *m, const uint8_t *opts, size_t n)
{
	memset(m, 0, sizeof(*m));
	m->m.op = BOOTREQUEST;
	be32_put(m->cookie, DHCP_MAGIC_COOKIE);
	memcpy(m->opts, opts, n);
	return DHCP_FIXED_LEN + 4 + n;
}

static struct dhcp_option_table tbl;

static void
test_parse_basic(void)
{
	static const uint8_t o[] = {53, 1, 1, 0, 0, 55, 3, 1, 3, 6, 12, 2, 'v', 'm', 255, 99};
	struct msg m;
	size_t len = msg_init(&m, o, sizeof(o)), n = 0;
	const uint8_t *v;

	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, len), 0);
	v = dhcp_option_get(&tbl, 53, &n);
	CU_ASSERT(v != NULL && n == 1 && v[0] == 1);
	v = dhcp_option_get(&tbl, 55, &n);
	CU_ASSERT(v != NULL && n == 3 && v[2] == 6);
	v = dhcp_option_get(&tbl, 12, &n);
	CU_ASSERT(v != NULL && n == 2 && memcmp(v, "vm", 2) == 0);
	/* after END nothing counts (99 is padding garbage) */
	CU_ASSERT_FALSE(dhcp_option_has(&tbl, 99));
	CU_ASSERT_FALSE(dhcp_option_has(&tbl, 50));
}

static void
test_parse_malformed(void)
{
	static const uint8_t overrun[] = {53, 1, 1, 12, 10, 'a', 'b'};
	static const uint8_t no_len[] = {53, 1, 1, 12};
	static const uint8_t no_end[] = {53, 1, 1};
	struct msg m;
	size_t len;

	len = msg_init(&m, overrun, sizeof(overrun));
	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, len), -EBADMSG);
	len = msg_init(&m, no_len, sizeof(no_len));
	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, len), -EBADMSG);
	/* a missing END at the end of the data is tolerated */
	len = msg_init(&m, no_end, sizeof(no_end));
	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, len), 0);
	/* bad magic cookie */
	len = msg_init(&m, no_end, sizeof(no_end));
	m.cookie[3] = 0x64;
	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, len), -EBADMSG);
	/* shorter than header + cookie */
	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, DHCP_FIXED_LEN + 3), -EBADMSG);
}

static void
test_parse_concat(void)
{
	/* RFC 3396: two instances of 15 are one value */
	static const uint8_t o[] = {15, 4, 'e', 'x', 'a', 'm', 53, 1, 3, 15, 3, 'p', 'l', 'e', 15,
	    4, '.', 'o', 'r', 'g', 255};
	struct msg m;
	size_t len = msg_init(&m, o, sizeof(o)), n = 0;
	const uint8_t *v;

	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, len), 0);
	v = dhcp_option_get(&tbl, 15, &n);
	CU_ASSERT(v != NULL && n == 11 && memcmp(v, "example.org", 11) == 0);
}

static void
test_parse_overload(void)
{
	static const uint8_t both[] = {53, 1, 1, 52, 1, 3, 15, 3, 'e', 'x', 'a', 255};
	static const uint8_t file_only[] = {53, 1, 1, 52, 1, 1, 255};
	static const uint8_t bad[] = {53, 1, 1, 52, 1, 4, 255};
	static const uint8_t bad_len[] = {53, 1, 1, 52, 2, 1, 1, 255};
	struct msg m;
	size_t len, n = 0;
	const uint8_t *v;

	/* options field, then file, then sname (RFC 2131 §4.1); 15 continues across areas */
	len = msg_init(&m, both, sizeof(both));
	memcpy(m.m.file, (const uint8_t[]){15, 2, 'm', 'p', 12, 2, 'v', 'm', 255}, 9);
	memcpy(m.m.sname, (const uint8_t[]){15, 2, 'l', 'e', 50, 4, 10, 0, 0, 9}, 10);
	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, len), 0);
	v = dhcp_option_get(&tbl, 15, &n);
	CU_ASSERT(v != NULL && n == 7 && memcmp(v, "example", 7) == 0);
	v = dhcp_option_get(&tbl, 12, &n);
	CU_ASSERT(v != NULL && n == 2);
	v = dhcp_option_get(&tbl, 50, &n);
	CU_ASSERT(v != NULL && n == 4 && v[3] == 9);

	/* loop attempt: 52 inside file says "sname too"; only the options field's 52 counts */
	len = msg_init(&m, file_only, sizeof(file_only));
	memcpy(m.m.file, (const uint8_t[]){52, 1, 3, 12, 1, 'x', 255}, 7);
	memcpy(m.m.sname, (const uint8_t[]){52, 1, 3, 15, 1, 'y', 255}, 7);
	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, len), 0);
	CU_ASSERT_TRUE(dhcp_option_has(&tbl, 12));
	CU_ASSERT_FALSE(dhcp_option_has(&tbl, 15));
	v = dhcp_option_get(&tbl, 52, &n);
	CU_ASSERT(v != NULL && n == 1 && v[0] == 1);

	/* an overrun inside an overloaded field is malformed */
	len = msg_init(&m, file_only, sizeof(file_only));
	memset(m.m.file, 0, sizeof(m.m.file));
	m.m.file[126] = 12;
	m.m.file[127] = 5;
	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, len), -EBADMSG);

	len = msg_init(&m, bad, sizeof(bad));
	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, len), -EBADMSG);
	len = msg_init(&m, bad_len, sizeof(bad_len));
	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, len), -EBADMSG);
}

static void
test_max_size(void)
{
	struct msg m;
	size_t len;

	len = msg_init(&m, (const uint8_t[]){53, 1, 1, 255}, 4);
	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, len), 0);
	CU_ASSERT_EQUAL(dhcp_option_max_size(&tbl), 576);
	len = msg_init(&m, (const uint8_t[]){57, 2, 0x05, 0xdc, 255}, 5);
	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, len), 0);
	CU_ASSERT_EQUAL(dhcp_option_max_size(&tbl), 1500);
	len = msg_init(&m, (const uint8_t[]){57, 2, 0x00, 0x64, 255}, 5);
	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, len), 0);
	CU_ASSERT_EQUAL(dhcp_option_max_size(&tbl), 576); /* below the legal minimum */
	len = msg_init(&m, (const uint8_t[]){57, 3, 0x05, 0xdc, 0, 255}, 6);
	CU_ASSERT_EQUAL(dhcp_option_parse(&tbl, (uint8_t *)&m, len), 0);
	CU_ASSERT_EQUAL(dhcp_option_max_size(&tbl), 576); /* bad length */
}

/* --- encoders ------------------------------------------------------------------------------ */

static void
test_search_rfc3397(void)
{
	/* RFC 3397 §4 example */
	static const char names[2][256] = {"eng.apple.com.", "marketing.apple.com."};
	static const uint8_t want[] = {3, 'e', 'n', 'g', 5, 'a', 'p', 'p', 'l', 'e', 3, 'c', 'o',
	    'm', 0, 9, 'm', 'a', 'r', 'k', 'e', 't', 'i', 'n', 'g', 0xc0, 0x04};
	uint8_t out[128];
	int n = dhcp_encode_search(names, 2, out, sizeof(out));

	CU_ASSERT_EQUAL(n, (int)sizeof(want));
	CU_ASSERT(n == (int)sizeof(want) && memcmp(out, want, sizeof(want)) == 0);
	/* exactly enough room / one byte short */
	CU_ASSERT_EQUAL(dhcp_encode_search(names, 2, out, sizeof(want)), (int)sizeof(want));
	CU_ASSERT_EQUAL(dhcp_encode_search(names, 2, out, sizeof(want) - 1), -ENOBUFS);
}

static void
test_search_rfc1035(void)
{
	/* RFC 1035 §4.1.4: F.ISI.ARPA, FOO.F.ISI.ARPA, ARPA (offsets from the option start) */
	static const char names[3][256] = {"F.ISI.ARPA", "FOO.F.ISI.ARPA", "arpa"};
	static const uint8_t want[] = {1, 'F', 3, 'I', 'S', 'I', 4, 'A', 'R', 'P', 'A', 0, 3, 'F',
	    'O', 'O', 0xc0, 0x00, 0xc0, 0x06};
	uint8_t out[64];
	int n = dhcp_encode_search(names, 3, out, sizeof(out));

	CU_ASSERT_EQUAL(n, (int)sizeof(want));
	CU_ASSERT(n == (int)sizeof(want) && memcmp(out, want, sizeof(want)) == 0);
}

static void
test_search_invalid(void)
{
	char names[1][256];
	uint8_t out[512];

	strcpy(names[0], "a..b");
	CU_ASSERT_EQUAL(
	    dhcp_encode_search((const char(*)[256])names, 1, out, sizeof(out)), -EINVAL);
	strcpy(names[0], "");
	CU_ASSERT_EQUAL(
	    dhcp_encode_search((const char(*)[256])names, 1, out, sizeof(out)), -EINVAL);
	memset(names[0], 'a', 64);
	strcpy(names[0] + 64, ".com");
	CU_ASSERT_EQUAL(
	    dhcp_encode_search((const char(*)[256])names, 1, out, sizeof(out)), -EINVAL);
	names[0][1] = '.'; /* label of 62 now: fine */
	CU_ASSERT(dhcp_encode_search((const char(*)[256])names, 1, out, sizeof(out)) > 0);
}

static void
test_routes_rfc3442(void)
{
	/* the destination descriptors of RFC 3442 §5's table, each via gateway 10.0.0.1 */
	static const struct dhcp_route r[] = {
	    {0x00000000, 0, 0x0a000001},
	    {0x0a000000, 8, 0x0a000001},
	    {0x0a000000, 24, 0x0a000001},
	    {0x0a110000, 16, 0x0a000001},
	    {0x0a1b8100, 24, 0x0a000001},
	    {0x0ae50080, 25, 0x0a000001},
	    {0x0ac67a2f, 32, 0x0a000001},
	};
	static const uint8_t want[] = {
	    0,
	    10,
	    0,
	    0,
	    1,
	    8,
	    10,
	    10,
	    0,
	    0,
	    1,
	    24,
	    10,
	    0,
	    0,
	    10,
	    0,
	    0,
	    1,
	    16,
	    10,
	    17,
	    10,
	    0,
	    0,
	    1,
	    24,
	    10,
	    27,
	    129,
	    10,
	    0,
	    0,
	    1,
	    25,
	    10,
	    229,
	    0,
	    128,
	    10,
	    0,
	    0,
	    1,
	    32,
	    10,
	    198,
	    122,
	    47,
	    10,
	    0,
	    0,
	    1,
	};
	uint8_t out[128];
	int n;

	/* a 0/0 route is already there: the router is not added again */
	n = dhcp_encode_routes(r, ELEMENTSOF(r), 0x0a0000fe, out, sizeof(out));
	CU_ASSERT_EQUAL(n, (int)sizeof(want));
	CU_ASSERT(n == (int)sizeof(want) && memcmp(out, want, sizeof(want)) == 0);
	CU_ASSERT_EQUAL(dhcp_encode_routes(r, ELEMENTSOF(r), 0, out, sizeof(want) - 1), -ENOBUFS);
}

static void
test_routes_default_router(void)
{
	/* host bits beyond the prefix are masked; the router becomes 0.0.0.0/0 */
	static const struct dhcp_route r[] = {{0xac10ffff, 12, 0x0a0000fd}};
	static const uint8_t want[] = {12, 172, 16, 10, 0, 0, 253, 0, 10, 0, 0, 254};
	static const struct dhcp_route bad[] = {{0, 33, 1}};
	uint8_t out[64];
	int n = dhcp_encode_routes(r, 1, 0x0a0000fe, out, sizeof(out));

	CU_ASSERT_EQUAL(n, (int)sizeof(want));
	CU_ASSERT(n == (int)sizeof(want) && memcmp(out, want, sizeof(want)) == 0);
	/* no routes: nothing, even with a router */
	CU_ASSERT_EQUAL(dhcp_encode_routes(r, 0, 0x0a0000fe, out, sizeof(out)), 0);
	CU_ASSERT_EQUAL(dhcp_encode_routes(bad, 1, 0, out, sizeof(out)), -EINVAL);
}

static void
test_tlv_split(void)
{
	uint8_t data[300], out[400];
	int n;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)i;
	n = dhcp_encode_tlv(119, data, sizeof(data), out, sizeof(out));
	CU_ASSERT_EQUAL(n, 304);
	CU_ASSERT_EQUAL(out[0], 119);
	CU_ASSERT_EQUAL(out[1], 255);
	CU_ASSERT_EQUAL(out[2 + 255], 119);
	CU_ASSERT_EQUAL(out[3 + 255], 45);
	CU_ASSERT_EQUAL(out[4 + 255], 255); /* data[255] */
	CU_ASSERT_EQUAL(dhcp_encode_tlv(119, data, sizeof(data), out, 303), -ENOBUFS);
	CU_ASSERT_EQUAL(dhcp_encode_tlv(80, NULL, 0, out, 2), 2);
}

static struct dhcp_optset set;

static void
base_options(struct dhcp_options *o)
{
	memset(o, 0, sizeof(*o));
	o->server_ip = 0x0a000001;
	o->prefix = 24;
}

static const uint8_t *
set_tlv(uint8_t code, size_t *len)
{
	*len = set.len[code];
	return set.len[code] ? set.blob + set.off[code] : NULL;
}

static void
test_optset(void)
{
	struct dhcp_options o;
	const uint8_t *v;
	size_t n = 0;

	base_options(&o);
	o.lease_time = 1000;
	CU_ASSERT_EQUAL(dhcp_optset_compile(&set, &o), 0);
	v = set_tlv(DHCP_OPT_SUBNET_MASK, &n);
	CU_ASSERT(v != NULL && n == 6 && memcmp(v, "\x01\x04\xff\xff\xff\x00", 6) == 0);
	v = set_tlv(DHCP_OPT_BROADCAST, &n);
	CU_ASSERT(v != NULL && n == 6 && memcmp(v, "\x1c\x04\x0a\x00\x00\xff", 6) == 0);
	v = set_tlv(DHCP_OPT_T1, &n);
	CU_ASSERT(v != NULL && n == 6 && be32_get(v + 2) == 500);
	v = set_tlv(DHCP_OPT_T2, &n);
	CU_ASSERT(v != NULL && n == 6 && be32_get(v + 2) == 875);
	CU_ASSERT_EQUAL(set.len[DHCP_OPT_ROUTER], 0);
	CU_ASSERT_EQUAL(set.len[DHCP_OPT_DNS], 0);
	CU_ASSERT_EQUAL(set.len[DHCP_OPT_DOMAIN_SEARCH], 0);

	o.lease_time = 0; /* default: one year, as upstream */
	CU_ASSERT_EQUAL(dhcp_optset_compile(&set, &o), 0);
	v = set_tlv(DHCP_OPT_LEASE_TIME, &n);
	CU_ASSERT(v != NULL && be32_get(v + 2) == 31536000);
	v = set_tlv(DHCP_OPT_T1, &n);
	CU_ASSERT(v != NULL && be32_get(v + 2) == 15768000);
	v = set_tlv(DHCP_OPT_T2, &n);
	CU_ASSERT(v != NULL && be32_get(v + 2) == 27594000);
	o.lease_time = UINT32_MAX; /* infinite: T1 and T2 too */
	CU_ASSERT_EQUAL(dhcp_optset_compile(&set, &o), 0);
	v = set_tlv(DHCP_OPT_T2, &n);
	CU_ASSERT(v != NULL && be32_get(v + 2) == UINT32_MAX);

	o.mtu = 1450;
	o.ntp[0] = 0x0a000002;
	o.ntp[1] = 0x0a000003;
	o.n_ntp = 2;
	strcpy(o.domain_name, "example.org");
	CU_ASSERT_EQUAL(dhcp_optset_compile(&set, &o), 0);
	v = set_tlv(DHCP_OPT_MTU, &n);
	CU_ASSERT(v != NULL && n == 4 && be16_get(v + 2) == 1450);
	v = set_tlv(DHCP_OPT_NTP, &n);
	CU_ASSERT(v != NULL && n == 10 && be32_get(v + 6) == 0x0a000003);
	v = set_tlv(DHCP_OPT_DOMAIN_NAME, &n);
	CU_ASSERT(v != NULL && n == 13 && memcmp(v + 2, "example.org", 11) == 0);
}

static void
test_optset_invalid(void)
{
	struct dhcp_options o;

	base_options(&o);
	o.server_ip = 0;
	CU_ASSERT_EQUAL(dhcp_optset_compile(&set, &o), -EINVAL);
	base_options(&o);
	o.prefix = 33;
	CU_ASSERT_EQUAL(dhcp_optset_compile(&set, &o), -EINVAL);
	base_options(&o);
	o.n_dns = DHCP_MAX_DNS + 1;
	CU_ASSERT_EQUAL(dhcp_optset_compile(&set, &o), -EINVAL);
	base_options(&o);
	o.mtu = 67;
	CU_ASSERT_EQUAL(dhcp_optset_compile(&set, &o), -EINVAL);
	base_options(&o);
	memset(o.domain_name, 'a', sizeof(o.domain_name)); /* not terminated */
	CU_ASSERT_EQUAL(dhcp_optset_compile(&set, &o), -EINVAL);
	base_options(&o);
	o.routes[0].prefix = 33;
	o.n_routes = 1;
	CU_ASSERT_EQUAL(dhcp_optset_compile(&set, &o), -EINVAL);
	base_options(&o);
	strcpy(o.search[0], "bad..name");
	o.n_search = 1;
	CU_ASSERT_EQUAL(dhcp_optset_compile(&set, &o), -EINVAL);
}

/* --- framing ------------------------------------------------------------------------------- */

/* Independent RFC 1071 check: the one's-complement sum over data (+ pseudo) must be 0xffff. */
static unsigned
ones_sum(const uint8_t *p, size_t n, unsigned long acc)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		acc += (unsigned long)(p[i] * 256 + p[i + 1]);
	if (n & 1)
		acc += (unsigned long)p[n - 1] * 256;
	while (acc > 0xffff)
		acc = (acc & 0xffff) + (acc >> 16);
	return (unsigned)acc;
}

static bool
frame_checksums_ok(const uint8_t *f, size_t len)
{
	const uint8_t *ip = f + 14, *udp = f + 34;
	size_t ulen = (size_t)udp[4] * 256 + udp[5];
	unsigned long pseudo = 0;

	if (len < 42 || ones_sum(ip, 20, 0) != 0xffff)
		return false;
	for (int i = 12; i < 20; i += 2)
		pseudo += (unsigned long)(ip[i] * 256 + ip[i + 1]);
	pseudo += 17 + ulen;
	return ones_sum(udp, ulen, pseudo) == 0xffff;
}

static uint8_t frame[DHCP_TX_BUF];

static size_t
build_frame(size_t payload_len, uint16_t dport)
{
	static const uint8_t src[6] = {2, 0, 0, 0, 0, 1},
			     dst[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	for (size_t i = 0; i < payload_len; i++)
		frame[DHCP_FRAME_HEADROOM + i] = (uint8_t)(i * 7 + 3);
	return dhcp_frame_build(
	    frame + DHCP_FRAME_HEADROOM, payload_len, src, dst, 0x0a000001, 0xffffffff, 68, dport);
}

static void
test_frame_build(void)
{
	size_t n = build_frame(301, 68); /* odd length */

	CU_ASSERT_EQUAL(n, 343);
	CU_ASSERT(frame_checksums_ok(frame, n));
	CU_ASSERT_EQUAL(frame[12], 0x08);
	CU_ASSERT_EQUAL(frame[13], 0x00);
	CU_ASSERT_EQUAL(frame[14], 0x45);
	CU_ASSERT_EQUAL(be16_get(frame + 16), 329); /* IP total length */
	CU_ASSERT_EQUAL(frame[23], 17);
	CU_ASSERT_EQUAL(be32_get(frame + 26), 0x0a000001);
	CU_ASSERT_EQUAL(be32_get(frame + 30), 0xffffffff);
	CU_ASSERT_EQUAL(be16_get(frame + 36), 68);
	CU_ASSERT_EQUAL(be16_get(frame + 38), 309); /* UDP length */
	n = build_frame(300, 68);
	CU_ASSERT(frame_checksums_ok(frame, n));
}

static void
test_frame_verify(void)
{
	struct dhcp_rx_meta meta;
	const uint8_t *p;
	size_t plen, n;
	enum dhcp_drop_reason why = _DHCP_DROP_MAX;

	n = build_frame(300, 67);
	CU_ASSERT_EQUAL(dhcp_frame_verify(frame, n, false, &meta, &p, &plen, &why), 0);
	CU_ASSERT(p == frame + 42 && plen == 300);
	CU_ASSERT_EQUAL(meta.src_ip, 0x0a000001);
	CU_ASSERT_EQUAL(meta.src_port, 68);
	/* trailing Ethernet padding is fine */
	CU_ASSERT_EQUAL(dhcp_frame_verify(frame, n + 10, false, &meta, &p, &plen, &why), 0);
	CU_ASSERT_EQUAL(plen, 300);
	/* corrupt payload: UDP checksum */
	frame[100] ^= 0x40;
	CU_ASSERT_EQUAL(dhcp_frame_verify(frame, n, false, &meta, &p, &plen, &why), -EBADMSG);
	CU_ASSERT_EQUAL(why, DHCP_DROP_BAD_CHECKSUM);
	/* ... unless the kernel says the checksum is not filled in yet */
	CU_ASSERT_EQUAL(dhcp_frame_verify(frame, n, true, &meta, &p, &plen, &why), 0);
	/* ... or it is 0 (none) */
	be16_put(frame + 40, 0);
	CU_ASSERT_EQUAL(dhcp_frame_verify(frame, n, false, &meta, &p, &plen, &why), 0);
	/* IP header checksum */
	n = build_frame(300, 67);
	frame[22] ^= 1; /* TTL */
	CU_ASSERT_EQUAL(dhcp_frame_verify(frame, n, true, &meta, &p, &plen, &why), -EBADMSG);
	CU_ASSERT_EQUAL(why, DHCP_DROP_BAD_CHECKSUM);
	/* wrong port */
	n = build_frame(300, 68);
	CU_ASSERT_EQUAL(dhcp_frame_verify(frame, n, false, &meta, &p, &plen, &why), -EBADMSG);
	CU_ASSERT_EQUAL(why, DHCP_DROP_NOT_FOR_US);
	/* truncated: IP total length beyond the frame */
	n = build_frame(300, 67);
	CU_ASSERT_EQUAL(dhcp_frame_verify(frame, n - 1, false, &meta, &p, &plen, &why), -EBADMSG);
	CU_ASSERT_EQUAL(why, DHCP_DROP_MALFORMED);
	CU_ASSERT_EQUAL(dhcp_frame_verify(frame, 20, false, &meta, &p, &plen, &why), -EBADMSG);
	CU_ASSERT_EQUAL(why, DHCP_DROP_MALFORMED);
	/* UDP length beyond the IP payload */
	be16_put(frame + 38, 400);
	CU_ASSERT_EQUAL(dhcp_frame_verify(frame, n, true, &meta, &p, &plen, &why), -EBADMSG);
	CU_ASSERT_EQUAL(why, DHCP_DROP_MALFORMED);
}

static void
reheader(void)
{
	be16_put(frame + 24, 0);
	be16_put(frame + 24, inet_fold(inet_sum(frame + 14, 20, 0)));
}

static void
test_frame_not_for_us(void)
{
	struct dhcp_rx_meta meta;
	const uint8_t *p;
	size_t plen, n;
	enum dhcp_drop_reason why = _DHCP_DROP_MAX;

	n = build_frame(300, 67);
	be16_put(frame + 20, 0x2000); /* MF */
	reheader();
	CU_ASSERT_EQUAL(dhcp_frame_verify(frame, n, true, &meta, &p, &plen, &why), -EBADMSG);
	CU_ASSERT_EQUAL(why, DHCP_DROP_NOT_FOR_US);
	n = build_frame(300, 67);
	frame[23] = 6; /* TCP */
	reheader();
	CU_ASSERT_EQUAL(dhcp_frame_verify(frame, n, true, &meta, &p, &plen, &why), -EBADMSG);
	CU_ASSERT_EQUAL(why, DHCP_DROP_NOT_FOR_US);
	n = build_frame(300, 67);
	frame[12] = 0x86; /* IPv6 ethertype */
	frame[13] = 0xdd;
	CU_ASSERT_EQUAL(dhcp_frame_verify(frame, n, true, &meta, &p, &plen, &why), -EBADMSG);
	CU_ASSERT_EQUAL(why, DHCP_DROP_NOT_FOR_US);
	n = build_frame(300, 67);
	frame[14] = 0x44; /* IHL 4 */
	CU_ASSERT_EQUAL(dhcp_frame_verify(frame, n, true, &meta, &p, &plen, &why), -EBADMSG);
	CU_ASSERT_EQUAL(why, DHCP_DROP_MALFORMED);
}

static const struct test_case codec_tests[] = {
    {"parse basic", test_parse_basic},
    {"parse malformed", test_parse_malformed},
    {"parse RFC 3396 concatenation", test_parse_concat},
    {"parse overload 52 incl. loops", test_parse_overload},
    {"option 57", test_max_size},
    {"119 RFC 3397 example", test_search_rfc3397},
    {"119 RFC 1035 example", test_search_rfc1035},
    {"119 invalid names", test_search_invalid},
    {"121 RFC 3442 vectors", test_routes_rfc3442},
    {"121 router as default", test_routes_default_router},
    {"TLV split", test_tlv_split},
    {"option set", test_optset},
    {"option set validation", test_optset_invalid},
    {"frame build checksums", test_frame_build},
    {"frame verify", test_frame_verify},
    {"frame not for us", test_frame_not_for_us},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dhcp-codec", .tests = codec_tests},
    {.name = NULL},
};

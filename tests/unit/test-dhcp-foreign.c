/* SPDX-License-Identifier: Apache-2.0 */
/* dhcp/foreign.c: server replies told apart (ours, another server's, not a reply), the probe. */
#include <string.h>

#include "dhcp/dhcp.h"
#include "dhcp/foreign.h"
#include "dhcp/option.h"
#include "dhcp/packet.h"
#include "dhcp/proto.h"
#include "lib/buf.h"
#include "tests/runner.h"

static const uint8_t own_mac[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x01};
static const uint8_t other_mac[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x99};
static const uint8_t vm_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x07};
#define SERVER_IP 0x0a000002u /* 10.0.0.2, the pool's serverIP */
#define OTHER_IP 0x0a0000feu  /* 10.0.0.254 */

static uint8_t frame[1024];

/* A server reply from src_mac/src_ip to 255.255.255.255:68; sid 0 = no option 54. */
static size_t
reply(const uint8_t src_mac[6], uint32_t src_ip, uint8_t op, int type, uint32_t sid, uint16_t sport,
    uint16_t dport)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint8_t *p = frame + DHCP_FRAME_HEADROOM, *o;
	struct dhcp_msg *m = (void *)p;

	memset(frame, 0, sizeof(frame));
	m->op = op;
	m->htype = 1;
	m->hlen = 6;
	be32_put(m->xid, 0x12345678);
	be32_put(m->yiaddr, 0x0a000063);
	memcpy(m->chaddr, vm_mac, 6);
	o = p + DHCP_FIXED_LEN;
	be32_put(o, DHCP_MAGIC_COOKIE);
	o += 4;
	if (type >= 0) {
		*o++ = DHCP_OPT_MESSAGE_TYPE;
		*o++ = 1;
		*o++ = (uint8_t)type;
	}
	if (sid) {
		*o++ = DHCP_OPT_SERVER_ID;
		*o++ = 4;
		be32_put(o, sid);
		o += 4;
	}
	*o = DHCP_OPT_END;
	return dhcp_frame_build(p, 300, src_mac, bcast, src_ip, 0xffffffffu, sport, dport);
}

static struct dhcp_foreign_own
own_set(void)
{
	struct dhcp_foreign_own own = {.n_mac = 1, .n_ip = 1};

	memcpy(own.mac[0], own_mac, 6);
	own.ip[0] = SERVER_IP;
	return own;
}

static void
test_foreign_offer(void)
{
	struct dhcp_foreign_own own = own_set();
	struct dhcp_foreign_reply r;
	size_t n;

	n = reply(other_mac, OTHER_IP, BOOTREPLY, DHCP_MSG_OFFER, OTHER_IP, 67, 68);
	CU_ASSERT_EQUAL(dhcp_foreign_classify(frame, n, false, &own, &r), DHCP_FOREIGN_SERVER);
	CU_ASSERT_EQUAL(memcmp(r.mac, other_mac, 6), 0);
	CU_ASSERT_EQUAL(r.server_ip, OTHER_IP);
	CU_ASSERT_EQUAL(r.msg_type, DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(r.xid, 0x12345678);
	CU_ASSERT_EQUAL(r.yiaddr, 0x0a000063);
	CU_ASSERT_EQUAL(memcmp(r.chaddr, vm_mac, 6), 0);
	/* ACK and NAK too; no option 54: the IPv4 source names the server */
	n = reply(other_mac, OTHER_IP, BOOTREPLY, DHCP_MSG_ACK, 0, 67, 68);
	CU_ASSERT_EQUAL(dhcp_foreign_classify(frame, n, false, &own, &r), DHCP_FOREIGN_SERVER);
	CU_ASSERT_EQUAL(r.server_ip, OTHER_IP);
	CU_ASSERT_EQUAL(r.msg_type, DHCP_MSG_ACK);
	n = reply(other_mac, OTHER_IP, BOOTREPLY, DHCP_MSG_NAK, 0x0a0000fd, 67, 68);
	CU_ASSERT_EQUAL(dhcp_foreign_classify(frame, n, false, &own, &r), DHCP_FOREIGN_SERVER);
	CU_ASSERT_EQUAL(r.server_ip, 0x0a0000fd);
	/* with no own set at all, still a server */
	CU_ASSERT_EQUAL(dhcp_foreign_classify(frame, n, false, NULL, &r), DHCP_FOREIGN_SERVER);
}

static void
test_own_replies(void)
{
	struct dhcp_foreign_own own = own_set();
	struct dhcp_foreign_reply r;
	size_t n;

	/* this agent: its MAC */
	n = reply(own_mac, SERVER_IP, BOOTREPLY, DHCP_MSG_OFFER, SERVER_IP, 67, 68);
	CU_ASSERT_EQUAL(dhcp_foreign_classify(frame, n, false, &own, &r), DHCP_FOREIGN_OWN);
	/* another replica of the pool: another MAC, the pool's serverIP as option 54 */
	n = reply(other_mac, SERVER_IP, BOOTREPLY, DHCP_MSG_ACK, SERVER_IP, 67, 68);
	CU_ASSERT_EQUAL(dhcp_foreign_classify(frame, n, false, &own, &r), DHCP_FOREIGN_OWN);
	/* ... or from the serverIP without option 54 */
	n = reply(other_mac, SERVER_IP, BOOTREPLY, DHCP_MSG_NAK, 0, 67, 68);
	CU_ASSERT_EQUAL(dhcp_foreign_classify(frame, n, false, &own, &r), DHCP_FOREIGN_OWN);
}

static void
test_not_replies(void)
{
	struct dhcp_foreign_own own = own_set();
	struct dhcp_foreign_reply r;
	size_t n;

	n = reply(other_mac, OTHER_IP, BOOTREQUEST, DHCP_MSG_OFFER, OTHER_IP, 67, 68);
	CU_ASSERT_EQUAL(dhcp_foreign_classify(frame, n, false, &own, &r), DHCP_FOREIGN_NONE);
	n = reply(other_mac, OTHER_IP, BOOTREPLY, DHCP_MSG_REQUEST, OTHER_IP, 67, 68);
	CU_ASSERT_EQUAL(dhcp_foreign_classify(frame, n, false, &own, &r), DHCP_FOREIGN_NONE);
	n = reply(other_mac, OTHER_IP, BOOTREPLY, -1, OTHER_IP, 67, 68); /* BOOTP, no type */
	CU_ASSERT_EQUAL(dhcp_foreign_classify(frame, n, false, &own, &r), DHCP_FOREIGN_NONE);
	n = reply(other_mac, OTHER_IP, BOOTREPLY, DHCP_MSG_OFFER, OTHER_IP, 68, 67);
	CU_ASSERT_EQUAL(dhcp_foreign_classify(frame, n, false, &own, &r), DHCP_FOREIGN_NONE);
	n = reply(other_mac, OTHER_IP, BOOTREPLY, DHCP_MSG_OFFER, OTHER_IP, 67, 67); /* relay */
	CU_ASSERT_EQUAL(dhcp_foreign_classify(frame, n, false, &own, &r), DHCP_FOREIGN_NONE);
	/* a bad UDP checksum is dropped unless the kernel says it was never computed */
	n = reply(other_mac, OTHER_IP, BOOTREPLY, DHCP_MSG_OFFER, OTHER_IP, 67, 68);
	frame[n - 1] ^= 0x55;
	CU_ASSERT_EQUAL(dhcp_foreign_classify(frame, n, false, &own, &r), DHCP_FOREIGN_NONE);
	CU_ASSERT_EQUAL(dhcp_foreign_classify(frame, n, true, &own, &r), DHCP_FOREIGN_SERVER);
	/* truncated anywhere: never a reply */
	n = reply(other_mac, OTHER_IP, BOOTREPLY, DHCP_MSG_OFFER, OTHER_IP, 67, 68);
	for (size_t cut = 0; cut < DHCP_FRAME_HEADROOM + DHCP_FIXED_LEN + 4; cut++)
		CU_ASSERT_EQUAL(
		    dhcp_foreign_classify(frame, cut, true, &own, &r), DHCP_FOREIGN_NONE);
}

static void
test_probe(void)
{
	struct dhcp_option_table t;
	uint8_t mac[6], mac2[6], buf[DHCP_FOREIGN_PROBE_LEN];
	const uint8_t *payload, *v;
	const struct dhcp_msg *m;
	struct dhcp_rx_meta meta;
	enum dhcp_drop_reason why;
	size_t n, plen, vlen;

	dhcp_foreign_probe_mac("default", "net-48", mac);
	dhcp_foreign_probe_mac("default", "net-48", mac2);
	CU_ASSERT_EQUAL(memcmp(mac, mac2, 6), 0); /* deterministic */
	CU_ASSERT_EQUAL(mac[0], 0x02);		  /* locally administered, unicast */
	CU_ASSERT_EQUAL(mac[1], 0x76);
	CU_ASSERT_EQUAL(mac[2], 0x6d);
	CU_ASSERT_TRUE(dhcp_foreign_is_probe_mac(mac));
	CU_ASSERT_FALSE(dhcp_foreign_is_probe_mac(vm_mac));
	dhcp_foreign_probe_mac("default", "net-49", mac2);
	CU_ASSERT_NOT_EQUAL(memcmp(mac, mac2, 6), 0);
	dhcp_foreign_probe_mac("defaultn", "et-48", mac2); /* the '/' separates */
	CU_ASSERT_NOT_EQUAL(memcmp(mac, mac2, 6), 0);

	n = dhcp_foreign_probe_build(buf, mac, 0xdeadbeef);
	CU_ASSERT_EQUAL_FATAL(n, DHCP_FOREIGN_PROBE_LEN);
	CU_ASSERT_EQUAL_FATAL(dhcp_frame_verify(buf, n, false, &meta, &payload, &plen, &why), 0);
	CU_ASSERT_EQUAL(memcmp(meta.src_mac, mac, 6), 0);
	CU_ASSERT_EQUAL(meta.src_ip, 0);
	CU_ASSERT_EQUAL(meta.dst_ip, 0xffffffffu);
	CU_ASSERT_EQUAL(meta.src_port, 68);
	CU_ASSERT_EQUAL(plen, 300);
	m = (const void *)payload;
	CU_ASSERT_EQUAL(m->op, BOOTREQUEST);
	CU_ASSERT_EQUAL(be32_get(m->xid), 0xdeadbeef);
	CU_ASSERT_EQUAL(be16_get(m->flags), DHCP_FLAG_BROADCAST);
	CU_ASSERT_EQUAL(memcmp(m->chaddr, mac, 6), 0);
	CU_ASSERT_EQUAL_FATAL(dhcp_option_parse(&t, payload, plen), 0);
	v = dhcp_option_get(&t, DHCP_OPT_MESSAGE_TYPE, &vlen);
	CU_ASSERT_TRUE(v && vlen == 1 && v[0] == DHCP_MSG_DISCOVER);
	v = dhcp_option_get(&t, DHCP_OPT_CLIENT_ID, &vlen);
	CU_ASSERT_TRUE(v && vlen == 7 && v[0] == 1 && memcmp(v + 1, mac, 6) == 0);
	CU_ASSERT_TRUE(dhcp_option_has(&t, DHCP_OPT_PRL));
	/* the probe is a request: never taken for a server reply */
	CU_ASSERT_EQUAL(dhcp_foreign_classify(buf, n, false, NULL, &(struct dhcp_foreign_reply){0}),
	    DHCP_FOREIGN_NONE);
}

static const struct test_case foreign_tests[] = {
    {"another server's OFFER, ACK and NAK", test_foreign_offer},
    {"our own and our replicas' replies", test_own_replies},
    {"requests, other ports, bad checksums, truncations", test_not_replies},
    {"probe MAC and DISCOVER", test_probe},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dhcp-foreign", .tests = foreign_tests},
    {.name = NULL},
};

/* SPDX-License-Identifier: Apache-2.0 */
/* agent/arp.c: the gratuitous ARP the active replica announces its serverIP with, the ARP
 * probes and the filtered socket it fences it with. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>

#include "agent/arp.h"
#include "tests/runner.h"

static const uint8_t hw[6] = {0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc};

/* RFC 5227 §2.3 announcement, byte for byte */
static void
test_garp_frame(void)
{
	static const uint8_t want[AGENT_GARP_LEN] = {
	    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* broadcast */
	    0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc, /* from us */
	    0x08, 0x06,				/* ARP */
	    0x00, 0x01, 0x08, 0x00, 0x06, 0x04, /* Ethernet / IPv4, 6, 4 */
	    0x00, 0x01,				/* request */
	    0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc, /* sender MAC */
	    10, 66, 0, 1,			/* sender IP = serverIP */
	    0, 0, 0, 0, 0, 0,			/* target MAC: zero */
	    10, 66, 0, 1,			/* target IP = serverIP */
	};
	uint8_t f[AGENT_GARP_LEN];

	memset(f, 0x5a, sizeof(f));
	agent_garp_build(f, hw, 0x0a420001);
	CU_ASSERT_EQUAL(memcmp(f, want, sizeof(want)), 0);
}

/* Sent on a packet socket; a socket that cannot send is a clear errno, never a crash. */
static void
test_garp_send_errors(void)
{
	int sv[2];

	CU_ASSERT_EQUAL(agent_garp_send(-1, 1, hw, 0x0a420001), -EBADF);
	CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) == 0);
	/* not a packet socket: the kernel refuses the AF_PACKET address */
	CU_ASSERT(agent_garp_send(sv[0], 1, hw, 0x0a420001) < 0);
	close(sv[0]);
	close(sv[1]);
}

/* With root, on loopback's packet socket: the frame leaves (loopback takes any frame). */
static void
test_garp_send_loopback(void)
{
	int fd;

	if (test_require_root() != 0)
		return;
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(agent_garp_send(fd, 1, hw, 0x7f000001), 0);
	close(fd);
}

/* RFC 5227 §2.1.1 probe: sender IP 0, target the address asked for. */
static void
test_probe_frame(void)
{
	uint8_t f[AGENT_GARP_LEN], g[AGENT_GARP_LEN];

	agent_arp_probe_build(f, hw, 0x0a420001);
	agent_garp_build(g, hw, 0x0a420001);
	/* the same frame but the sender IP */
	CU_ASSERT_EQUAL(memcmp(f, g, 28), 0);
	CU_ASSERT_EQUAL(memcmp(f + 32, g + 32, AGENT_GARP_LEN - 32), 0);
	CU_ASSERT(f[28] == 0 && f[29] == 0 && f[30] == 0 && f[31] == 0);
}

static void
test_classify(void)
{
	static const uint8_t other[6] = {0x52, 0x54, 0x00, 0x11, 0x22, 0x33};
	uint8_t f[AGENT_GARP_LEN], mac[6] = {0};

	/* another MAC announcing the address: a claim */
	agent_garp_build(f, other, 0x0a420001);
	CU_ASSERT_EQUAL(agent_arp_classify(f, sizeof(f), hw, 0x0a420001, mac), AGENT_ARP_CLAIM);
	CU_ASSERT_EQUAL(memcmp(mac, other, 6), 0);
	/* a reply from the holder (opcode 2) is a claim too */
	f[21] = 2;
	CU_ASSERT_EQUAL(agent_arp_classify(f, sizeof(f), hw, 0x0a420001, mac), AGENT_ARP_CLAIM);
	/* about another address: nothing */
	CU_ASSERT_EQUAL(agent_arp_classify(f, sizeof(f), hw, 0x0a420002, mac), AGENT_ARP_OTHER);
	/* our own frame: nothing */
	agent_garp_build(f, hw, 0x0a420001);
	CU_ASSERT_EQUAL(agent_arp_classify(f, sizeof(f), hw, 0x0a420001, mac), AGENT_ARP_OTHER);
	/* another MAC probing for it */
	agent_arp_probe_build(f, other, 0x0a420001);
	CU_ASSERT_EQUAL(agent_arp_classify(f, sizeof(f), hw, 0x0a420001, mac), AGENT_ARP_PROBE);
	/* truncated, not ARP, not IPv4 over Ethernet, a bad opcode: nothing, never a read past */
	CU_ASSERT_EQUAL(agent_arp_classify(f, sizeof(f) - 1, hw, 0x0a420001, mac), AGENT_ARP_OTHER);
	f[13] = 0x00;
	CU_ASSERT_EQUAL(agent_arp_classify(f, sizeof(f), hw, 0x0a420001, mac), AGENT_ARP_OTHER);
	agent_arp_probe_build(f, other, 0x0a420001);
	f[19] = 16;
	CU_ASSERT_EQUAL(agent_arp_classify(f, sizeof(f), hw, 0x0a420001, mac), AGENT_ARP_OTHER);
	agent_arp_probe_build(f, other, 0x0a420001);
	f[21] = 3;
	CU_ASSERT_EQUAL(agent_arp_classify(f, sizeof(f), hw, 0x0a420001, mac), AGENT_ARP_OTHER);
}

/* The filtered socket on loopback: our own probe is not delivered back (sent, not received). */
static void
test_arp_socket(void)
{
	int fd = -1;

	if (test_require_root() != 0)
		return;
	CU_ASSERT_EQUAL_FATAL(agent_arp_open(1, 0x0a420001, &fd), 0);
	CU_ASSERT_EQUAL(agent_arp_probe_send(fd, 1, hw, 0x0a420001), 0);
	CU_ASSERT_EQUAL(agent_arp_set_filter(fd, 0x0a420002), 0);
	close(fd);
}

static const struct test_case arp_tests[] = {
    {"gratuitous ARP: RFC 5227 announcement", test_garp_frame},
    {"gratuitous ARP: send errors", test_garp_send_errors},
    {"gratuitous ARP: sent on a packet socket", test_garp_send_loopback},
    {"ARP probe: RFC 5227", test_probe_frame},
    {"ARP: claims and probes of the address told apart", test_classify},
    {"ARP socket: filtered, moved to a new address", test_arp_socket},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "agent-arp", .tests = arp_tests},
    {.name = NULL},
};

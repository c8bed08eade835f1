/* SPDX-License-Identifier: Apache-2.0 */
/* agent/ha.c: the gratuitous ARP the active replica announces its serverIP with. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>

#include "agent/agent.h"
#include "tests/runner.h"

static const uint8_t hw[6] = { 0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc };

/* RFC 5227 §2.3 announcement, byte for byte */
static void
test_garp_frame(void)
{
	static const uint8_t want[AGENT_GARP_LEN] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff,	/* broadcast */
		0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc,	/* from us */
		0x08, 0x06,				/* ARP */
		0x00, 0x01, 0x08, 0x00, 0x06, 0x04,	/* Ethernet / IPv4, 6, 4 */
		0x00, 0x01,				/* request */
		0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc,	/* sender MAC */
		10, 66, 0, 1,				/* sender IP = serverIP */
		0, 0, 0, 0, 0, 0,			/* target MAC: zero */
		10, 66, 0, 1,				/* target IP = serverIP */
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

static const struct test_case ha_tests[] = {
    {"gratuitous ARP: RFC 5227 announcement", test_garp_frame},
    {"gratuitous ARP: send errors", test_garp_send_errors},
    {"gratuitous ARP: sent on a packet socket", test_garp_send_loopback},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "agent-ha", .tests = ha_tests},
    {.name = NULL},
};

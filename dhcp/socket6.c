/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DHCPv6 sockets. The packet socket follows the raw socket recipe of dhcp/socket-raw.h
 * (filter attached, ring, bound to ETH_P_IPV6, filter locked, only then read) with the filter
 * below, and joins the two multicast groups. UDP [::]:547 on the device: never read (a drop-all
 * filter attached before bind), there so the kernel sends no ICMPv6 port-unreachable.
 */
#include "dhcp/socket6.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dhcp/packet6.h"
#include "dhcp/ra.h"

#define DHCP6_PORT_SERVER 547			 /* RFC 8415 §7.2 */
#define ETH_IP6 PACKET6_ETH_LEN			 /* the IPv6 header in the frame */
#define ETH_IP6_NEXT (ETH_IP6 + PACKET6_IP6_LEN) /* the header after it */

#define ACCEPT 23 /* index of the "ret #frame" instruction below */
#define DROP 24	  /* index of the "ret #0" instruction below */

/*
 * IPv6, at most one Hop-by-Hop Options header (RFC 8200 §4.1: only right after the IPv6
 * header; packet6_parse walks the same one), then UDP to port 547 or ICMPv6 type 133
 * (Router Solicitation); not our own output, not unicast to another host. Any other
 * extension header first (a fragment, say) is dropped here, as packet6_parse would.
 */
static const struct sock_filter dhcp6_bpf[] = {
    /* 0: A = packet type (ancillary data) */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
    /* 1: our own transmissions -> drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, DROP - 2, 0),
    /* 2: unicast to another host (promiscuous port) -> drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OTHERHOST, DROP - 3, 0),
    /* 3: A = Ethernet type */
    BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
    /* 4: IPv6? else drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IPV6, 0, DROP - 5),
    /* 5: A = version / traffic class byte */
    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, ETH_IP6),
    /* 6: keep the version nibble */
    BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf0),
    /* 7: version 6? else drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x60, 0, DROP - 8),
    /* 8: X = offset of the header after the IPv6 header */
    BPF_STMT(BPF_LDX | BPF_W | BPF_IMM, ETH_IP6_NEXT),
    /* 9: A = IPv6 next header */
    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, ETH_IP6 + 6),
    /* 10: Hop-by-Hop Options (0)? else go look at A as the upper layer (17) */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 17 - 11),
    /* 11: A = its Hdr Ext Len (8-octet units past the first 8) */
    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, ETH_IP6_NEXT + 1),
    /* 12: A += 1 */
    BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 1),
    /* 13: A *= 8: the header's length */
    BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 3),
    /* 14: A += offset of the Hop-by-Hop header */
    BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, ETH_IP6_NEXT),
    /* 15: X = A: offset of the header after it */
    BPF_STMT(BPF_MISC | BPF_TAX, 0),
    /* 16: A = the Hop-by-Hop header's next header */
    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, ETH_IP6_NEXT),
    /* 17: UDP? else try ICMPv6 (20) */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, 20 - 18),
    /* 18: A = UDP destination port (X + 2) */
    BPF_STMT(BPF_LD | BPF_H | BPF_IND, 2),
    /* 19: port 547? accept, else drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, DHCP6_PORT_SERVER, ACCEPT - 20, DROP - 20),
    /* 20: ICMPv6? else drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_ICMPV6, 0, DROP - 21),
    /* 21: A = ICMPv6 type (X + 0) */
    BPF_STMT(BPF_LD | BPF_B | BPF_IND, 0),
    /* 22: Router Solicitation? accept, else drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ICMP6_ROUTER_SOLICIT_, 0, DROP - 23),
    /* 23 (ACCEPT): the whole frame */
    BPF_STMT(BPF_RET | BPF_K, 0xffff),
    /* 24 (DROP): drop */
    BPF_STMT(BPF_RET | BPF_K, 0),
};
_Static_assert(sizeof(dhcp6_bpf) / sizeof(dhcp6_bpf[0]) == DROP + 1, "DROP is the last insn");
_Static_assert(ACCEPT + 1 == DROP, "ACCEPT comes right before DROP");

static const struct sock_filter drop_all[] = {
    /* 0: drop everything (the UDP socket exists, but we read the packet socket) */
    BPF_STMT(BPF_RET | BPF_K, 0),
};

/* ff02::1:2 (RFC 8415 §7.1) and ff02::2 (RFC 4291 §2.7.1), and their Ethernet groups
 * (RFC 2464 §7: 33:33 + the last 32 bits). */
static const uint8_t groups[][16] = {
    {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2},
    {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2},
};

static int
open_packet(int ifindex, struct dhcp_ring *ring)
{
	int fd = dhcp_socket_open_filtered(
	    ifindex, ETH_P_IPV6, dhcp6_bpf, sizeof(dhcp6_bpf) / sizeof(dhcp6_bpf[0]), ring);

	if (fd < 0)
		return fd;
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		struct packet_mreq mr = {
		    .mr_ifindex = ifindex, .mr_type = PACKET_MR_MULTICAST, .mr_alen = ETH_ALEN};

		mr.mr_address[0] = 0x33;
		mr.mr_address[1] = 0x33;
		memcpy(mr.mr_address + 2, groups[i] + 12, 4);
		if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0) {
			int r = -errno;

			if (ring != NULL)
				dhcp_socket_ring_close(ring);
			close(fd);
			return r;
		}
	}
	return fd;
}

static int
open_udp(int ifindex, const char *ifname)
{
	struct sock_fprog prog = {.len = 1, .filter = (struct sock_filter *)drop_all};
	struct sockaddr_in6 sin6 = {
	    .sin6_family = AF_INET6,
	    .sin6_port = htons(DHCP6_PORT_SERVER),
	    .sin6_addr = IN6ADDR_ANY_INIT,
	};
	int fd, one = 1, r;

	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
		goto fail;
	if (ifname != NULL && ifname[0] != '\0' &&
	    setsockopt(
		fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strnlen(ifname, IFNAMSIZ)) < 0)
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0)
		goto fail;
	if (bind(fd, (struct sockaddr *)&sin6, sizeof(sin6)) < 0)
		goto fail;
	/*
	 * The IPv6 stack's own memberships: MLD reports go out, so a bridge that snoops MLD
	 * forwards these groups to us (the packet socket's memberships only open the device's
	 * filter). ff02::2 as well: router solicitations are sent there.
	 */
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		struct ipv6_mreq mr = {.ipv6mr_interface = (unsigned)ifindex};

		memcpy(&mr.ipv6mr_multiaddr, groups[i], 16);
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &mr, sizeof(mr)) < 0)
			goto fail;
	}
	return fd;
fail:
	r = -errno;
	close(fd);
	return r;
}

int
socket6_open(
    int ifindex, const char *ifname, struct dhcp_ring *ring, int *ret_packet_fd, int *ret_udp_fd)
{
	int pfd, ufd;

	if (ifindex <= 0)
		return -EINVAL;
	pfd = open_packet(ifindex, ring);
	if (pfd < 0)
		return pfd;
	ufd = open_udp(ifindex, ifname);
	if (ufd < 0) {
		if (ring != NULL)
			dhcp_socket_ring_close(ring);
		close(pfd);
		return ufd;
	}
	*ret_packet_fd = pfd;
	*ret_udp_fd = ufd;
	return 0;
}

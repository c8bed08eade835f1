/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The raw socket recipe, in one file. AF_PACKET: created with protocol 0 (receives
 * nothing), BPF filter attached, bound to ETH_P_IP on the ifindex, filter locked, and only
 * then read. Every reply is a frame we build, sent on the same socket (relay and ciaddr
 * replies to the Ethernet source of the request: dhcp/reply.c). UDP :67 on the device: never
 * read, written or watched (a drop-all filter, attached before bind, so it never holds a
 * datagram); it exists so the kernel has a socket for port 67 and sends no ICMP
 * port-unreachable for unicast renewals and relayed requests.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dhcp/dhcp-internal.h"

#ifndef SO_LOCK_FILTER
#define SO_LOCK_FILTER 44
#endif

#define DROP 16 /* index of the "ret #0" instruction below */

/* IPv4, UDP, not a fragment, destination port 67, not our own output. */
static const struct sock_filter dhcp_bpf[] = {
    /* 0: A = packet type (ancillary data) */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
    /* 1: our own transmissions (relay replies to port 67 would loop) -> drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, DROP - 2, 0),
    /* 2: unicast to another host (promiscuous port) -> drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OTHERHOST, DROP - 3, 0),
    /* 3: A = Ethernet type */
    BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),
    /* 4: IPv4? else drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, DROP - 5),
    /* 5: A = IP version/IHL byte */
    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 14),
    /* 6: keep the version nibble */
    BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf0),
    /* 7: version 4? else drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x40, 0, DROP - 8),
    /* 8: A = IP protocol */
    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 14 + 9),
    /* 9: UDP? else drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, DROP - 10),
    /* 10: A = IP flags + fragment offset */
    BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 14 + 6),
    /* 11: MF set or offset non-zero: a fragment -> drop */
    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x3fff, DROP - 12, 0),
    /* 12: X = IP header length (4 * IHL, BPF_MSH) */
    BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 14),
    /* 13: A = UDP destination port (Ethernet 14 + IHL + 2) */
    BPF_STMT(BPF_LD | BPF_H | BPF_IND, 14 + 2),
    /* 14: port 67? else drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, DHCP_PORT_SERVER, 0, DROP - 15),
    /* 15: accept the whole frame */
    BPF_STMT(BPF_RET | BPF_K, 0xffff),
    /* 16 (DROP): drop */
    BPF_STMT(BPF_RET | BPF_K, 0),
};
_Static_assert(sizeof(dhcp_bpf) / sizeof(dhcp_bpf[0]) == DROP + 1, "DROP is the last insn");

static const struct sock_filter drop_all[] = {
    /* 0: drop everything (the UDP socket exists, but we read the packet socket) */
    BPF_STMT(BPF_RET | BPF_K, 0),
};

static size_t
align_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

void
dhcp_ring_geometry(struct dhcp_ring *ring, unsigned mtu)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (mtu < DHCP_RING_MTU_MIN)
		mtu = DHCP_RING_MTU_MIN;
	if (mtu > DHCP_RING_MTU_MAX)
		mtu = DHCP_RING_MTU_MAX;
	if (page == 0 || page > (64u << 10))
		page = 4096;
	/*
	 * The kernel puts the network header at TPACKET_ALIGN(TPACKET2_HDRLEN + max(maclen, 16))
	 * into the slot and truncates past its end (tp_snaplen < tp_len): room for that, an
	 * Ethernet header with one VLAN tag, and mtu bytes of IP.
	 */
	ring->frame_size = TPACKET_ALIGN(TPACKET_ALIGN(TPACKET2_HDRLEN + ETH_HLEN + 4) + mtu);
	if (ring->frame_size < 2048)
		ring->frame_size = 2048;
	ring->block_size = align_up(ring->frame_size, page);
	if (ring->block_size < DHCP_RING_BLOCK_MIN)
		ring->block_size = DHCP_RING_BLOCK_MIN;
	ring->frames_per_block = ring->block_size / ring->frame_size;
	ring->frame_nr = DHCP_RING_MEM / ring->block_size;
	if (ring->frame_nr < DHCP_RING_BLOCK_NR_MIN)
		ring->frame_nr = DHCP_RING_BLOCK_NR_MIN;
	ring->map_len = ring->block_size * ring->frame_nr; /* frame_nr is block_nr here */
	ring->frame_nr *= ring->frames_per_block;
}

/* MTU of the interface ifindex (queried through fd), or 0 when unknown. */
static unsigned
link_mtu(int fd, int ifindex)
{
	char name[IF_NAMESIZE];
	int mtu;

	if (if_indextoname((unsigned)ifindex, name) == NULL)
		return 0;
	mtu = dhcp_socket_mtu(fd, name);
	return mtu > 0 ? (unsigned)mtu : 0;
}

/* TPACKET_V2 ring before bind: the first frame already lands in it. Best effort. */
static void
ring_setup(int fd, struct dhcp_ring *ring, unsigned mtu)
{
	struct tpacket_req req;
	int version = TPACKET_V2;
	void *m;

	memset(ring, 0, sizeof(*ring));
	dhcp_ring_geometry(ring, mtu);
	req = (struct tpacket_req){
	    .tp_block_size = (unsigned)ring->block_size,
	    .tp_block_nr = (unsigned)(ring->map_len / ring->block_size),
	    .tp_frame_size = (unsigned)ring->frame_size,
	    .tp_frame_nr = (unsigned)ring->frame_nr,
	};
	if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)) < 0)
		return;
	if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0)
		goto fallback;
	m = mmap(NULL, ring->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		req = (struct tpacket_req){0};
		(void)setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req));
		goto fallback;
	}
	ring->map = m;
	return;
fallback:
	version = TPACKET_V1;
	(void)setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version));
}

int
dhcp_socket_ring_resize(int fd, struct dhcp_ring *ring, unsigned mtu)
{
	struct tpacket_req req = {0};

	dhcp_socket_ring_close(ring);
	/* the kernel frees a ring only unmapped; a new geometry needs the old one gone */
	if (setsockopt(fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0)
		return -errno;
	ring_setup(fd, ring, mtu);
	/* without a ring, recvmmsg reads the socket (DHCP_RX_BUF bytes a frame) */
	return ring->map != NULL ? 0 : -ENOMEM;
}

void
dhcp_socket_ring_close(struct dhcp_ring *ring)
{
	if (ring->map != NULL)
		munmap(ring->map, ring->map_len);
	ring->map = NULL;
	ring->cur = 0;
}

int
dhcp_socket_ring_next(struct dhcp_ring *ring, dhcp_ring_frame_fn fn, void *userdata)
{
	int n = 0;

	if (ring->map == NULL)
		return -EBADF;
	while (n < (int)ring->frame_nr) {
		struct tpacket2_hdr *h =
		    (struct tpacket2_hdr *)(ring->map +
					    ring->cur / ring->frames_per_block * ring->block_size +
					    ring->cur % ring->frames_per_block * ring->frame_size);
		uint32_t status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
		const struct sockaddr_ll *sll;

		if ((status & TP_STATUS_USER) == 0)
			break;
		sll = (const struct sockaddr_ll *)((const uint8_t *)h + TPACKET_ALIGN(sizeof(*h)));
		/* our own output (the filter drops it already): skipped, not counted. A frame
		 * longer than its slot is cut to it (tp_snaplen < tp_len): fn is told both. */
		if (sll->sll_pkttype != PACKET_OUTGOING)
			fn(userdata, (const uint8_t *)h + h->tp_mac, h->tp_snaplen,
			    h->tp_len > h->tp_snaplen ? h->tp_len : h->tp_snaplen,
			    (status & TP_STATUS_CSUMNOTREADY) != 0);
		__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		ring->cur = (ring->cur + 1) % ring->frame_nr;
		n++;
	}
	return n > 0 ? n : -EAGAIN;
}

bool
dhcp_socket_ring_ready(const struct dhcp_ring *ring)
{
	const struct tpacket2_hdr *h;

	if (ring->map == NULL)
		return false;
	h = (const struct tpacket2_hdr *)(ring->map +
					  ring->cur / ring->frames_per_block * ring->block_size +
					  ring->cur % ring->frames_per_block * ring->frame_size);
	return (__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER) != 0;
}

void
dhcp_kernel_stats_add(struct dhcp_stats *st, unsigned packets, unsigned drops)
{
	st->kernel_received += packets;
	st->kernel_drops += drops;
}

int
dhcp_socket_packet_stats(int fd, struct dhcp_stats *st)
{
	struct tpacket_stats k;
	socklen_t len = sizeof(k);

	if (fd < 0)
		return -EBADF;
	memset(&k, 0, sizeof(k));
	/* TPACKET_V2 (and no ring): struct tpacket_stats; read and reset by the kernel */
	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &k, &len) < 0)
		return -errno;
	dhcp_kernel_stats_add(st, k.tp_packets, k.tp_drops);
	return 0;
}

int
dhcp_socket_open_packet(int ifindex, struct dhcp_ring *ring)
{
	struct sock_fprog prog = {.len = sizeof(dhcp_bpf) / sizeof(dhcp_bpf[0]),
	    .filter = (struct sock_filter *)dhcp_bpf};
	struct sockaddr_ll sll = {
	    .sll_family = AF_PACKET,
	    .sll_protocol = htons(ETH_P_IP),
	    .sll_ifindex = ifindex,
	};
	int fd, one = 1, r;

	/* protocol 0: nothing is queued before the filter is in place */
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0)
		goto fail;
	if (setsockopt(fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one)) < 0)
		goto fail;
	if (ring != NULL)
		ring_setup(fd, ring, link_mtu(fd, ifindex));
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_LOCK_FILTER, &one, sizeof(one)) < 0)
		goto fail;
	return fd;
fail:
	r = -errno;
	if (ring != NULL)
		dhcp_socket_ring_close(ring);
	close(fd);
	return r;
}

int
dhcp_socket_open_udp(const char *ifname)
{
	struct sock_fprog prog = {.len = 1, .filter = (struct sock_filter *)drop_all};
	struct sockaddr_in sin = {
	    .sin_family = AF_INET,
	    .sin_port = htons(DHCP_PORT_SERVER),
	    .sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int fd, one = 1, r;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)) < 0)
		goto fail;
	if (ifname != NULL && ifname[0] != '\0' &&
	    setsockopt(
		fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strnlen(ifname, IFNAMSIZ)) < 0)
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0)
		goto fail;
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		goto fail;
	return fd;
fail:
	r = -errno;
	close(fd);
	return r;
}

int
dhcp_socket_recv_packets(int fd, uint8_t (*bufs)[DHCP_RX_BUF], size_t n, size_t *ret_len,
    bool *ret_csum, bool *ret_trunc)
{
	struct mmsghdr msgs[DHCP_BATCH];
	struct iovec iov[DHCP_BATCH];
	struct sockaddr_ll from[DHCP_BATCH];
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	} ctl[DHCP_BATCH];
	int r;

	if (n > DHCP_BATCH)
		n = DHCP_BATCH;
	for (size_t i = 0; i < n; i++) {
		iov[i] = (struct iovec){.iov_base = bufs[i], .iov_len = DHCP_RX_BUF};
		msgs[i].msg_hdr = (struct msghdr){
		    .msg_name = &from[i],
		    .msg_namelen = sizeof(from[i]),
		    .msg_iov = &iov[i],
		    .msg_iovlen = 1,
		    .msg_control = ctl[i].buf,
		    .msg_controllen = sizeof(ctl[i].buf),
		};
		msgs[i].msg_len = 0;
	}
	/* MSG_TRUNC: a packet socket then gives a cut frame's length on the wire */
	r = recvmmsg(fd, msgs, (unsigned)n, MSG_DONTWAIT | MSG_TRUNC, NULL);
	if (r < 0)
		return -errno;
	for (int i = 0; i < r; i++) {
		struct msghdr *mh = &msgs[i].msg_hdr;

		ret_csum[i] = false;
		/* a frame longer than the buffer is cut to it: the caller counts it (ret_len is
		 * then its length on the wire, past the buffer: not to be read) */
		ret_trunc[i] = (mh->msg_flags & MSG_TRUNC) != 0 || msgs[i].msg_len > DHCP_RX_BUF;
		ret_len[i] = msgs[i].msg_len;
		/* our own output (the filter drops it already): length 0 = skip, not counted */
		if (from[i].sll_pkttype == PACKET_OUTGOING)
			ret_len[i] = 0;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c != NULL; c = CMSG_NXTHDR(mh, c)) {
			struct tpacket_auxdata aux;

			if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA ||
			    c->cmsg_len < CMSG_LEN(sizeof(aux)))
				continue;
			memcpy(&aux, CMSG_DATA(c), sizeof(aux));
			/* virtual NICs hand us frames whose UDP checksum is still to be filled */
			ret_csum[i] = (aux.tp_status & TP_STATUS_CSUMNOTREADY) != 0;
		}
	}
	return r;
}

int
dhcp_socket_mtu(int fd, const char *ifname)
{
	struct ifreq ifr;

	if (ifname == NULL || ifname[0] == '\0')
		return -EINVAL;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0)
		return -errno;
	return ifr.ifr_mtu;
}

/* sendmmsg with retry past a failing message; marks sent[i]. */
static int
send_batch(int fd, struct mmsghdr *msgs, size_t n, size_t *idx, bool *sent)
{
	size_t done = 0;
	int ok = 0;

	while (done < n) {
		int r = sendmmsg(fd, msgs + done, (unsigned)(n - done), MSG_DONTWAIT);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			done++; /* this one failed; the rest may still go */
			continue;
		}
		for (int i = 0; i < r; i++)
			sent[idx[done + (size_t)i]] = true;
		ok += r;
		done += (size_t)r;
	}
	return ok;
}

int
dhcp_socket_send(int packet_fd, int ifindex, struct dhcp_reply **replies, size_t n, bool *ret_sent)
{
	struct mmsghdr raw[DHCP_BATCH];
	struct iovec raw_iov[DHCP_BATCH];
	struct sockaddr_ll lls[DHCP_BATCH];
	size_t raw_idx[DHCP_BATCH], n_raw = 0;

	if (n > DHCP_BATCH)
		n = DHCP_BATCH;
	for (size_t i = 0; i < n; i++) {
		struct dhcp_reply *r = replies[i];
		size_t k;

		ret_sent[i] = false;
		if (!r->dest.raw || r->frame == NULL)
			continue; /* a bare message's reply (tests): nothing to send */
		k = n_raw++;
		lls[k] = (struct sockaddr_ll){
		    .sll_family = AF_PACKET,
		    .sll_protocol = htons(ETH_P_IP),
		    .sll_ifindex = ifindex,
		    .sll_halen = ETH_ALEN,
		};
		memcpy(lls[k].sll_addr, r->dest.mac, 6);
		raw_iov[k] = (struct iovec){.iov_base = r->frame, .iov_len = r->frame_len};
		raw[k].msg_hdr = (struct msghdr){.msg_name = &lls[k],
		    .msg_namelen = sizeof(lls[k]),
		    .msg_iov = &raw_iov[k],
		    .msg_iovlen = 1};
		raw_idx[k] = i;
	}
	if (n_raw == 0 || packet_fd < 0)
		return 0;
	return send_batch(packet_fd, raw, n_raw, raw_idx, ret_sent);
}

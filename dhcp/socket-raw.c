/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The raw packet socket of both servers (dhcp/socket-raw.h): open with a filter and an
 * Ethernet type, the TPACKET_V2 receive ring, recvmmsg without one, batch send, the kernel's
 * counters. The filters and the UDP keep-away sockets are the families' own (dhcp/socket.c,
 * dhcp/socket6.c).
 */
#include "dhcp/socket-raw.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_LOCK_FILTER
#define SO_LOCK_FILTER 44
#endif

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
		ring->frame_rx_usec = (uint64_t)h->tp_sec * 1000000u + h->tp_nsec / 1000u;
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

uint64_t
dhcp_ring_frame_time(const struct dhcp_ring *ring, uint64_t now, int64_t rt_now)
{
	const uint64_t max_age = 10u * 1000000u;
	uint64_t rx = ring->frame_rx_usec, age;

	if (rx == 0 || rt_now <= 0 || rx >= (uint64_t)rt_now)
		return now;
	age = (uint64_t)rt_now - rx;
	if (age > max_age || age > now)
		return now;
	return now - age;
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

int
dhcp_socket_kernel_stats(int fd, unsigned *ret_packets, unsigned *ret_drops)
{
	struct tpacket_stats k;
	socklen_t len = sizeof(k);

	if (fd < 0)
		return -EBADF;
	memset(&k, 0, sizeof(k));
	/* TPACKET_V2 (and no ring): struct tpacket_stats; read and reset by the kernel */
	if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &k, &len) < 0)
		return -errno;
	*ret_packets = k.tp_packets;
	*ret_drops = k.tp_drops;
	return 0;
}

int
dhcp_socket_open_filtered(int ifindex, uint16_t ethertype, const struct sock_filter *filter,
    unsigned n_filter, struct dhcp_ring *ring)
{
	struct sock_fprog prog = {
	    .len = (unsigned short)n_filter, .filter = (struct sock_filter *)filter};
	struct sockaddr_ll sll = {
	    .sll_family = AF_PACKET,
	    .sll_protocol = htons(ethertype),
	    .sll_ifindex = ifindex,
	};
	int fd, one = 1, r;

	if (ifindex <= 0 || n_filter == 0 || n_filter > BPF_MAXINSNS)
		return -EINVAL;
	if (ring != NULL)
		memset(ring, 0, sizeof(*ring));
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

/* The PACKET_AUXDATA checksum-not-ready bit of a received message. */
static bool
csum_not_ready(struct msghdr *mh)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c != NULL; c = CMSG_NXTHDR(mh, c)) {
		struct tpacket_auxdata aux;

		if (c->cmsg_level != SOL_PACKET || c->cmsg_type != PACKET_AUXDATA ||
		    c->cmsg_len < CMSG_LEN(sizeof(aux)))
			continue;
		memcpy(&aux, CMSG_DATA(c), sizeof(aux));
		/* virtual NICs hand us frames whose UDP checksum is still to be filled */
		return (aux.tp_status & TP_STATUS_CSUMNOTREADY) != 0;
	}
	return false;
}

int
dhcp_socket_recv_frames(int fd, struct dhcp_rx_frame *rx, size_t n)
{
	struct mmsghdr msgs[DHCP_SOCKET_BATCH];
	struct iovec iov[DHCP_SOCKET_BATCH];
	struct sockaddr_ll from[DHCP_SOCKET_BATCH];
	union {
		struct cmsghdr align;
		uint8_t buf[CMSG_SPACE(sizeof(struct tpacket_auxdata))];
	} ctl[DHCP_SOCKET_BATCH];
	int r;

	if (n > DHCP_SOCKET_BATCH)
		n = DHCP_SOCKET_BATCH;
	for (size_t i = 0; i < n; i++) {
		iov[i] = (struct iovec){.iov_base = rx[i].frame, .iov_len = rx[i].cap};
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

		/* a frame longer than the buffer is cut to it: the caller counts it (len is then
		 * its length on the wire, past the buffer: not to be read) */
		rx[i].truncated = (mh->msg_flags & MSG_TRUNC) != 0 || msgs[i].msg_len > rx[i].cap;
		rx[i].len = msgs[i].msg_len;
		rx[i].csum_not_ready = csum_not_ready(mh);
		/* our own output (the filter drops it already): length 0 = skip, not counted */
		if (from[i].sll_pkttype == PACKET_OUTGOING)
			rx[i].len = 0;
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

static int
send_batch(int fd, struct mmsghdr *msgs, size_t n, size_t *idx, bool *sent, int *first_err)
{
	size_t done = 0;
	int ok = 0;

	while (done < n) {
		int r = sendmmsg(fd, msgs + done, (unsigned)(n - done), MSG_DONTWAIT);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			if (*first_err == 0)
				*first_err = -errno;
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
dhcp_socket_send_frames(int fd, int ifindex, uint16_t ethertype, uint8_t *const *frames,
    const size_t *lens, size_t n, bool *ret_sent)
{
	struct mmsghdr msgs[DHCP_SOCKET_BATCH];
	struct iovec iov[DHCP_SOCKET_BATCH];
	struct sockaddr_ll lls[DHCP_SOCKET_BATCH];
	size_t idx[DHCP_SOCKET_BATCH];
	bool sent[DHCP_SOCKET_BATCH];
	int ok, first_err = 0;

	if (n > DHCP_SOCKET_BATCH)
		n = DHCP_SOCKET_BATCH;
	for (size_t i = 0; i < n; i++) {
		lls[i] = (struct sockaddr_ll){
		    .sll_family = AF_PACKET,
		    .sll_protocol = htons(ethertype),
		    .sll_ifindex = ifindex,
		    .sll_halen = ETH_ALEN,
		};
		memcpy(lls[i].sll_addr, frames[i], ETH_ALEN);
		iov[i] = (struct iovec){.iov_base = frames[i], .iov_len = lens[i]};
		msgs[i].msg_hdr = (struct msghdr){.msg_name = &lls[i],
		    .msg_namelen = sizeof(lls[i]),
		    .msg_iov = &iov[i],
		    .msg_iovlen = 1};
		idx[i] = i;
		sent[i] = false;
		if (ret_sent != NULL)
			ret_sent[i] = false;
	}
	if (n == 0 || fd < 0)
		return 0;
	ok = send_batch(fd, msgs, n, idx, ret_sent != NULL ? ret_sent : sent, &first_err);
	return ok == 0 && first_err != 0 ? first_err : ok;
}

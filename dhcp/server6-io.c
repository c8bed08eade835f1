/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DHCPv6 server's sockets (dhcp/socket6.h): open, the receive batch, sending replies,
 * unsolicited RAs and NAs. Apart from server6.c so that tests and fuzzers, which drive
 * dhcp6_handle_frame / dhcp6_process, link without sockets.
 */
#include <errno.h>
#include <linux/if_ether.h>
#include <stdbool.h>
#include <string.h>

#include "dhcp/dhcp6-internal.h"
#include "dhcp/packet6.h"
#include "dhcp/ra.h"
#include "dhcp/receive.h"
#include "dhcp/socket6.h"
#include "lib/clock.h"
#include "lib/ip6.h"

_Static_assert(DHCP6_BATCH <= DHCP_SOCKET_BATCH, "one batch per receive or send call");

int
dhcp6_server_open(struct dhcp6_server *s, int ifindex, const char *ifname, const uint8_t hwaddr[6],
    const struct in6_addr *link_local)
{
	int pfd, ufd, r;

	dhcp6_server_close(s);
	if ((r = socket6_open(ifindex, ifname, &s->ring, &pfd, &ufd)) < 0)
		return r;
	s->packet_fd = pfd;
	s->udp_fd = ufd;
	s->ifindex = ifindex;
	dhcp6_server_set_hwaddr(s, hwaddr, link_local);
	return 0;
}

static void
observe_latency(struct dhcp6_stats *st, uint64_t usec)
{
	size_t b = 0;

	while (b < DHCP_LATENCY_BUCKETS - 1 && usec > dhcp_latency_bounds_usec[b])
		b++;
	st->latency[b]++;
	st->latency_sum_usec += usec;
}

/* The replies of one pass, sent DHCP6_BATCH at a time. */
struct batch6 {
	struct dhcp6_server *s;
	uint64_t now;	/* the pass's start */
	int64_t rt_now; /* CLOCK_REALTIME at now; 0 without a ring (no kernel timestamp) */
	unsigned n;
	uint64_t rx_time[DHCP6_BATCH]; /* when each request reached the kernel */
	uint8_t *frames[DHCP6_BATCH];
	size_t lens[DHCP6_BATCH];
	int types[DHCP6_BATCH];
};

/* Sends the batch; a frame the kernel refuses is counted, the rest still go. */
static void
flush(struct batch6 *b)
{
	struct dhcp6_server *s = b->s;
	bool sent[DHCP6_BATCH];
	uint64_t t;

	if (b->n == 0)
		return;
	(void)dhcp_socket_send_frames(
	    s->packet_fd, s->ifindex, ETH_P_IPV6, b->frames, b->lens, b->n, sent);
	t = s->clock != NULL ? s->clock(s->clock_userdata) : 0;
	for (unsigned i = 0; i < b->n; i++) {
		const int *types = b->types;

		if (!sent[i]) {
			dhcp6_count_drop(s, DHCP6_DROP_SEND_FAILED);
			continue;
		}
		if (types[i] == 0)
			s->stats.ra_tx++;
		else
			s->stats.tx[types[i]]++;
		observe_latency(&s->stats, t > b->rx_time[i] ? t - b->rx_time[i] : 0);
	}
	b->n = 0;
}

/* One received frame: answered into the batch's next slot (sent when the batch is full). */
static void
on_frame(struct batch6 *b, const uint8_t *frame, size_t len, size_t wire_len, bool csum_not_ready)
{
	struct dhcp6_server *s = b->s;
	size_t n;

	if (wire_len > len) {
		s->now = b->now;
		dhcp6_count_drop(s, DHCP6_DROP_TRUNCATED);
		return;
	}
	n = dhcp6_handle_frame(s, frame, len, csum_not_ready, b->now, s->tx[b->n], &b->types[b->n]);
	if (n == 0)
		return;
	b->frames[b->n] = s->tx[b->n];
	b->lens[b->n] = n;
	b->rx_time[b->n] = dhcp_ring_frame_time(&s->ring, b->now, b->rt_now); /* rt_now 0: now */
	if (++b->n == DHCP6_BATCH)
		flush(b);
}

static void
ring_frame(void *userdata, const uint8_t *frame, size_t len, size_t wire_len, bool csum_not_ready)
{
	on_frame(userdata, frame, len, wire_len, csum_not_ready);
}

/* One pass over the receive ring, or (no ring) one recvmmsg batch. Frames read, or -errno. */
static int
pass(void *userdata, uint64_t now)
{
	struct dhcp6_server *s = userdata;
	struct batch6 b = {.s = s, .now = now};
	struct dhcp_rx_frame rx[DHCP6_BATCH];
	int n;

	if (s->ring.map != NULL) {
		b.rt_now = clock_realtime_usec();
		n = dhcp_socket_ring_next(&s->ring, ring_frame, &b);
		flush(&b);
		return n < 0 ? 0 : n;
	}
	for (unsigned i = 0; i < DHCP6_BATCH; i++)
		rx[i] = (struct dhcp_rx_frame){.frame = s->rx[i], .cap = DHCP6_RX_BUF};
	do
		n = dhcp_socket_recv_frames(s->packet_fd, rx, DHCP6_BATCH);
	while (n == -EINTR);
	if (n == -EAGAIN || n == -EWOULDBLOCK)
		return 0;
	for (int i = 0; i < n; i++)
		if (rx[i].len > 0) /* 0: our own output */
			on_frame(&b, rx[i].frame, rx[i].truncated ? rx[i].cap : rx[i].len,
			    rx[i].len, rx[i].csum_not_ready);
	flush(&b);
	return n;
}

int
dhcp6_server_on_readable(struct dhcp6_server *s, int fd, uint64_t now, uint32_t *ret_wait_usec)
{
	const struct dhcp_receive rc = {.mod = &s->mod,
	    .ring = &s->ring,
	    .batch = DHCP6_BATCH,
	    .pass = pass,
	    .userdata = s,
	    .clock = s->clock,
	    .clock_userdata = s->clock_userdata};
	int total;

	if (ret_wait_usec != NULL)
		*ret_wait_usec = 0;
	if (s->packet_fd < 0 || (fd != -1 && fd != s->packet_fd))
		return -EBADF;
	/* fd -1 after a wait asked for: the caller waited */
	total = dhcp_receive_call(&rc, fd < 0, now, ret_wait_usec);
	s->stats.rx_wakeups = s->mod.st.wakeups;
	s->stats.rx_immediate = s->mod.st.immediate;
	s->stats.rx_yields = s->mod.st.yields;
	s->stats.rx_waits = s->mod.st.waits;
	s->stats.rx_wait_usec = s->mod.st.wait_usec;
	return total;
}

static int
send_one(struct dhcp6_server *s, uint8_t *frame, size_t len)
{
	uint8_t *frames[1] = {frame};
	int r;

	if (len == 0)
		return -EINVAL;
	r = dhcp_socket_send_frames(s->packet_fd, s->ifindex, ETH_P_IPV6, frames, &len, 1, NULL);
	return r < 0 ? r : r == 1 ? 0 : -EIO;
}

int
dhcp6_server_send_ra(struct dhcp6_server *s, uint64_t now)
{
	static const uint8_t all_nodes_mac[6] = {0x33, 0x33, 0, 0, 0, 1};
	struct ip6_frame h = {.src = s->link_local};
	struct ra_params p;
	uint8_t *out = s->tx[0];
	size_t n;
	int r;

	(void)now;
	if (!s->ra.enabled || s->standby || s->packet_fd < 0)
		return -EAGAIN;
	dhcp6_ra_params(s, &p);
	n = ra_build(out + PACKET6_ICMP_OFFSET, DHCP6_TX_BUF - PACKET6_ICMP_OFFSET, &p, s->hwaddr);
	memcpy(h.src_mac, s->hwaddr, 6);
	memcpy(h.dst_mac, all_nodes_mac, 6);
	(void)ipv6_parse("ff02::1", &h.dst);
	if ((r = send_one(s, out, n > 0 ? packet6_finish_icmp(out, &h, n) : 0)) == 0)
		s->stats.ra_tx++;
	return r;
}

int
dhcp6_server_send_unsolicited_na(struct dhcp6_server *s, const struct in6_addr *target)
{
	static const uint8_t all_nodes_mac[6] = {0x33, 0x33, 0, 0, 0, 1};
	struct ip6_frame h = {.src = *target};
	uint8_t *out = s->tx[0];
	size_t n;
	int r;

	if (s->standby || s->packet_fd < 0)
		return -EAGAIN;
	n = na_build_unsolicited(
	    out + PACKET6_ICMP_OFFSET, DHCP6_TX_BUF - PACKET6_ICMP_OFFSET, target, s->hwaddr);
	memcpy(h.src_mac, s->hwaddr, 6);
	memcpy(h.dst_mac, all_nodes_mac, 6);
	(void)ipv6_parse("ff02::1", &h.dst);
	if ((r = send_one(s, out, n > 0 ? packet6_finish_icmp(out, &h, n) : 0)) == 0)
		s->stats.na_tx++;
	return r;
}

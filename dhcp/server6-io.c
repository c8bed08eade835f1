/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DHCPv6 server's sockets (dhcp/socket6.h): open, the receive batch, sending replies,
 * unsolicited RAs and NAs. Apart from server6.c so that tests and fuzzers, which drive
 * dhcp6_handle_frame / dhcp6_process, link without sockets.
 */
#include <errno.h>
#include <string.h>

#include "dhcp/dhcp6-internal.h"
#include "dhcp/packet6.h"
#include "dhcp/ra.h"
#include "dhcp/socket6.h"
#include "lib/ip6.h"

_Static_assert(DHCP6_BATCH <= SOCKET6_BATCH, "one receive batch per socket6_recv call");

int
dhcp6_server_open(struct dhcp6_server *s, int ifindex, const char *ifname, const uint8_t hwaddr[6],
    const struct in6_addr *link_local)
{
	int pfd, ufd, r;

	dhcp6_server_close(s);
	if ((r = socket6_open(ifindex, ifname, &pfd, &ufd)) < 0)
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

/* Sends the batch; socket6_send skips a refused frame and says how many went. */
static void
flush(struct dhcp6_server *s, uint8_t *const *frames, const size_t *lens, const int *types,
    unsigned n, uint64_t rx_time)
{
	int sent;
	uint64_t t;

	if (n == 0)
		return;
	sent = socket6_send(s->packet_fd, s->ifindex, frames, lens, n);
	if (sent < 0)
		sent = 0;
	t = s->clock != NULL ? s->clock(s->clock_userdata) : 0;
	for (unsigned i = 0; i < n; i++) {
		if (i >= (unsigned)sent) {
			dhcp6_count_drop(s, DHCP6_DROP_SEND_FAILED);
			continue;
		}
		if (types[i] == 0)
			s->stats.ra_tx++;
		else
			s->stats.tx[types[i]]++;
		observe_latency(&s->stats, t > rx_time ? t - rx_time : 0);
	}
}

int
dhcp6_server_on_readable(struct dhcp6_server *s, int fd, uint64_t now)
{
	struct socket6_rx rx[DHCP6_BATCH];
	uint8_t *frames[DHCP6_BATCH];
	size_t lens[DHCP6_BATCH];
	int types[DHCP6_BATCH];
	unsigned n_tx = 0;
	int n;

	if (s->packet_fd < 0 || (fd != -1 && fd != s->packet_fd))
		return -EBADF;
	for (unsigned i = 0; i < DHCP6_BATCH; i++)
		rx[i] = (struct socket6_rx){.frame = s->rx[i], .cap = DHCP6_RX_BUF};
	do
		n = socket6_recv(s->packet_fd, rx, DHCP6_BATCH);
	while (n == -EINTR);
	if (n == -EAGAIN || n == -EWOULDBLOCK)
		return 0;
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		if (rx[i].len == 0)
			continue; /* our own output */
		if (rx[i].truncated) {
			s->now = now;
			dhcp6_count_drop(s, DHCP6_DROP_TRUNCATED);
			continue;
		}
		lens[n_tx] = dhcp6_handle_frame(s, rx[i].frame, rx[i].len, rx[i].csum_not_ready,
		    now, s->tx[n_tx], &types[n_tx]);
		if (lens[n_tx] > 0) {
			frames[n_tx] = s->tx[n_tx];
			n_tx++;
		}
	}
	flush(s, frames, lens, types, n_tx, now);
	return n;
}

static int
send_one(struct dhcp6_server *s, uint8_t *frame, size_t len)
{
	uint8_t *frames[1] = {frame};
	int r;

	if (len == 0)
		return -EINVAL;
	r = socket6_send(s->packet_fd, s->ifindex, frames, &len, 1);
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

/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_SOCKETS6_H
#define VMDHCP_AGENT_SOCKETS6_H

/*
 * sockets6.c: the DHCPv6 engine's sockets on the event loop beside the IPv4 ones (open while
 * they are and the pool has an ipv6Config), the IPv6 serverIP on the interface, the
 * unsolicited Router Advertisement timer and the unsolicited Neighbor Advertisement of a
 * claimed serverIP. Its state is struct agent's `sock6`, written by sockets6.c only; it is
 * driven by sockets.c (the files above read it).
 */

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

struct agent;
struct event;

struct agent_sockets6 {
	struct event *ev_fd; /* dhcp6_server_fd readable; NULL while closed */
	struct event *ev_ra; /* the next unsolicited RA */
	bool open;
	bool open_failed; /* the last open failed (logged): not retried once capabilities went */
	int open_ifindex;
	uint8_t open_hwaddr[6];
	struct in6_addr link_local; /* the source of replies and RAs */
	struct in6_addr addr_ip;    /* the IPv6 serverIP added (--assign-server-ip); zero: none */
	unsigned addr_prefix;
	unsigned ra_sent;     /* unsolicited RAs since RAs started (RFC 4861 §6.2.4's count) */
	uint64_t ra_timer_tx; /* unsolicited RAs sent by the timer */
	uint64_t na_sent;     /* unsolicited NAs for the serverIP */
	bool restart_said;
	struct in6_addr cleared_ip; /* a standby's IPv6 serverIP removed from the interface, once */
};

/*
 * Brings the DHCPv6 sockets, the IPv6 serverIP and the RA timer to what the pool and the IPv4
 * sockets ask for (called at the end of agent_update_sockets; force: re-add the address, the
 * link came back). Returns 1 when IPv6 needs sockets that cannot be opened any more (the
 * capabilities went): the caller restarts the process; else 0.
 */
int agent_sockets6_update(struct agent *a, bool force);
/* Opens them beside the IPv4 sockets just opened (before the capability drop). */
void agent_sockets6_open(struct agent *a);
void agent_sockets6_close(struct agent *a);
/* The interface's MAC changed under sockets kept: replies and RAs take the new one. */
void agent_sockets6_set_hwaddr(struct agent *a, const uint8_t hwaddr[6]);
/* Removes the IPv6 serverIP this replica added (standby, stop, a new serverIP). */
void agent_del_address6(struct agent *a, const char *why);
/* Unsolicited Neighbor Advertisement for the IPv6 serverIP (as gratuitous ARP for IPv4). */
void agent_announce6(struct agent *a);
/* --leader-elect: the engine in or out of standby; the RA timer follows (the address is
 * agent_del_address6's). */
void agent_sockets6_standby(struct agent *a, bool standby);
/* The address's lifetime renewed while active (failover.c's refresh). */
void agent_sockets6_renew(struct agent *a, uint32_t lifetime_s);
/* Frees the timers (agent_free). */
void agent_sockets6_free(struct agent *a);

#endif

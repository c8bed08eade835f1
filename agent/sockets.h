/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_SOCKETS_H
#define VMDHCP_AGENT_SOCKETS_H

/*
 * sockets.c: the DHCP engine's sockets on the event loop, the serverIP on the interface, link
 * events and the capability drop. Its state is struct agent's `sock`, written by sockets.c
 * only; the files above read it. It calls nothing above it: the failover's part (failover.c)
 * comes through the two hooks serve.c sets.
 */

#include <stdbool.h>
#include <stdint.h>

#include <event2/event.h>

#include "agent/link.h"

struct agent;
struct event;

struct agent_sockets {
	struct event *ev_fd; /* dhcp_server_fd readable; NULL while closed */
	struct event *ev_retry;
	unsigned retry_sec; /* next retry delay; 0 after a success */
	bool open;
	int open_ifindex;
	uint8_t open_hwaddr[6];

	bool started;	     /* agent_new() done: the capabilities may go */
	bool caps_dropped;   /* see the top of sockets.c */
	int dropped_ifindex; /* the ifindex the sockets were bound to at the drop */
	bool kept_down;	     /* the sockets are kept while the interface is down (logged) */
	uint32_t addr_ip;    /* the server address last added (--assign-server-ip) */
	unsigned addr_prefix;
	uint32_t refused_server_ip; /* a serverIP equal to the --listen address, already logged */
	uint64_t link_events;	    /* changes of the interface seen (vmdhcp_agent_link_events) */
};

/* What failover.c asks of the sockets and the serverIP (agent_failover_setup's hooks). */
extern const struct agent_failover_hooks agent_sockets_failover_hooks;

/* Brings the sockets to what the interface and the pool ask for; force reopens. */
void agent_update_sockets(struct agent *a, bool force);
void agent_close_sockets(struct agent *a);
/* Once, after agent_new() and the first open (see sockets.c). 0 or negative errno. */
int agent_drop_capabilities(struct agent *a);
/* Removes the serverIP this replica added (a standby, a stop, a new serverIP). */
void agent_del_address(struct agent *a, const char *why);
/* Gratuitous ARP for the serverIP, now; agent_garp_cb sends the second one. */
void agent_announce(struct agent *a);
void agent_garp_cb(evutil_socket_t fd, short what, void *arg);
void agent_retry_cb(evutil_socket_t fd, short what, void *arg);
/* link.c's agent_link_fn (userdata: the agent). */
void agent_link_changed(
    void *userdata, const struct agent_link_state *old, const struct agent_link_state *now);

#endif

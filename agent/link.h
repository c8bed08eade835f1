/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_LINK_H
#define VMDHCP_AGENT_LINK_H

/* link.c: the served interface through libnl (state, addresses, events). */

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

struct event_base;

struct agent_link_state {
	bool exists;
	bool up; /* IFF_UP */
	int ifindex;
	uint8_t hwaddr[6];
	unsigned mtu; /* IFLA_MTU; 0 unknown */
};

struct agent_link;
/* Called on the event loop whenever the watched interface's state changes (borrowed). */
typedef void (*agent_link_fn)(
    void *userdata, const struct agent_link_state *old, const struct agent_link_state *now);

/*
 * Watches ifname (borrowed; copied) through a libnl cache manager whose fd is on base.
 * Returns 0 and a new object in *ret, or negative errno.
 */
int agent_link_new(struct event_base *base, const char *ifname, agent_link_fn fn, void *userdata,
    struct agent_link **ret);
struct agent_link *agent_link_free(struct agent_link *l);
const struct agent_link_state *agent_link_state(const struct agent_link *l);
const char *agent_link_name(const struct agent_link *l);
/* Adds ip/prefix to the interface (already present is fine). Negative errno. */
int agent_link_add_address(struct agent_link *l, uint32_t ip, unsigned prefix);
/*
 * The same with a valid and preferred lifetime of lifetime_s seconds (0: forever): the kernel
 * removes the address when it is not added again in time, so an address whose agent died
 * (SIGKILL, its node frozen) leaves the interface by itself. Adding it again renews it.
 */
int agent_link_add_address_lifetime(
    struct agent_link *l, uint32_t ip, unsigned prefix, uint32_t lifetime_s);
/* Removes ip/prefix from the interface (absent is fine: 0). Negative errno. */
int agent_link_del_address(struct agent_link *l, uint32_t ip, unsigned prefix);

/*
 * The pool's IPv6 serverIP: ip/prefix added with IFA_F_NODAD (the address is the pool's, held
 * by one replica at a time: duplicate address detection would only delay it) and lifetime_s
 * as agent_link_add_address_lifetime (0: forever; adding again renews). Negative errno.
 */
int agent_link_add_address6(
    struct agent_link *l, const struct in6_addr *ip, unsigned prefix, uint32_t lifetime_s);
/* Removes it (absent is fine: 0). Negative errno. */
int agent_link_del_address6(struct agent_link *l, const struct in6_addr *ip, unsigned prefix);
/* The interface's link-local address (fe80::/10) as the kernel has it: 0, or -ENOENT none. */
int agent_link_link_local(struct agent_link *l, struct in6_addr *ret);

#endif

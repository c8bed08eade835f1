/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The served interface, through libnl-route: its ifindex, MAC, IFF_UP and MTU, followed with a
 * cache manager whose netlink socket sits on the event loop; and the server address added
 * to it (--assign-server-ip), IPv4 and IPv6; the interface's link-local IPv6 address. No
 * shell commands.
 *
 * Every link notification is applied in order, so a delete + re-create (new ifindex) or a
 * down -> up that arrive in one batch are both seen as transitions.
 */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <netlink/addr.h>
#include <netlink/cache.h>
#include <netlink/errno.h>
#include <netlink/netlink.h>
#include <netlink/object.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>

#include <linux/if_addr.h>

#include "agent/link.h"
#include "lib/log.h"
#include "lib/util.h"

struct agent_link {
	char name[IFNAMSIZ];
	struct nl_cache_mngr *mngr;
	struct nl_cache *cache; /* route/link, owned by mngr */
	struct nl_sock *req;	/* requests (address add, refill) */
	struct event *ev;
	struct agent_link_state st;
	agent_link_fn fn;
	void *userdata;
};

/* libnl error (positive NLE_*) -> errno */
static int
nlerr_to_errno(int e)
{
	static const struct {
		int nle, err;
	} map[] = {
	    {NLE_EXIST, EEXIST},
	    {NLE_NOMEM, ENOMEM},
	    {NLE_PERM, EPERM},
	    {NLE_NODEV, ENODEV},
	    {NLE_OBJ_NOTFOUND, ENOENT},
	    {NLE_INVAL, EINVAL},
	    {NLE_NOACCESS, EACCES},
	    {NLE_AGAIN, EAGAIN},
	    {NLE_BUSY, EBUSY},
	    {NLE_OPNOTSUPP, EOPNOTSUPP},
	};

	if (e < 0)
		e = -e;
	for (size_t i = 0; i < ELEMENTSOF(map); i++)
		if (map[i].nle == e)
			return -map[i].err;
	return -EIO;
}

static void
state_from_link(struct rtnl_link *link, struct agent_link_state *st)
{
	struct nl_addr *a = rtnl_link_get_addr(link);

	memset(st, 0, sizeof(*st));
	st->exists = true;
	st->ifindex = rtnl_link_get_ifindex(link);
	st->up = (rtnl_link_get_flags(link) & IFF_UP) != 0;
	if (a != NULL && nl_addr_get_len(a) == 6)
		memcpy(st->hwaddr, nl_addr_get_binary_addr(a), 6);
	st->mtu = rtnl_link_get_mtu(link);
}

static void
transition(struct agent_link *l, const struct agent_link_state *now)
{
	struct agent_link_state old = l->st;

	if (old.exists == now->exists && old.up == now->up && old.ifindex == now->ifindex &&
	    memcmp(old.hwaddr, now->hwaddr, 6) == 0 && old.mtu == now->mtu)
		return;
	l->st = *now;
	if (l->fn != NULL)
		l->fn(l->userdata, &old, now);
}

static void
change_cb(struct nl_cache *cache, struct nl_object *obj, int action, void *arg)
{
	struct agent_link *l = arg;
	struct rtnl_link *link = (struct rtnl_link *)obj;
	struct agent_link_state now = {0};
	const char *name;
	int ifindex;

	(void)cache;
	if (strcmp(nl_object_get_type(obj), "route/link") != 0)
		return;
	name = rtnl_link_get_name(link);
	ifindex = rtnl_link_get_ifindex(link);
	if (name == NULL || strcmp(name, l->name) != 0) {
		/* our interface renamed away: it is gone for us */
		if (l->st.exists && ifindex == l->st.ifindex)
			transition(l, &now);
		return;
	}
	if (action == NL_ACT_DEL) {
		if (l->st.exists && ifindex != l->st.ifindex)
			return; /* a stale object of an older incarnation */
		transition(l, &now);
		return;
	}
	state_from_link(link, &now);
	transition(l, &now);
}

/* Re-reads the whole link table (start-up, or after a netlink overrun). */
static int
refresh(struct agent_link *l)
{
	struct agent_link_state now = {0};
	struct rtnl_link *link;
	int r;

	if ((r = nl_cache_refill(l->req, l->cache)) < 0)
		return nlerr_to_errno(r);
	link = rtnl_link_get_by_name(l->cache, l->name);
	if (link != NULL) {
		state_from_link(link, &now);
		rtnl_link_put(link);
	}
	transition(l, &now);
	return 0;
}

static void
readable_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent_link *l = arg;
	int r;

	(void)fd;
	(void)what;
	r = nl_cache_mngr_data_ready(l->mngr);
	if (r < 0) {
		/* most likely an overrun (ENOBUFS): notifications were lost, re-read */
		log_warn("%s: netlink: %s; re-reading the link table", l->name, nl_geterror(r));
		if ((r = refresh(l)) < 0)
			log_error("%s: netlink: cannot re-read links: %s", l->name, strerror(-r));
	}
}

int
agent_link_new(struct event_base *base, const char *ifname, agent_link_fn fn, void *userdata,
    struct agent_link **ret)
{
	struct agent_link *l;
	int r;

	if (strlen(ifname) == 0 || strlen(ifname) >= IFNAMSIZ)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return -ENOMEM;
	snprintf(l->name, sizeof(l->name), "%s", ifname);
	l->fn = fn;
	l->userdata = userdata;
	l->req = nl_socket_alloc();
	if (l->req == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	if ((r = nl_connect(l->req, NETLINK_ROUTE)) < 0) {
		r = nlerr_to_errno(r);
		goto fail;
	}
	if ((r = nl_cache_mngr_alloc(NULL, NETLINK_ROUTE, NL_AUTO_PROVIDE, &l->mngr)) < 0) {
		r = nlerr_to_errno(r);
		goto fail;
	}
	if ((r = nl_cache_mngr_add(l->mngr, "route/link", change_cb, l, &l->cache)) < 0) {
		r = nlerr_to_errno(r);
		goto fail;
	}
	l->ev =
	    event_new(base, nl_cache_mngr_get_fd(l->mngr), EV_READ | EV_PERSIST, readable_cb, l);
	if (l->ev == NULL || event_add(l->ev, NULL) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	/* initial state without callback: the caller reads agent_link_state() */
	{
		struct rtnl_link *link = rtnl_link_get_by_name(l->cache, l->name);
		if (link != NULL) {
			state_from_link(link, &l->st);
			rtnl_link_put(link);
		}
	}
	*ret = l;
	return 0;
fail:
	agent_link_free(l);
	return r;
}

struct agent_link *
agent_link_free(struct agent_link *l)
{
	if (l == NULL)
		return NULL;
	if (l->ev != NULL)
		event_free(l->ev);
	if (l->mngr != NULL)
		nl_cache_mngr_free(l->mngr);
	if (l->req != NULL)
		nl_socket_free(l->req);
	free(l);
	return NULL;
}

const struct agent_link_state *
agent_link_state(const struct agent_link *l)
{
	return &l->st;
}

const char *
agent_link_name(const struct agent_link *l)
{
	return l->name;
}

/* Builds the rtnl_addr of the address be (len bytes of family) /prefix on the interface. */
static int
build_addr_family(struct agent_link *l, int family, const void *be, size_t len, unsigned prefix,
    struct rtnl_addr **ret)
{
	struct rtnl_addr *addr;
	struct nl_addr *local;
	int r;

	addr = rtnl_addr_alloc();
	local = nl_addr_build(family, be, len);
	if (addr == NULL || local == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	nl_addr_set_prefixlen(local, (int)prefix);
	rtnl_addr_set_ifindex(addr, l->st.ifindex);
	rtnl_addr_set_family(addr, family);
	if ((r = rtnl_addr_set_local(addr, local)) < 0) {
		r = nlerr_to_errno(r);
		goto fail;
	}
	rtnl_addr_set_prefixlen(addr, (int)prefix);
	nl_addr_put(local);
	*ret = addr;
	return 0;
fail:
	if (local != NULL)
		nl_addr_put(local);
	if (addr != NULL)
		rtnl_addr_put(addr);
	return r;
}

/* Builds the rtnl_addr of IPv4 ip/prefix on the interface. */
static int
build_addr(struct agent_link *l, uint32_t ip, unsigned prefix, struct rtnl_addr **ret)
{
	uint8_t be[4] = {(uint8_t)(ip >> 24), (uint8_t)(ip >> 16), (uint8_t)(ip >> 8), (uint8_t)ip};

	return build_addr_family(l, AF_INET, be, sizeof(be), prefix, ret);
}

int
agent_link_add_address(struct agent_link *l, uint32_t ip, unsigned prefix)
{
	return agent_link_add_address_lifetime(l, ip, prefix, 0);
}

int
agent_link_add_address_lifetime(
    struct agent_link *l, uint32_t ip, unsigned prefix, uint32_t lifetime_s)
{
	struct rtnl_addr *addr;
	int r;

	if (!l->st.exists)
		return -ENODEV;
	if ((r = build_addr(l, ip, prefix, &addr)) < 0)
		return r;
	if (lifetime_s != 0) {
		rtnl_addr_set_valid_lifetime(addr, lifetime_s);
		rtnl_addr_set_preferred_lifetime(addr, lifetime_s);
	}
	/* NLM_F_REPLACE: present already, its lifetime is renewed */
	r = rtnl_addr_add(l->req, addr, NLM_F_REPLACE);
	if (r < 0) {
		r = nlerr_to_errno(r);
		if (r == -EEXIST)
			r = 0;
	}
	rtnl_addr_put(addr);
	return r;
}

int
agent_link_del_address(struct agent_link *l, uint32_t ip, unsigned prefix)
{
	struct rtnl_addr *addr;
	int r;

	if (!l->st.exists)
		return 0; /* the interface, and its addresses, are gone */
	if ((r = build_addr(l, ip, prefix, &addr)) < 0)
		return r;
	r = rtnl_addr_delete(l->req, addr, 0);
	if (r < 0) {
		r = nlerr_to_errno(r);
		/* not there (any more): what we want; EADDRNOTAVAIL is the kernel's answer */
		if (r == -ENOENT || r == -ENODEV || r == -EIO)
			r = 0;
	}
	rtnl_addr_put(addr);
	return r;
}

/* Sends the add of addr (taken) with lifetime_s; already there is fine. */
static int
add_built(struct agent_link *l, struct rtnl_addr *addr, uint32_t lifetime_s)
{
	int r;

	if (lifetime_s != 0) {
		rtnl_addr_set_valid_lifetime(addr, lifetime_s);
		rtnl_addr_set_preferred_lifetime(addr, lifetime_s);
	}
	r = rtnl_addr_add(l->req, addr, NLM_F_REPLACE);
	if (r < 0) {
		r = nlerr_to_errno(r);
		if (r == -EEXIST)
			r = 0;
	}
	rtnl_addr_put(addr);
	return r;
}

int
agent_link_add_address6(
    struct agent_link *l, const struct in6_addr *ip, unsigned prefix, uint32_t lifetime_s)
{
	struct rtnl_addr *addr;
	int r;

	if (!l->st.exists)
		return -ENODEV;
	if ((r = build_addr_family(l, AF_INET6, ip->s6_addr, 16, prefix, &addr)) < 0)
		return r;
	/* RFC 4862 §5.4 DAD would keep the address tentative (unusable) for a second or more
	 * after a failover; the Lease already makes it this replica's alone */
	rtnl_addr_set_flags(addr, IFA_F_NODAD);
	return add_built(l, addr, lifetime_s);
}

int
agent_link_del_address6(struct agent_link *l, const struct in6_addr *ip, unsigned prefix)
{
	struct rtnl_addr *addr;
	int r;

	if (!l->st.exists)
		return 0;
	if ((r = build_addr_family(l, AF_INET6, ip->s6_addr, 16, prefix, &addr)) < 0)
		return r;
	r = rtnl_addr_delete(l->req, addr, 0);
	if (r < 0) {
		r = nlerr_to_errno(r);
		if (r == -ENOENT || r == -ENODEV || r == -EIO || r == -EADDRNOTAVAIL)
			r = 0;
	}
	rtnl_addr_put(addr);
	return r;
}

struct find_ll {
	int ifindex;
	bool found;
	struct in6_addr addr;
};

static void
find_ll_cb(struct nl_object *obj, void *arg)
{
	struct rtnl_addr *ra = (struct rtnl_addr *)obj;
	struct find_ll *f = arg;
	struct nl_addr *local = rtnl_addr_get_local(ra);
	struct in6_addr a;

	if (f->found || rtnl_addr_get_family(ra) != AF_INET6 ||
	    rtnl_addr_get_ifindex(ra) != f->ifindex || local == NULL ||
	    nl_addr_get_len(local) != 16)
		return;
	memcpy(a.s6_addr, nl_addr_get_binary_addr(local), 16);
	/* a tentative one (DAD not over) is not usable as a source yet; the caller falls back */
	if ((a.s6_addr[0] != 0xfe || (a.s6_addr[1] & 0xc0) != 0x80) ||
	    (rtnl_addr_get_flags(ra) & (IFA_F_TENTATIVE | IFA_F_DADFAILED)) != 0)
		return;
	f->addr = a;
	f->found = true;
}

int
agent_link_link_local(struct agent_link *l, struct in6_addr *ret)
{
	struct find_ll f = {.ifindex = l->st.ifindex};
	struct nl_cache *cache = NULL;
	int r;

	if (!l->st.exists)
		return -ENODEV;
	if ((r = rtnl_addr_alloc_cache(l->req, &cache)) < 0)
		return nlerr_to_errno(r);
	nl_cache_foreach(cache, find_ll_cb, &f);
	nl_cache_free(cache);
	if (!f.found)
		return -ENOENT;
	*ret = f.addr;
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* The IPv6 address of one NIC: pin, keep, remembered, lowest free; the reason it waits. */
#include "controller/nicbind6.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "controller/vmnetcfg-reasons.h"
#include "lib/ip6.h"

static int wait6(struct nicbind6_outcome *o, const char *reason, bool event, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The NIC waits for its IPv6 address: why. Returns 0 (the outcome says it). */
static int
wait6(struct nicbind6_outcome *o, const char *reason, bool event, const char *fmt, ...)
{
	va_list ap;

	o->pending = true;
	o->reason = reason;
	o->event = event;
	va_start(ap, fmt);
	if (vsnprintf(o->text, sizeof(o->text), fmt, ap) < 0)
		o->text[0] = '\0';
	va_end(ap);
	return 0;
}

static const char *
holder_name(const struct netpool6_entry *h)
{
	return h == NULL ? "contested binding" : h->owner != NULL ? h->owner : "IPPool status";
}

/* A static IPv6 address held by someone else or unusable: why the NIC waits. */
static int
static_unavailable(const struct netpool6 *v6, const struct in6_addr *a, struct nicbind6_outcome *o)
{
	const struct netpool6_entry *h = netpool6_by_addr(v6, a);
	char ip[IPV6_STRLEN], hmac[MAC_STRLEN];
	int st = netpool6_state(v6, a);

	ipv6_format(a, ip);
	if (h != NULL) {
		mac_format(h->mac, hmac);
		return wait6(o, VMNETCFG_REASON_STATIC_CONFLICT, true,
		    "static IPv6 %s is already held by MAC %s (%s)", ip, hmac, holder_name(h));
	}
	if (st == IPAM_USED)
		return wait6(o, VMNETCFG_REASON_STATIC_CONFLICT, true,
		    "static IPv6 %s is in use (contested binding)", ip);
	return wait6(o, VMNETCFG_REASON_STATIC_UNAVAILABLE, false, "static IPv6 %s is %s", ip,
	    st == IPAM_EXCLUDED	  ? "excluded"
	    : st == IPAM_RESERVED ? "reserved"
				  : "outside the ipv6Config pool range");
}

/* The address remembered across a pause: wanted back (*want) when still free. */
static int
remembered(const struct netpool6 *v6, const struct vmnetcfg_nic_status *old, struct in6_addr *want,
    struct nicbind6_outcome *o)
{
	const struct netpool6_entry *h;
	char ip[IPV6_STRLEN], hmac[MAC_STRLEN] = "?";

	if (old == NULL || old->state != VMNETCFG_STATE_PENDING ||
	    ipv6_is_zero(&old->allocated_ipv6))
		return 0;
	switch (netpool6_state(v6, &old->allocated_ipv6)) {
	case IPAM_FREE:
		*want = old->allocated_ipv6;
		return 0;
	case IPAM_USED:
		o->addr = old->allocated_ipv6; /* still remembered, not held */
		h = netpool6_by_addr(v6, &old->allocated_ipv6);
		ipv6_format(&old->allocated_ipv6, ip);
		if (h != NULL)
			mac_format(h->mac, hmac);
		return wait6(o, VMNETCFG_REASON_ADDRESS_TAKEN, true,
		    "%s, its IPv6 address before the pause, is now held by MAC %s (%s); waiting "
		    "for it (set ipv6Address to take another)",
		    ip, hmac, holder_name(h));
	default: /* excluded, reserved or outside the range by now: forgotten */
		return 0;
	}
}

/* The binding itself: want (zero: the lowest free address). */
static int
bind_addr(struct netpool *p, const struct vmnetcfg_nic *nic, const uint8_t mac[MAC_LEN],
    const char *key, const struct in6_addr *want, struct nicbind6_outcome *o)
{
	struct in6_addr a;
	int r = netpool_bind6(p, mac, want, key, &a);

	switch (r) {
	case 0:
		o->addr = a;
		return 0;
	case -EEXIST:
	case -EPERM:
	case -ERANGE:
		if (!ipv6_equal(want, &nic->ipv6_address)) /* checked free above: cannot happen */
			return -EIO;
		return static_unavailable(netpool_v6(p), want, o);
	case -ENOSPC:
		return wait6(o, VMNETCFG_REASON_EXHAUSTED, true, "no free IPv6 address left");
	case -EFBIG:
		return wait6(o, VMNETCFG_REASON_STATUS_FULL, true,
		    "the IPPool's status has no room for another IPv6 binding (%zu of %zu bytes): "
		    "no address is bound that no agent would serve",
		    netpool_status_bytes(p), netpool_budget(p));
	default:
		return r;
	}
}

int
nicbind6_nic(struct netpool *p, const struct vmnetcfg_nic *nic, const uint8_t mac[MAC_LEN],
    const char *key, const struct vmnetcfg_nic_status *old, struct nicbind6_outcome *out)
{
	struct netpool6 *v6 = netpool_v6(p);
	const struct netpool6_entry *e;
	bool pin = !ipv6_is_zero(&nic->ipv6_address);
	struct in6_addr want = {0};
	char ip[IPV6_STRLEN];
	int r;

	memset(out, 0, sizeof(*out));
	if (v6 == NULL) {
		if (!pin)
			return 0; /* the pool serves no IPv6: nothing to bind */
		ipv6_format(&nic->ipv6_address, ip);
		return wait6(out, VMNETCFG_REASON_STATIC_UNAVAILABLE, false,
		    "static IPv6 %s: the IPPool has no ipv6Config", ip);
	}
	e = netpool6_by_mac(v6, mac);
	if (e != NULL && pin && !ipv6_equal(&nic->ipv6_address, &e->addr)) {
		/* bound elsewhere, asked for another static address: moved once it is free */
		out->addr = e->addr;
		if (!netpool6_is_free(v6, &nic->ipv6_address))
			return static_unavailable(v6, &nic->ipv6_address, out);
		if ((r = netpool_release6(p, mac, key)) < 0)
			return r == -ENOMEM ? r : -EIO;
		memset(&out->addr, 0, sizeof(out->addr));
		out->released = true;
		e = NULL;
	}
	if (e == NULL)
		want = nic->ipv6_address;
	if (e == NULL && !pin && (r = remembered(v6, old, &want, out)) < 0)
		return r;
	if (out->pending)
		return 0;
	if ((r = bind_addr(p, nic, mac, key, &want, out)) < 0)
		return r;
	out->bound = e == NULL && !out->pending;
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_DYNAMIC_H
#define VMDHCP_AGENT_DYNAMIC_H

/*
 * --dynamic leases: the pool's life cycle (dynamic.c), allocation and pending offers
 * (dynamic-alloc.c), renewal, DECLINE holds and expiry (dynamic-expiry.c), over the in-memory
 * state of dynamic-state.c (dynamic-internal.h).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct agent_config;
struct dhcp_server;
struct leasefile;

/*
 * Unknown MACs get the lowest free address of the pool range (sticky per client), recorded in
 * the lease file. A lease is keyed by the client identifier when the client sends one, else by
 * 0x01 + MAC (see AGENT_ID_MIN), and bound to one MAC, the engine's binding: a known identifier
 * from a MAC without a lease takes its lease to that MAC (the old MAC's binding goes); a MAC
 * with a lease is served it whatever identifier it sends, and an ACK with another real
 * identifier keys the lease by that one (agent_dynamic_renew_id). A lease lives for the pool's
 * lease time plus a grace period after the last ACK
 * the engine sent for it (agent_dynamic_renew_id from the engine's on_ack); leases loaded from the
 * lease file start afresh (now + lease + grace: an address possibly in use is never handed out
 * again early). An expired lease leaves the engine and the lease file and its address goes back
 * to the pool; its last MAC keeps an in-memory hint of it, so it gets that address again while
 * it is free. A DECLINEd address is held for the hold-down period (RFC 2131 §3.1; Kea's probation
 * period), at most AGENT_DECLINE_LIMIT DECLINEs per MAC are honoured per hold-down period, and
 * at most half the addresses the range can hand out are held at once (the oldest hold is
 * released first). Time is the monotonic microsecond clock of agent_dynamic_opts, the one the
 * agent gives the engine too (dhcp_server_set_clock).
 */
#define AGENT_DEFAULT UINT32_MAX	 /* an agent_opts / agent_dynamic_opts value not set */
#define AGENT_DECLINE_HOLD_DEFAULT 86400 /* seconds: Kea's decline-probation-period */
#define AGENT_DECLINE_LIMIT 4		 /* DECLINEs honoured per MAC per hold-down period */
/*
 * Pending offers: a DISCOVER from a MAC without a lease reserves an address for
 * AGENT_OFFER_HOLD_DEFAULT seconds (--offer-hold) after its last OFFER, nothing more; only a
 * REQUEST commits a lease (the lease file's line). At most one per MAC (a repeated DISCOVER is
 * offered the same address) and max_offers in all: by default half of what the range can hand
 * out, at most AGENT_OFFERS_MAX (--max-pending-offers). Over it a DISCOVER from a new MAC is
 * refused (-EBUSY, counted): a flood of made-up MACs holds at most that many addresses, for
 * seconds, and costs no memory beyond it.
 */
#define AGENT_OFFER_HOLD_DEFAULT 10 /* seconds */
#define AGENT_OFFERS_MAX 4096

struct agent_dynamic_opts {
	uint64_t (*clock)(void *userdata); /* monotonic usec; NULL: lib/clock.h clock_now_usec */
	void *clock_userdata;
	uint32_t grace_s;	 /* AGENT_DEFAULT: lease time / 2 */
	uint32_t decline_hold_s; /* AGENT_DEFAULT: AGENT_DECLINE_HOLD_DEFAULT */
	uint32_t offer_hold_s;	 /* 0: AGENT_OFFER_HOLD_DEFAULT */
	size_t max_offers; /* 0: half of what the range can hand out, at most AGENT_OFFERS_MAX */
};

/* Pending offers now and since start (the counters carry over a reload). */
struct agent_offer_stats {
	size_t pending, max_pending;
	uint64_t expired;   /* holds that ended without a REQUEST: the address went back */
	uint64_t refused;   /* DISCOVERs from new MACs refused: max_pending were pending */
	uint64_t evicted;   /* offers taken over by a DISCOVER at the cap (250 ms old at least) */
	uint64_t committed; /* leases made by a REQUEST (agent_dynamic_request_id, _allocate_id) */
};

struct agent_dynamic;
/* agent_dynamic_new_opts() with the default options and no previous state. */
int agent_dynamic_new(
    const struct agent_config *cfg, struct leasefile *lf, struct agent_dynamic **ret);
/*
 * The dynamic pool of cfg (borrowed) over the leases of lf (borrowed; must outlive it): leases
 * that no longer fit (outside the range, excluded, a static MAC, a taken address) are removed
 * from lf. opts may be NULL (defaults). prev (may be NULL), the pool being replaced on a
 * reload: its expiries, hints, held addresses and DECLINE counts carry over where they still
 * fit; without it every lease gets now + lease time + grace. Negative errno.
 */
int agent_dynamic_new_opts(const struct agent_config *cfg, struct leasefile *lf,
    const struct agent_dynamic_opts *opts, const struct agent_dynamic *prev,
    struct agent_dynamic **ret);
struct agent_dynamic *agent_dynamic_free(struct agent_dynamic *d);
/* The lease file of d (borrowed at agent_dynamic_new_opts). */
struct leasefile *agent_dynamic_leasefile(const struct agent_dynamic *d);
/*
 * Allocation for a MAC the engine has no binding for, whose request carried the client
 * identifier (id, id_len) (NULL: none; dhcp_server_client_id): the MAC's lease if it has one;
 * else the identifier's lease, moved to mac when it was bound to another MAC (whose binding
 * leaves s, when s is not NULL and still binds it there; the caller's engine then binds mac);
 * else mac's hint's address while free, else the lowest free address, recorded in the lease
 * file with a fresh expiry. -ENOSPC when full, -EINVAL for an identifier over AGENT_ID_MAX
 * bytes, or the lease file's error (nothing changed).
 */
int agent_dynamic_allocate_id(struct agent_dynamic *d, struct dhcp_server *s, const uint8_t mac[6],
    const uint8_t *id, size_t id_len, uint32_t *ret_ip);
/* The same without an identifier (keyed by mac) and without an engine to update. */
int agent_dynamic_allocate(struct agent_dynamic *d, const uint8_t mac[6], uint32_t *ret_ip);
/*
 * A DISCOVER from a MAC the engine has no binding for (the engine's on_offer). 1 and *ret_ip:
 * the MAC's lease, as agent_dynamic_allocate_id finds it (its own, or its identifier's moved
 * to it): the caller binds it. 0 and *ret_ip: an address offered, not leased: mac's pending
 * offer (the same address as before, held from now on), else a new one, mac's hint's address
 * while free, else the lowest free one; nothing is written to the lease file. -EBUSY: the cap
 * of pending offers is reached (counted in refused); -ENOSPC: the range is full; -EINVAL: an
 * identifier over AGENT_ID_MAX bytes.
 */
int agent_dynamic_offer_id(struct agent_dynamic *d, struct dhcp_server *s, const uint8_t mac[6],
    const uint8_t *id, size_t id_len, uint32_t *ret_ip);
/*
 * A REQUEST (SELECTING, INIT-REBOOT, RENEWING/REBINDING) from a MAC the engine has no binding
 * for, naming requested (option 50, else ciaddr; dhcp_server_requested_ip): the MAC's lease
 * when it has one (*ret_ip, which the engine compares with requested); else requested when it
 * is offered to mac, or free (a hold that ended, a lease that expired): committed as mac's lease
 * (the lease file's line, a fresh expiry), its other offer let go. -EADDRNOTAVAIL: requested
 * is none or not free (the engine NAKs a SELECTING or RENEWING client); the lease file's error
 * when the lease could not be written (nothing changed: the caller tells the engine -EAGAIN, to
 * stay silent while the client retries).
 * While the last lease could not be written, agent_dynamic_offer_id writes a new MAC's lease at
 * once (agent_dynamic_allocate_id, returning 1) instead of offering, until one is written.
 */
int agent_dynamic_request_id(struct agent_dynamic *d, struct dhcp_server *s, const uint8_t mac[6],
    const uint8_t *id, size_t id_len, uint32_t requested, uint32_t *ret_ip);
/* Pending offers and their counters. */
void agent_dynamic_offer_stats(const struct agent_dynamic *d, struct agent_offer_stats *ret);
/* mac's pending offer: its address and when its hold ends. 0, or -ENOENT. */
int agent_dynamic_offered(
    const struct agent_dynamic *d, const uint8_t mac[6], uint32_t *ret_ip, uint64_t *ret_due);
/*
 * A DECLINE of mac's dynamic lease ip (the lease bound to mac, whatever its key: the engine's
 * binding is the MAC's): the address is in use on the network, so it is held for
 * the hold-down period and mac moves to the lowest free address (*ret_ip, recorded in the lease
 * file). -ENOENT when ip is not mac's dynamic lease, -EBUSY when mac already had
 * AGENT_DECLINE_LIMIT DECLINEs honoured this hold-down period (nothing changes: the caller
 * counts and ignores it), -ENOSPC when the pool is full.
 */
int agent_dynamic_decline(
    struct agent_dynamic *d, const uint8_t mac[6], uint32_t ip, uint32_t *ret_ip);
/*
 * The engine ACKed mac on ip for a request with the client identifier (id, id_len) (NULL:
 * none): if that is the lease bound to mac, it now expires lease + grace from now, and when
 * the identifier is a real one (not 0x01 + mac) that is not the lease's key and has no lease
 * of its own, the lease is keyed by it from now on (a line in the lease file). 0; -ENOENT when
 * ip is not mac's lease; the lease file's error when the new key could not be written (the
 * lease is renewed and keeps its key).
 */
int agent_dynamic_renew_id(
    struct agent_dynamic *d, const uint8_t mac[6], const uint8_t *id, size_t id_len, uint32_t ip);
/* The same without an identifier: renews, keeps the key. */
int agent_dynamic_renew(struct agent_dynamic *d, const uint8_t mac[6], uint32_t ip);
/*
 * Reclaims what is due, looking at no more than budget entries and held addresses (the
 * rest waits for the next call): expired leases leave s (when s still binds mac to them; s
 * may be NULL) and the lease file (leasefile_remove: the caller flushes or compacts), and
 * their addresses go back to the pool; held addresses whose hold-down is over go back too, and
 * so do the addresses of pending offers whose hold is over (counted in the offer stats).
 * Returns the number of leases expired (so the caller knows to persist the lease file).
 */
size_t agent_dynamic_expire(struct agent_dynamic *d, struct dhcp_server *s, size_t budget);
/* Free addresses left in the pool range. */
size_t agent_dynamic_available(const struct agent_dynamic *d);
/* DECLINEd addresses held now, and the most that may be held at once. */
size_t agent_dynamic_held(const struct agent_dynamic *d);
size_t agent_dynamic_held_max(const struct agent_dynamic *d);
/* When the lease bound to mac expires (the clock of opts; UINT64_MAX: never): 0, or -ENOENT. */
int agent_dynamic_expiry(const struct agent_dynamic *d, const uint8_t mac[6], uint64_t *ret_usec);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_DECISIONS_H
#define VMDHCP_AGENT_DECISIONS_H

/* decisions.c: the DHCP decision log. */

#include <stdbool.h>
#include <stdint.h>

#include "dhcp/dhcp.h"
#include "dhcp/dhcp6.h"

struct agent_config;

/*
 * The DHCP decision log: one info line per request the engine handled (its on_decision), e.g.
 *
 *   DHCPACK 10.0.0.5 to 52:54:00:12:34:56 (vm-1) for DHCPREQUEST xid=0x3903f326
 *   DHCPDISCOVER from 52:54:00:aa:bb:cc dropped: unknown_mac xid=0x1c2d3e4f
 *
 * Text lines carry everything in the message (a relayed request adds " via GIADDR") and the
 * key xid; JSON lines the same message and the keys type, mac, ip, vm, reply (offer, ack, nak,
 * none) or drop (dhcp_drop_reason_name), xid, giaddr (relayed only) and ippool. --log-level warn
 * silences them. A token bucket (AGENT_DECLOG_RATE lines/s, AGENT_DECLOG_BURST at once) keeps a
 * storm (perfdhcp, a client in a loop) out of the log: a suppressed line costs a few counters,
 * nothing is formatted, and once AGENT_DECLOG_SUMMARY_USEC passed since the first suppressed
 * one, one line counts what was suppressed by reply and drop reason.
 */
enum agent_log_dhcp {
	AGENT_LOG_DHCP_ALL = 0, /* every decision (default) */
	AGENT_LOG_DHCP_DROPS,	/* requests dropped or NAKed only */
	AGENT_LOG_DHCP_NONE,	/* none (the engine is not even asked) */
};
/* "all|drops|none" -> mode; -EINVAL on anything else. */
int agent_log_dhcp_from_string(const char *s, enum agent_log_dhcp *ret);

#define AGENT_DECLOG_RATE 20
#define AGENT_DECLOG_BURST 100
#define AGENT_DECLOG_SUMMARY_USEC (10 * UINT64_C(1000000))

struct agent_declog {
	enum agent_log_dhcp mode;
	uint64_t tokens;   /* millionths of a line */
	uint64_t refilled; /* time of the last refill (the decisions' clock); 0: full bucket */
	uint64_t since;	   /* time of the first line suppressed since the last summary; 0: none */
	uint64_t suppressed;
	uint64_t by_reply[_DHCP_MSG_MAX];   /* suppressed, by reply type (OFFER, ACK, NAK) */
	uint64_t by_request[_DHCP_MSG_MAX]; /* suppressed, neither answered nor dropped (DECLINE,
					     * RELEASE), by request type */
	uint64_t by_drop[_DHCP_DROP_MAX];   /* suppressed drops, by reason */
	uint64_t suppressed6;		    /* of them DHCPv6 decisions */
};
void agent_declog_init(struct agent_declog *l, enum agent_log_dhcp mode);
/*
 * Logs d (the engine's, borrowed) unless the mode or the log level leaves it out, or the bucket
 * suppresses it (counted). cfg (may be NULL) gives the ippool key. A summary due is logged first.
 */
void agent_declog_decision(
    struct agent_declog *l, const struct dhcp_decision *d, const struct agent_config *cfg);
/*
 * The same for a DHCPv6 decision (the same bucket), e.g.
 *
 *   DHCPv6 REPLY 2001:db8:1::10 to 52:54:00:12:34:56 (vm-1) for REQUEST xid=0x3903f3
 *   DHCPv6 SOLICIT from 52:54:00:aa:bb:cc dropped: unknown_mac xid=0x1c2d3e
 *   DHCPv6 REPLY to 52:54:00:12:34:56 (vm-1) for RENEW: NoBinding xid=0x1c2d3e
 *
 * JSON lines: the keys family ("ipv6"), type, mac, ip, vm, reply (advertise, reply, none) or
 * drop (dhcp6_drop_reason_name), status (a status code other than Success), relayed, xid and
 * ippool.
 */
void agent_declog_decision6(
    struct agent_declog *l, const struct dhcp6_decision *d, const struct agent_config *cfg);
/*
 * The summary of suppressed lines, when there are some and AGENT_DECLOG_SUMMARY_USEC passed
 * since the first (always with force: at exit). now: the decisions' clock.
 */
void agent_declog_flush(struct agent_declog *l, uint64_t now, bool force);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DHCP decision log (agent.h): one line per request the engines (DHCPv4, DHCPv6) handled,
 * text or JSON,
 * kept out of the log in a storm by a token bucket; what it suppressed is counted and
 * summarised in one line.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "agent/decisions.h"
#include "agent/pool-config.h"
#include "lib/clock.h"
#include "lib/ip6.h"
#include "lib/log.h"
#include "lib/util.h"

#define DECLOG_LINE USEC_PER_SEC /* tokens of one line: refilled AGENT_DECLOG_RATE per usec */
#define DECLOG_FULL ((uint64_t)AGENT_DECLOG_BURST * DECLOG_LINE)

static const char *const msg_upper[_DHCP_MSG_MAX] = {
    [DHCP_MSG_DISCOVER] = "DHCPDISCOVER",
    [DHCP_MSG_OFFER] = "DHCPOFFER",
    [DHCP_MSG_REQUEST] = "DHCPREQUEST",
    [DHCP_MSG_DECLINE] = "DHCPDECLINE",
    [DHCP_MSG_ACK] = "DHCPACK",
    [DHCP_MSG_NAK] = "DHCPNAK",
    [DHCP_MSG_RELEASE] = "DHCPRELEASE",
    [DHCP_MSG_INFORM] = "DHCPINFORM",
};

static const char *
msg_name(int type)
{
	/* type 0: options that did not parse, or no option 53 (the drop reason says which) */
	return type > 0 && type < _DHCP_MSG_MAX ? msg_upper[type] : "DHCP request";
}

int
agent_log_dhcp_from_string(const char *s, enum agent_log_dhcp *ret)
{
	static const char *const names[] = {"all", "drops", "none"};

	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (strcmp(s, names[i]) == 0) {
			*ret = (enum agent_log_dhcp)i;
			return 0;
		}
	return -EINVAL;
}

void
agent_declog_init(struct agent_declog *l, enum agent_log_dhcp mode)
{
	memset(l, 0, sizeof(*l));
	l->mode = mode;
}

/* Appends to buf[*n] (cap bytes), snprintf-like; a full buffer stays full. */
static void append(char *buf, size_t cap, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void
append(char *buf, size_t cap, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*n >= cap)
		return;
	va_start(ap, fmt);
	r = vsnprintf(buf + *n, cap - *n, fmt, ap);
	va_end(ap);
	if (r > 0)
		*n = MIN(*n + (size_t)r, cap);
}

void
agent_declog_flush(struct agent_declog *l, uint64_t now, bool force)
{
	char text[1024], count[24];
	const char *sep = "";
	size_t n = 0;
	uint64_t drops = 0, secs;

	if (l->suppressed == 0 || (!force && now - l->since < AGENT_DECLOG_SUMMARY_USEC))
		return;
	/* the rate says a storm (a DISCOVER flood) from a busy network */
	secs = (now - l->since + USEC_PER_SEC / 2) / USEC_PER_SEC;
	append(text, sizeof(text), &n,
	    "suppressed %" PRIu64 " DHCP decision lines in the last %" PRIu64 " s (%" PRIu64 "/s):",
	    l->suppressed, secs, l->suppressed / MAX(secs, (uint64_t)1));
	for (int t = 1; t < _DHCP_MSG_MAX; t++) {
		if (l->by_reply[t] > 0) {
			append(text, sizeof(text), &n, "%s %" PRIu64 " %s", sep, l->by_reply[t],
			    msg_name(t));
			sep = ",";
		}
	}
	for (int t = 1; t < _DHCP_MSG_MAX; t++) {
		if (l->by_request[t] > 0) {
			append(text, sizeof(text), &n, "%s %" PRIu64 " %s", sep, l->by_request[t],
			    msg_name(t));
			sep = ",";
		}
	}
	for (int r = 0; r < _DHCP_DROP_MAX; r++)
		drops += l->by_drop[r];
	if (drops > 0) {
		append(text, sizeof(text), &n, "%s %" PRIu64 " dropped (", sep, drops);
		sep = "";
		for (int r = 0; r < _DHCP_DROP_MAX; r++) {
			if (l->by_drop[r] > 0) {
				append(text, sizeof(text), &n, "%s%s %" PRIu64, sep,
				    dhcp_drop_reason_name((enum dhcp_drop_reason)r), l->by_drop[r]);
				sep = ", ";
			}
		}
		append(text, sizeof(text), &n, ")");
	}
	if (l->suppressed6 > 0)
		append(text, sizeof(text), &n, "; %" PRIu64 " of them DHCPv6", l->suppressed6);
	snprintf(count, sizeof(count), "%" PRIu64, l->suppressed);
	log_kv(LOG_LEVEL_INFO, LOG_KV("suppressed", count), "%s", text);
	l->suppressed = 0;
	l->suppressed6 = 0;
	l->since = 0;
	memset(l->by_reply, 0, sizeof(l->by_reply));
	memset(l->by_request, 0, sizeof(l->by_request));
	memset(l->by_drop, 0, sizeof(l->by_drop));
}

/* The token bucket: true when a line may be written now (and takes its token). */
static bool
declog_take(struct agent_declog *l, uint64_t now)
{
	uint64_t dt = now > l->refilled ? now - l->refilled : 0;

	/* dt * rate cannot overflow: from what fills the bucket on, it is full */
	if (l->refilled == 0 || dt >= DECLOG_FULL / AGENT_DECLOG_RATE)
		l->tokens = DECLOG_FULL;
	else
		l->tokens = MIN(l->tokens + dt * AGENT_DECLOG_RATE, DECLOG_FULL);
	if (l->refilled == 0 || now > l->refilled)
		l->refilled = MAX(now, 1);
	if (l->tokens < DECLOG_LINE)
		return false;
	l->tokens -= DECLOG_LINE;
	return true;
}

static void
declog_write(const struct dhcp_decision *d, const struct agent_config *cfg)
{
	char mac[MAC_STRLEN], ip[IPV4_STRLEN], gi[IPV4_STRLEN], xid[12], pool[512];
	char vm[DHCP_HOSTNAME_MAX + 4] = "", via[IPV4_STRLEN + 8] = "", what[IPV4_STRLEN + 8] = "";
	const char *kv[22];
	uint32_t addr = d->ip != 0 ? d->ip : d->requested;
	bool json = log_get_format() == LOG_FORMAT_JSON;
	size_t k = 0;

	mac_format(d->mac, mac);
	ipv4_format(addr, ip);
	snprintf(xid, sizeof(xid), "0x%08" PRIx32, d->xid);
	if (d->hostname != NULL)
		snprintf(vm, sizeof(vm), " (%s)", d->hostname);
	if (d->giaddr != 0) {
		ipv4_format(d->giaddr, gi);
		snprintf(via, sizeof(via), " via %s", gi);
	}
	/* text: everything is in the message, only the xid follows; JSON: every key */
	if (json) {
		kv[k++] = "type";
		kv[k++] = dhcp_message_type_name(d->type); /* "unknown" for 0 */
		kv[k++] = "mac";
		kv[k++] = mac;
		if (addr != 0) {
			kv[k++] = "ip";
			kv[k++] = ip;
		}
		if (d->hostname != NULL) {
			kv[k++] = "vm";
			kv[k++] = d->hostname;
		}
		kv[k++] = d->dropped ? "drop" : "reply";
		if (d->dropped)
			kv[k++] = dhcp_drop_reason_name(d->drop);
		else /* "none": a DECLINE or RELEASE, taken note of */
			kv[k++] = d->reply != 0 ? dhcp_message_type_name(d->reply) : "none";
	}
	kv[k++] = "xid";
	kv[k++] = xid;
	if (json && d->giaddr != 0) {
		kv[k++] = "giaddr";
		kv[k++] = gi;
	}
	if (json && d->boot_file != NULL) {
		kv[k++] = "boot";
		kv[k++] = d->boot_file;
	}
	if (json && cfg != NULL) {
		snprintf(pool, sizeof(pool), "%s/%s", cfg->pool_ns, cfg->pool_name);
		kv[k++] = "ippool";
		kv[k++] = pool;
	}
	kv[k] = NULL;

	if (!d->dropped && (d->reply == DHCP_MSG_OFFER || d->reply == DHCP_MSG_ACK)) {
		/* "DHCPACK 10.0.0.5 to 52:54:00:12:34:56 (vm-1) for DHCPREQUEST", then
		 * " boot=ipxe.efi" for a network boot answer */
		log_kv(LOG_LEVEL_INFO, kv, "%s%s%s to %s%s for %s%s%s%s", msg_name(d->reply),
		    addr != 0 ? " " : "", addr != 0 ? ip : "", mac, vm, msg_name(d->type), via,
		    d->boot_file != NULL ? " boot=" : "", d->boot_file != NULL ? d->boot_file : "");
		return;
	}
	if (addr != 0)
		snprintf(what, sizeof(what), " %s %s", d->reply == DHCP_MSG_NAK ? "of" : "for", ip);
	if (!d->dropped && d->reply == DHCP_MSG_NAK)
		/* "DHCPNAK to 52:54:00:12:34:56 (vm-1) for DHCPREQUEST of 10.0.0.77" */
		log_kv(LOG_LEVEL_INFO, kv, "DHCPNAK to %s%s for %s%s%s", mac, vm, msg_name(d->type),
		    what, via);
	else if (d->dropped)
		/* "DHCPREQUEST from 52:54:00:aa:bb:cc for 10.0.0.9 dropped: unknown_mac" */
		log_kv(LOG_LEVEL_INFO, kv, "%s from %s%s%s%s dropped: %s", msg_name(d->type), mac,
		    vm, what, via, dhcp_drop_reason_name(d->drop));
	else
		/* "DHCPRELEASE from 52:54:00:12:34:56 (vm-1) for 10.0.0.5" */
		log_kv(
		    LOG_LEVEL_INFO, kv, "%s from %s%s%s%s", msg_name(d->type), mac, vm, what, via);
}

void
agent_declog_decision(
    struct agent_declog *l, const struct dhcp_decision *d, const struct agent_config *cfg)
{
	if (l->mode == AGENT_LOG_DHCP_NONE || log_get_level() < LOG_LEVEL_INFO)
		return;
	if (l->mode == AGENT_LOG_DHCP_DROPS && !d->dropped && d->reply != DHCP_MSG_NAK)
		return;
	if (l->suppressed > 0 && d->now - l->since >= AGENT_DECLOG_SUMMARY_USEC)
		agent_declog_flush(l, d->now, false);
	if (declog_take(l, d->now)) {
		declog_write(d, cfg);
		return;
	}
	/* suppressed: counters only */
	if (l->suppressed++ == 0)
		l->since = d->now != 0 ? d->now : 1;
	if (d->dropped)
		l->by_drop[(unsigned)d->drop < _DHCP_DROP_MAX ? d->drop : DHCP_DROP_MALFORMED]++;
	else if (d->reply != 0)
		l->by_reply[d->reply < _DHCP_MSG_MAX ? d->reply : 0]++;
	else
		l->by_request[d->type < _DHCP_MSG_MAX ? d->type : 0]++;
}

/* ---- DHCPv6 (RFC 8415 §7.3 names, the status codes of §21.13) ---- */

static const char *const msg6_upper[_DHCP6_MSG_MAX] = {
    [DHCP6_MSG_SOLICIT] = "SOLICIT",
    [DHCP6_MSG_ADVERTISE] = "ADVERTISE",
    [DHCP6_MSG_REQUEST] = "REQUEST",
    [DHCP6_MSG_CONFIRM] = "CONFIRM",
    [DHCP6_MSG_RENEW] = "RENEW",
    [DHCP6_MSG_REBIND] = "REBIND",
    [DHCP6_MSG_REPLY] = "REPLY",
    [DHCP6_MSG_RELEASE] = "RELEASE",
    [DHCP6_MSG_DECLINE] = "DECLINE",
    [DHCP6_MSG_RECONFIGURE] = "RECONFIGURE",
    [DHCP6_MSG_INFORMATION_REQUEST] = "INFORMATION-REQUEST",
    [DHCP6_MSG_RELAY_FORW] = "RELAY-FORW",
    [DHCP6_MSG_RELAY_REPL] = "RELAY-REPL",
};

static const char *
msg6_name(int type)
{
	return type > 0 && type < _DHCP6_MSG_MAX ? msg6_upper[type] : "request";
}

static const char *
status6_name(uint16_t code)
{
	static const char *const names[] = {"Success", "UnspecFail", "NoAddrsAvail", "NoBinding",
	    "NotOnLink", "UseMulticast", "NoPrefixAvail"};

	return code < ELEMENTSOF(names) ? names[code] : "status";
}

/* The JSON keys of d (kv: at least 24 slots). */
static void
declog6_keys(const struct dhcp6_decision *d, const struct agent_config *cfg, const char **kv,
    const char *mac, const char *ip, const char *xid, char *pool, size_t poollen)
{
	size_t k = 0;

	kv[k++] = "family";
	kv[k++] = "ipv6";
	kv[k++] = "type";
	kv[k++] = dhcp6_message_type_name(d->type);
	kv[k++] = "mac";
	kv[k++] = mac;
	if (!ipv6_is_zero(&d->address)) {
		kv[k++] = "ip";
		kv[k++] = ip;
	}
	if (d->hostname != NULL) {
		kv[k++] = "vm";
		kv[k++] = d->hostname;
	}
	kv[k++] = d->dropped ? "drop" : "reply";
	kv[k++] = d->dropped	  ? dhcp6_drop_reason_name(d->drop)
		  : d->reply != 0 ? dhcp6_message_type_name(d->reply)
				  : "none";
	if (d->status != 0) {
		kv[k++] = "status";
		kv[k++] = status6_name(d->status);
	}
	if (d->relayed) {
		kv[k++] = "relayed";
		kv[k++] = "true";
	}
	kv[k++] = "xid";
	kv[k++] = xid;
	if (cfg != NULL) {
		snprintf(pool, poollen, "%s/%s", cfg->pool_ns, cfg->pool_name);
		kv[k++] = "ippool";
		kv[k++] = pool;
	}
	kv[k] = NULL;
}

static void
declog_write6(const struct dhcp6_decision *d, const struct agent_config *cfg)
{
	char mac[MAC_STRLEN], ip[IPV6_STRLEN], xid[12], pool[512], st[32] = "";
	char vm[DHCP_HOSTNAME_MAX + 4] = "";
	const char *kv[24] = {"xid", xid, NULL};
	const char *via = d->relayed ? " (relayed)" : "";

	mac_format(d->mac, mac);
	ipv6_format(&d->address, ip);
	snprintf(xid, sizeof(xid), "0x%06" PRIx32, d->xid);
	if (d->hostname != NULL)
		snprintf(vm, sizeof(vm), " (%s)", d->hostname);
	if (d->status != 0)
		snprintf(st, sizeof(st), ": %s", status6_name(d->status));
	if (log_get_format() == LOG_FORMAT_JSON)
		declog6_keys(d, cfg, kv, mac, ip, xid, pool, sizeof(pool));
	if (d->dropped)
		/* "DHCPv6 SOLICIT from 52:54:00:aa:bb:cc dropped: unknown_mac" */
		log_kv(LOG_LEVEL_INFO, kv, "DHCPv6 %s from %s%s%s dropped: %s", msg6_name(d->type),
		    mac, vm, via, dhcp6_drop_reason_name(d->drop));
	else if (d->reply != 0 && !ipv6_is_zero(&d->address))
		/* "DHCPv6 REPLY 2001:db8::10 to 52:54:00:12:34:56 (vm-1) for REQUEST" */
		log_kv(LOG_LEVEL_INFO, kv, "DHCPv6 %s %s to %s%s for %s%s%s", msg6_name(d->reply),
		    ip, mac, vm, msg6_name(d->type), via, st);
	else if (d->reply != 0)
		/* "DHCPv6 REPLY to 52:54:00:12:34:56 (vm-1) for RENEW: NoBinding" */
		log_kv(LOG_LEVEL_INFO, kv, "DHCPv6 %s to %s%s for %s%s%s", msg6_name(d->reply), mac,
		    vm, msg6_name(d->type), via, st);
	else
		log_kv(
		    LOG_LEVEL_INFO, kv, "DHCPv6 %s from %s%s%s", msg6_name(d->type), mac, vm, via);
}

void
agent_declog_decision6(
    struct agent_declog *l, const struct dhcp6_decision *d, const struct agent_config *cfg)
{
	bool refused = d->dropped || d->status != 0;

	if (l->mode == AGENT_LOG_DHCP_NONE || log_get_level() < LOG_LEVEL_INFO)
		return;
	if (l->mode == AGENT_LOG_DHCP_DROPS && !refused)
		return;
	if (l->suppressed > 0 && d->now - l->since >= AGENT_DECLOG_SUMMARY_USEC)
		agent_declog_flush(l, d->now, false);
	if (declog_take(l, d->now)) {
		declog_write6(d, cfg);
		return;
	}
	if (l->suppressed++ == 0)
		l->since = d->now != 0 ? d->now : 1;
	l->suppressed6++;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp6-craft - crafted DHCPv6 messages for the differential test against Kea
 * (tests/netns/test-dhcp6-kea-diff.sh; built as build/tests/dhcp6-craft).
 *
 *   dhcp6-craft IFACE CASE [SERVER_UNICAST]
 *
 * Runs one case from a DHCPv6 client's UDP socket on port 546 bound to IFACE (the relay case:
 * port 547) and prints one line:
 *
 *   CASE TYPE [status=CODE] [ia_na=IAID,t1=..,t2=..,status=CODE,addr=ADDR/PREF/VALID...]...
 *       opts=CODES
 *
 * TYPE is the reply's message type (a RELAY-REPL prints "RELAY-REPL>" and the relayed
 * message), or "silent" when nothing came back within CRAFT_TIMEOUT_MS (default 2000): the
 * timeout only decides that there was no reply, the test compares the line, never a duration.
 * Status codes are printed per level (top level, inside each IA, inside each IAADDR); "-" when
 * the option is absent (RFC 8415 §21.13: absent means Success, but its presence is part of what
 * is compared). opts= lists the top-level option codes of the reply, sorted. The server DUID's
 * value is never printed (each server has its own).
 *
 * Some cases need state first (the server's DUID, an address): they run a SOLICIT (and a
 * REQUEST) before the message under test, not printed. The client DUID is a DUID-LL (RFC 8415
 * §11.4) of IFACE's MAC; the server matches the client by that MAC (the frame's source, or the
 * EUI-64 link-local source address), so the test gives each client namespace its MAC.
 *
 * Environment: CRAFT_TIMEOUT_MS (above); CRAFT_SERVER_DUID (hex) the server DUID an unknown
 * client that got no ADVERTISE uses (request-unknown; "server-duid" prints it); CRAFT_CLIENT_MAC
 * the client's MAC when IFACE is a relay's (relay-solicit: the client DUID and option 79).
 *
 * Exit: 0 when the line was printed (whatever it says), 2 on errors (bad usage, socket).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
	SOLICIT = 1,
	ADVERTISE,
	REQUEST,
	CONFIRM,
	RENEW,
	REBIND,
	REPLY,
	RELEASE,
	DECLINE,
	RECONFIGURE,
	INFORMATION_REQUEST,
	RELAY_FORW,
	RELAY_REPL
};
enum {
	OPT_CLIENTID = 1,
	OPT_SERVERID = 2,
	OPT_IA_NA = 3,
	OPT_IA_TA = 4,
	OPT_IAADDR = 5,
	OPT_ORO = 6,
	OPT_ELAPSED = 8,
	OPT_RELAY_MSG = 9,
	OPT_STATUS = 13,
	OPT_RAPID = 14,
	OPT_IFACE_ID = 18,
	OPT_DNS = 23,
	OPT_SEARCH = 24,
	OPT_IA_PD = 25,
	OPT_IAPREFIX = 26,
	OPT_CLIENT_LINKADDR = 79
};

#define IAID 1
#define MAXMSG 1500

static const char *const type_names[] = {
    "0",
    "SOLICIT",
    "ADVERTISE",
    "REQUEST",
    "CONFIRM",
    "RENEW",
    "REBIND",
    "REPLY",
    "RELEASE",
    "DECLINE",
    "RECONFIGURE",
    "INFORMATION-REQUEST",
    "RELAY-FORW",
    "RELAY-REPL",
};
static const char *const status_names[] = {
    "Success",
    "UnspecFail",
    "NoAddrsAvail",
    "NoBinding",
    "NotOnLink",
    "UseMulticast",
    "NoPrefixAvail",
};

static int sock546 = -1, sock547 = -1, ifindex;
static uint8_t mac[6];
static uint32_t xid_next = 0x100;
static struct in6_addr unicast_to; /* the server's address for the unicast case */

/* A message being built. */
struct msg {
	uint8_t b[MAXMSG];
	size_t n;
};

static void
put(struct msg *m, const void *p, size_t n)
{
	if (m->n + n > sizeof(m->b)) {
		fprintf(stderr, "dhcp6-craft: message too long\n");
		exit(2);
	}
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void
put16(struct msg *m, uint16_t v)
{
	uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
	put(m, b, 2);
}

static void
put32(struct msg *m, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
	put(m, b, 4);
}

/* Option header with an explicit length (which may lie about the body). */
static void
opt_hdr(struct msg *m, uint16_t code, uint16_t len)
{
	put16(m, code);
	put16(m, len);
}

static void
opt(struct msg *m, uint16_t code, const void *body, size_t len)
{
	opt_hdr(m, code, (uint16_t)len);
	put(m, body, len);
}

static uint32_t
start(struct msg *m, int type)
{
	uint32_t xid = xid_next++;

	m->n = 0;
	uint8_t h[4] = {(uint8_t)type, (uint8_t)(xid >> 16), (uint8_t)(xid >> 8), (uint8_t)xid};
	put(m, h, 4);
	return xid;
}

/* DUID-LL of our MAC (RFC 8415 §11.4): type 3, hardware type 1. */
static void
opt_clientid(struct msg *m)
{
	uint8_t d[10] = {0, 3, 0, 1};
	memcpy(d + 4, mac, 6);
	opt(m, OPT_CLIENTID, d, sizeof(d));
}

static void
opt_elapsed(struct msg *m)
{
	opt_hdr(m, OPT_ELAPSED, 2);
	put16(m, 0);
}

static void
opt_oro(struct msg *m)
{
	opt_hdr(m, OPT_ORO, 4);
	put16(m, OPT_DNS);
	put16(m, OPT_SEARCH);
}

/* IA_NA (or another code with its body) with one IAADDR when addr is given. */
static void
opt_ia(struct msg *m, uint16_t code, uint32_t iaid, const struct in6_addr *addr)
{
	opt_hdr(m, code, (uint16_t)(12 + (addr ? 28 : 0)));
	put32(m, iaid);
	put32(m, 0);
	put32(m, 0);
	if (addr) {
		opt_hdr(m, OPT_IAADDR, 24);
		put(m, addr, 16);
		put32(m, 0);
		put32(m, 0);
	}
}

/* What a reply said; the server DUID is kept for the next message. */
struct reply {
	int type;
	uint8_t duid[130];
	size_t duid_len;
	bool have_addr;
	struct in6_addr addr; /* the first IAADDR of the first IA_NA */
	char line[2048];
};

static void append(char *line, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void
append(char *line, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(line);
	va_list ap;

	if (n >= cap - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(line + n, cap - n, fmt, ap);
	va_end(ap);
}

static uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
status_str(const uint8_t *p, size_t len, char *out, size_t cap)
{
	if (len < 2) {
		snprintf(out, cap, "short");
		return;
	}
	unsigned c = rd16(p);
	if (c < sizeof(status_names) / sizeof(status_names[0]))
		snprintf(out, cap, "%s", status_names[c]);
	else
		snprintf(out, cap, "%u", c);
}

/* The options inside an IA (after its fixed part) or an IAADDR/IAPREFIX. */
static void
parse_ia_opts(struct reply *r, const uint8_t *p, size_t len, bool first_na)
{
	char st[32] = "-";
	char addrs[1024] = "";
	size_t off = 0;

	while (off + 4 <= len) {
		uint16_t code = rd16(p + off), olen = rd16(p + off + 2);
		const uint8_t *b = p + off + 4;

		if (off + 4 + olen > len) {
			append(addrs, sizeof(addrs), ",BAD-SUBOPTION");
			break;
		}
		if (code == OPT_STATUS) {
			status_str(b, olen, st, sizeof(st));
		} else if (code == OPT_IAADDR && olen >= 24) {
			char a[INET6_ADDRSTRLEN], ist[32] = "-";
			inet_ntop(AF_INET6, b, a, sizeof(a));
			for (size_t o = 24; o + 4 <= olen;) {
				uint16_t c2 = rd16(b + o), l2 = rd16(b + o + 2);
				if (o + 4 + l2 > olen)
					break;
				if (c2 == OPT_STATUS)
					status_str(b + o + 4, l2, ist, sizeof(ist));
				o += 4 + (size_t)l2;
			}
			append(
			    addrs, sizeof(addrs), ",addr=%s/%u/%u", a, rd32(b + 16), rd32(b + 20));
			if (strcmp(ist, "-") != 0)
				append(addrs, sizeof(addrs), "/status=%s", ist);
			if (first_na && !r->have_addr) {
				memcpy(&r->addr, b, 16);
				r->have_addr = true;
			}
		} else if (code == OPT_IAPREFIX && olen >= 25) {
			char a[INET6_ADDRSTRLEN];
			inet_ntop(AF_INET6, b + 9, a, sizeof(a));
			append(addrs, sizeof(addrs), ",prefix=%s/%u/%u/%u", a, b[8], rd32(b),
			    rd32(b + 4));
		} else {
			append(addrs, sizeof(addrs), ",opt%u", code);
		}
		off += 4 + (size_t)olen;
	}
	append(r->line, sizeof(r->line), ",status=%s%s", st, addrs);
}

/* Fill r from the DHCPv6 message p (not a relay message). */
static void
parse_msg(struct reply *r, const uint8_t *p, size_t len)
{
	int codes[64];
	size_t n_codes = 0, off = 4;
	char st[32] = "-";
	char ias[1536] = "";
	bool first_na = true;

	r->type = p[0];
	if (p[0] < sizeof(type_names) / sizeof(type_names[0]))
		append(r->line, sizeof(r->line), "%s", type_names[p[0]]);
	else
		append(r->line, sizeof(r->line), "type%u", p[0]);
	while (off + 4 <= len) {
		uint16_t code = rd16(p + off), olen = rd16(p + off + 2);
		const uint8_t *b = p + off + 4;

		if (off + 4 + olen > len) {
			append(r->line, sizeof(r->line), " BAD-OPTION-LENGTH");
			break;
		}
		if (n_codes < 64)
			codes[n_codes++] = code;
		if (code == OPT_STATUS) {
			status_str(b, olen, st, sizeof(st));
		} else if (code == OPT_SERVERID && olen <= sizeof(r->duid)) {
			memcpy(r->duid, b, olen);
			r->duid_len = olen;
		} else if ((code == OPT_IA_NA || code == OPT_IA_PD) && olen >= 12) {
			struct reply tmp = {0};
			parse_ia_opts(&tmp, b + 12, olen - 12u, code == OPT_IA_NA && first_na);
			if (code == OPT_IA_NA && first_na) {
				r->have_addr = tmp.have_addr;
				r->addr = tmp.addr;
				first_na = false;
			}
			append(ias, sizeof(ias), " %s=%u,t1=%u,t2=%u%s",
			    code == OPT_IA_NA ? "ia_na" : "ia_pd", rd32(b), rd32(b + 4),
			    rd32(b + 8), tmp.line);
		} else if (code == OPT_IA_TA && olen >= 4) {
			struct reply tmp = {0};
			parse_ia_opts(&tmp, b + 4, olen - 4u, false);
			append(ias, sizeof(ias), " ia_ta=%u%s", rd32(b), tmp.line);
		}
		off += 4 + (size_t)olen;
	}
	if (off != len && off + 4 > len)
		append(r->line, sizeof(r->line), " TRAILING-BYTES");
	append(r->line, sizeof(r->line), " status=%s%s opts=", st, ias);
	/* sorted, duplicates shown */
	for (size_t i = 1; i < n_codes; i++)
		for (size_t j = i; j > 0 && codes[j - 1] > codes[j]; j--) {
			int t = codes[j];
			codes[j] = codes[j - 1];
			codes[j - 1] = t;
		}
	for (size_t i = 0; i < n_codes; i++)
		append(r->line, sizeof(r->line), "%s%d", i ? "," : "", codes[i]);
	if (n_codes == 0)
		append(r->line, sizeof(r->line), "-");
}

static int
timeout_ms(void)
{
	const char *t = getenv("CRAFT_TIMEOUT_MS");
	int v = t ? atoi(t) : 0;

	return v > 0 ? v : 2000;
}

/* Send m from fd to dst:port; wait for a reply with the same xid (relay: any RELAY-REPL).
 * Returns true when r was filled. */
static bool
exchange(int fd, const struct msg *m, const struct in6_addr *dst, uint16_t port, uint32_t xid,
    struct reply *r)
{
	struct sockaddr_in6 to = {.sin6_family = AF_INET6, .sin6_port = htons(port)};
	uint8_t b[4096];
	struct timespec t0, t;

	memset(r, 0, sizeof(*r));
	to.sin6_addr = *dst;
	to.sin6_scope_id = (uint32_t)ifindex;
	if (sendto(fd, m->b, m->n, 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
		fprintf(stderr, "dhcp6-craft: sendto: %s\n", strerror(errno));
		exit(2);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		long left = timeout_ms() -
			    ((t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L);
		if (left <= 0)
			return false;
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (poll(&pfd, 1, (int)left) <= 0)
			continue;
		ssize_t n = recv(fd, b, sizeof(b), 0);
		if (n < 4)
			continue;
		if (b[0] == RELAY_REPL && m->b[0] == RELAY_FORW) {
			/* hop-count, link-address, peer-address, then options: find Relay Message
			 */
			size_t off = 34;
			append(r->line, sizeof(r->line), "RELAY-REPL>");
			while (off + 4 <= (size_t)n) {
				uint16_t code = rd16(b + off), olen = rd16(b + off + 2);
				if (off + 4 + olen > (size_t)n)
					break;
				if (code == OPT_RELAY_MSG && olen >= 4) {
					parse_msg(r, b + off + 4, olen);
					return true;
				}
				off += 4 + (size_t)olen;
			}
			append(r->line, sizeof(r->line), "no-relay-message");
			return true;
		}
		if (b[0] == RELAY_REPL || b[0] == RELAY_FORW)
			continue;
		if (((uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]) != xid)
			continue;
		parse_msg(r, b, (size_t)n);
		return true;
	}
}

static const struct in6_addr all_servers = {
    .s6_addr = {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2}};

static bool
send_mc(const struct msg *m, uint32_t xid, struct reply *r)
{
	return exchange(sock546, m, &all_servers, 547, xid, r);
}

/* Prologue: SOLICIT with one IA_NA -> the ADVERTISE (server DUID, offered address). */
static bool
solicit(struct reply *adv)
{
	struct msg m;
	uint32_t xid = start(&m, SOLICIT);

	opt_clientid(&m);
	opt_elapsed(&m);
	opt_oro(&m);
	opt_ia(&m, OPT_IA_NA, IAID, NULL);
	return send_mc(&m, xid, adv) && adv->type == ADVERTISE && adv->duid_len > 0;
}

/* A message of type with client id, the server id of adv (unless !with_sid), and the IA_NA
 * with adv's address. */
static uint32_t
with_ia(struct msg *m, int type, const struct reply *adv, bool with_sid)
{
	uint32_t xid = start(m, type);

	opt_clientid(m);
	if (with_sid)
		opt(m, OPT_SERVERID, adv->duid, adv->duid_len);
	opt_elapsed(m);
	opt_oro(m);
	opt_ia(m, OPT_IA_NA, IAID, adv->have_addr ? &adv->addr : NULL);
	return xid;
}

/* Prologue: SOLICIT + REQUEST -> the REPLY (a bound address). */
static bool
bind_addr(struct reply *rep)
{
	struct reply adv;
	struct msg m;

	if (!solicit(&adv) || !adv.have_addr)
		return false;
	uint32_t xid = with_ia(&m, REQUEST, &adv, true);
	if (!send_mc(&m, xid, rep) || rep->type != REPLY || !rep->have_addr)
		return false;
	memcpy(rep->duid, adv.duid, adv.duid_len);
	rep->duid_len = adv.duid_len;
	return true;
}

static void
result(const char *name, bool got, const struct reply *r)
{
	printf("%s %s\n", name, got ? r->line : "silent");
}

static void
prologue_failed(const char *name, const char *what)
{
	printf("%s prologue-failed(%s)\n", name, what);
}

/* The server DUID from CRAFT_SERVER_DUID (hex) into r. */
static bool
env_duid(struct reply *r)
{
	const char *h = getenv("CRAFT_SERVER_DUID");
	size_t n = h ? strlen(h) / 2 : 0;

	if (!n || n > sizeof(r->duid))
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(h + 2 * i, "%2x", &v) != 1)
			return false;
		r->duid[i] = (uint8_t)v;
	}
	r->duid_len = n;
	return true;
}

/* The cases: each builds its message (after a prologue when it needs state) and prints its line.
 * Long: one short branch per case; split up, the list of cases would be scattered. */
static int
run_case(const char *c)
{
	struct reply r, pre;
	struct msg m;
	uint32_t xid;
	struct in6_addr a;

	if (!strcmp(c, "solicit") || !strcmp(c, "solicit-unknown") ||
	    !strcmp(c, "solicit-kvm-mac")) {
		xid = start(&m, SOLICIT);
		opt_clientid(&m);
		opt_elapsed(&m);
		opt_oro(&m);
		opt_ia(&m, OPT_IA_NA, IAID, NULL);
	} else if (!strcmp(c, "solicit-rapid")) {
		xid = start(&m, SOLICIT);
		opt_clientid(&m);
		opt_elapsed(&m);
		opt_oro(&m);
		opt(&m, OPT_RAPID, NULL, 0);
		opt_ia(&m, OPT_IA_NA, IAID, NULL);
	} else if (!strcmp(c, "request") || !strcmp(c, "request-unicast") ||
		   !strcmp(c, "request-no-serverid") || !strcmp(c, "request-wrong-serverid")) {
		if (!solicit(&pre)) {
			/* unknown clients: REQUEST for a made-up server and address */
			prologue_failed(c, "no ADVERTISE");
			return 0;
		}
		if (!strcmp(c, "request-wrong-serverid")) {
			static const uint8_t other[] = {0, 3, 0, 1, 2, 0, 0, 0, 0, 9};
			memcpy(pre.duid, other, sizeof(other));
			pre.duid_len = sizeof(other);
		}
		xid = with_ia(&m, REQUEST, &pre, strcmp(c, "request-no-serverid") != 0);
		if (!strcmp(c, "request-unicast")) {
			result(c, exchange(sock546, &m, &unicast_to, 547, xid, &r), &r);
			return 0;
		}
	} else if (!strcmp(c, "request-unknown")) {
		/* an unknown client REQUESTs an address of the pool from the server (its DUID from
		 * CRAFT_SERVER_DUID when the server sent us no ADVERTISE) */
		if (!solicit(&pre)) {
			if (!env_duid(&pre)) {
				prologue_failed(c, "no ADVERTISE and no CRAFT_SERVER_DUID");
				return 0;
			}
			inet_pton(AF_INET6, "fd00:66::120", &pre.addr);
			pre.have_addr = true;
		}
		xid = with_ia(&m, REQUEST, &pre, true);
	} else if (!strcmp(c, "server-duid")) {
		if (!solicit(&pre)) {
			printf("-\n");
			return 1;
		}
		for (size_t i = 0; i < pre.duid_len; i++)
			printf("%02x", pre.duid[i]);
		printf("\n");
		return 0;
	} else if (!strcmp(c, "renew") || !strcmp(c, "rebind") || !strcmp(c, "release") ||
		   !strcmp(c, "decline")) {
		if (!bind_addr(&pre)) {
			prologue_failed(c, "no bound address");
			return 0;
		}
		int type = !strcmp(c, "renew")	   ? RENEW
			   : !strcmp(c, "rebind")  ? REBIND
			   : !strcmp(c, "release") ? RELEASE
						   : DECLINE;
		xid = with_ia(&m, type, &pre, type != REBIND);
	} else if (!strcmp(c, "renew-nobinding")) {
		/* a RENEW for an address this client was never given (RFC 8415 §18.3.4) */
		if (!solicit(&pre)) {
			prologue_failed(c, "no ADVERTISE");
			return 0;
		}
		inet_pton(AF_INET6, "fd00:66::1f0", &pre.addr);
		pre.have_addr = true;
		xid = with_ia(&m, RENEW, &pre, true);
	} else if (!strcmp(c, "confirm-onlink") || !strcmp(c, "confirm-offlink")) {
		struct reply fake = {0};
		inet_pton(AF_INET6, !strcmp(c, "confirm-onlink") ? "fd00:66::150" : "2001:db8::1",
		    &fake.addr);
		fake.have_addr = true;
		xid = with_ia(&m, CONFIRM, &fake, false);
	} else if (!strcmp(c, "inforeq")) {
		xid = start(&m, INFORMATION_REQUEST);
		opt_clientid(&m);
		opt_elapsed(&m);
		opt_oro(&m);
	} else if (!strcmp(c, "bad-optlen-past-end")) {
		xid = start(&m, SOLICIT);
		opt_clientid(&m);
		opt_ia(&m, OPT_IA_NA, IAID, NULL);
		opt_hdr(&m, OPT_ELAPSED, 100); /* claims 100 bytes, 2 follow */
		put16(&m, 0);
	} else if (!strcmp(c, "bad-truncated-header")) {
		xid = start(&m, SOLICIT);
		opt_clientid(&m);
		opt_ia(&m, OPT_IA_NA, IAID, NULL);
		put16(&m, OPT_ELAPSED); /* an option header cut after its code */
	} else if (!strcmp(c, "bad-ia-na-short")) {
		xid = start(&m, SOLICIT);
		opt_clientid(&m);
		opt_elapsed(&m);
		opt_hdr(&m, OPT_IA_NA, 8); /* RFC 8415 §21.4: at least 12 */
		put32(&m, IAID);
		put32(&m, 0);
	} else if (!strcmp(c, "bad-iaaddr-short")) {
		if (!solicit(&pre)) {
			prologue_failed(c, "no ADVERTISE");
			return 0;
		}
		xid = start(&m, REQUEST);
		opt_clientid(&m);
		opt(&m, OPT_SERVERID, pre.duid, pre.duid_len);
		opt_elapsed(&m);
		opt_hdr(&m, OPT_IA_NA, 12 + 4 + 16); /* IAADDR of 16: RFC 8415 §21.6 wants 24 */
		put32(&m, IAID);
		put32(&m, 0);
		put32(&m, 0);
		opt_hdr(&m, OPT_IAADDR, 16);
		put(&m, &pre.addr, 16);
	} else if (!strcmp(c, "bad-clientid-empty")) {
		xid = start(&m, SOLICIT);
		opt(&m, OPT_CLIENTID, NULL, 0);
		opt_elapsed(&m);
		opt_ia(&m, OPT_IA_NA, IAID, NULL);
	} else if (!strcmp(c, "solicit-no-clientid")) {
		xid = start(&m, SOLICIT);
		opt_elapsed(&m);
		opt_ia(&m, OPT_IA_NA, IAID, NULL);
	} else if (!strcmp(c, "solicit-ia-ta")) {
		xid = start(&m, SOLICIT);
		opt_clientid(&m);
		opt_elapsed(&m);
		opt_hdr(&m, OPT_IA_TA, 4);
		put32(&m, IAID);
	} else if (!strcmp(c, "solicit-ia-pd")) {
		xid = start(&m, SOLICIT);
		opt_clientid(&m);
		opt_elapsed(&m);
		opt_ia(&m, OPT_IA_PD, IAID, NULL);
	} else if (!strcmp(c, "solicit-unassigned-ia")) {
		/* option 250 (unassigned) with an IA_NA body and an IAADDR, then a real IA_NA */
		inet_pton(AF_INET6, "fd00:66::1f1", &a);
		xid = start(&m, SOLICIT);
		opt_clientid(&m);
		opt_elapsed(&m);
		opt_ia(&m, 250, 7, &a);
		opt_ia(&m, OPT_IA_NA, IAID, NULL);
	} else if (!strcmp(c, "solicit-serverid")) {
		static const uint8_t d[] = {0, 3, 0, 1, 2, 0, 0, 0, 0, 9};
		xid = start(&m, SOLICIT);
		opt_clientid(&m);
		opt(&m, OPT_SERVERID, d, sizeof(d)); /* RFC 8415 §16.2: discard */
		opt_elapsed(&m);
		opt_ia(&m, OPT_IA_NA, IAID, NULL);
	} else if (!strcmp(c, "solicit-two-ia-na")) {
		xid = start(&m, SOLICIT);
		opt_clientid(&m);
		opt_elapsed(&m);
		opt_oro(&m);
		opt_ia(&m, OPT_IA_NA, IAID, NULL);
		opt_ia(&m, OPT_IA_NA, IAID + 1, NULL);
	} else if (!strcmp(c, "relay-solicit")) {
		/* RELAY-FORW (RFC 8415 §9) from a relay on port 547: link-address in the pool's
		 * prefix, peer-address a link-local that is not the client's, and the client's
		 * MAC in RFC 6939's option 79 (link-layer type 1) */
		struct msg inner;
		uint32_t ixid = start(&inner, SOLICIT);
		opt_clientid(&inner);
		opt_elapsed(&inner);
		opt_oro(&inner);
		opt_ia(&inner, OPT_IA_NA, IAID, NULL);
		(void)ixid;
		xid = start(&m, RELAY_FORW);
		m.n = 0;
		uint8_t h[2] = {RELAY_FORW, 0};
		put(&m, h, 2);
		inet_pton(AF_INET6, "fd00:66::", &a);
		put(&m, &a, 16);
		inet_pton(AF_INET6, "fe80::200:ff:fe00:99", &a);
		put(&m, &a, 16);
		opt(&m, OPT_IFACE_ID, "relay0", 6);
		uint8_t ll[8] = {0, 1};
		memcpy(ll + 2, mac, 6);
		opt(&m, OPT_CLIENT_LINKADDR, ll, sizeof(ll));
		opt(&m, OPT_RELAY_MSG, inner.b, inner.n);
		result(c, exchange(sock547, &m, &all_servers, 547, xid, &r), &r);
		return 0;
	} else {
		fprintf(stderr, "dhcp6-craft: unknown case %s\n", c);
		return 2;
	}
	result(c, send_mc(&m, xid, &r), &r);
	return 0;
}

static int
open_sock(const char *ifname, uint16_t port)
{
	int fd = socket(AF_INET6, SOCK_DGRAM, 0), one = 1;
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons(port)};

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname)) < 0 ||
	    setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &ifindex, sizeof(ifindex)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "dhcp6-craft: socket on %s port %u: %s\n", ifname, port,
		    strerror(errno));
		exit(2);
	}
	return fd;
}

int
main(int argc, char **argv)
{
	struct ifreq ifr = {0};

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: dhcp6-craft IFACE CASE [SERVER_UNICAST]\n");
		return 2;
	}
	ifindex = (int)if_nametoindex(argv[1]);
	if (!ifindex) {
		fprintf(stderr, "dhcp6-craft: no interface %s\n", argv[1]);
		return 2;
	}
	if (argc == 4 && inet_pton(AF_INET6, argv[3], &unicast_to) != 1) {
		fprintf(stderr, "dhcp6-craft: bad address %s\n", argv[3]);
		return 2;
	}
	int s = socket(AF_INET6, SOCK_DGRAM, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", argv[1]);
	if (s < 0 || ioctl(s, SIOCGIFHWADDR, &ifr) < 0) {
		fprintf(stderr, "dhcp6-craft: MAC of %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	close(s);
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	/* a relay speaks for another client: its DUID-LL and option 79 carry that MAC */
	const char *cm = getenv("CRAFT_CLIENT_MAC");
	if (cm && sscanf(cm, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1], &mac[2], &mac[3],
		      &mac[4], &mac[5]) != 6) {
		fprintf(stderr, "dhcp6-craft: bad CRAFT_CLIENT_MAC %s\n", cm);
		return 2;
	}
	/* a per-process start keeps transaction ids of consecutive runs apart */
	xid_next = ((uint32_t)getpid() << 4) & 0xfffff0;
	sock546 = open_sock(argv[1], 546);
	if (!strcmp(argv[2], "relay-solicit"))
		sock547 = open_sock(argv[1], 547);
	int rc = run_case(argv[2]);
	fflush(stdout);
	close(sock546);
	if (sock547 >= 0)
		close(sock547);
	return rc;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp-boot-craft - crafted network boot DHCPv4 requests for the differential test against Kea
 * (tests/netns/test-dhcp-boot-kea-diff.sh; built as build/tests/dhcp-boot-craft).
 *
 *   dhcp-boot-craft IFACE CASE
 *   dhcp-boot-craft --list
 *
 * Sends CASE's DHCPDISCOVER (broadcast flag set) from IFACE's MAC through a UDP socket on
 * port 68 bound to IFACE (no address needed: a limited broadcast from 0.0.0.0), and prints the
 * OFFER's network boot fields on one line:
 *
 *   CASE TYPE siaddr=A sname=S file=F o43=.. o60=.. o66=.. o67=.. o97=..
 *
 * (TYPE OFFER, ACK, NAK, or "silent" when nothing came back within CRAFT_TIMEOUT_MS, default
 * 2000: the timeout only decides that there was no reply, never compared). A "request-" case
 * then sends the REQUEST for the offered address (options 50 and 54, the same boot options)
 * and prints the ACK's line instead. String fields are printed as they are when printable
 * without spaces, else as hex; "-" when absent or empty; o97 is "echo" when it is the sent
 * option 97 byte for byte. Only these fields: the rest of the reply (lease time, T1/T2, ...)
 * is each server's own and not what the table compares.
 *
 * Exit: 0 when the line was printed (whatever it says), 2 on errors (bad usage, socket).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dhcp/proto.h"
#include "lib/buf.h"

#define ELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* RFC 4578 §2.5: type 0, then the 16-byte UUID */
#define UUID97 97, 17, 0, 0x44, 0x45, 0x4c, 0x4c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12
#define NDI94 94, 3, 1, 2, 1
#define PXE60(a, b)                                                                                \
	60, 32, 'P', 'X', 'E', 'C', 'l', 'i', 'e', 'n', 't', ':', 'A', 'r', 'c', 'h', ':', '0',    \
	    '0', '0', a, b, ':', 'U', 'N', 'D', 'I', ':', '0', '0', '2', '0', '0', '1'
#define HTTP60                                                                                     \
	60, 33, 'H', 'T', 'T', 'P', 'C', 'l', 'i', 'e', 'n', 't', ':', 'A', 'r', 'c', 'h', ':',    \
	    '0', '0', '0', '1', '6', ':', 'U', 'N', 'D', 'I', ':', '0', '0', '3', '0', '0', '1'
/* what a PXE ROM asks for (Intel PXE 2.1 table 2-1, trimmed) */
#define PXE55 55, 8, 1, 3, 6, 15, 43, 60, 66, 67
#define IPXE77 77, 4, 'i', 'P', 'X', 'E'

struct craft_case {
	const char *name;
	bool request; /* DISCOVER, then REQUEST the offer: the ACK is printed */
	uint8_t opts[160];
	size_t len;
};

#define CASE(n, req, ...)                                                                          \
	{                                                                                          \
		.name = n, .request = req, .opts = {__VA_ARGS__},                                  \
		.len = sizeof((uint8_t[]){__VA_ARGS__})                                            \
	}

static const struct craft_case cases[] = {
    CASE("plain", false, 55, 4, 1, 3, 6, 15),
    CASE("plain-asks-66-67", false, 55, 6, 1, 3, 6, 15, 66, 67),
    CASE("pxe-bios", false, 93, 2, 0, 0, NDI94, PXE60('0', '0'), UUID97, PXE55),
    CASE("pxe-efi-ia32", false, 93, 2, 0, 6, NDI94, PXE60('0', '6'), UUID97, PXE55),
    CASE("pxe-efi-bc", false, 93, 2, 0, 7, NDI94, PXE60('0', '7'), UUID97, PXE55),
    CASE("pxe-efi-x64", false, 93, 2, 0, 9, NDI94, PXE60('0', '9'), UUID97, PXE55),
    CASE("pxe-arm64", false, 93, 2, 0, 11, NDI94, PXE60('1', '1'), UUID97, PXE55),
    CASE("pxe-bios-no-prl", false, 93, 2, 0, 0, NDI94, PXE60('0', '0'), UUID97),
    CASE("pxe-bios-no-uuid", false, 93, 2, 0, 0, NDI94, PXE60('0', '0'), PXE55),
    CASE("http-x64", false, 93, 2, 0, 16, NDI94, HTTP60, 55, 6, 1, 3, 6, 15, 60, 67),
    CASE("ipxe-bios", false, 93, 2, 0, 0, NDI94, PXE60('0', '0'), IPXE77, UUID97, PXE55),
    CASE("ipxe-efi", false, 93, 2, 0, 7, NDI94, PXE60('0', '7'), IPXE77, PXE55),
    CASE("ipxe-rfc3004", false, 93, 2, 0, 7, NDI94, PXE60('0', '7'), 77, 5, 4, 'i', 'P', 'X', 'E',
	PXE55),
    CASE("arch-unknown", false, 93, 2, 0, 10, NDI94, PXE60('1', '0'), UUID97, PXE55),
    CASE("arch-list", false, 93, 4, 0, 7, 0, 0, NDI94, PXE60('0', '7'), PXE55),
    CASE("arch-no-vendor", false, 93, 2, 0, 7, PXE55),
    CASE("bad-93-odd", false, 93, 3, 0, 0, 0, NDI94, PXE60('0', '0'), PXE55),
    CASE("bad-93-empty", false, 93, 0, NDI94, PXE60('0', '0'), PXE55),
    CASE("bad-97-short", false, 93, 2, 0, 0, NDI94, PXE60('0', '0'), 97, 4, 0, 1, 2, 3, PXE55),
    CASE("bad-77-plain", false, 93, 2, 0, 0, PXE60('0', '0'), 77, 3, 'x', 'y', 'z', PXE55),
    CASE("request-pxe-bios", true, 93, 2, 0, 0, NDI94, PXE60('0', '0'), UUID97, PXE55),
    CASE("request-ipxe-efi", true, 93, 2, 0, 7, NDI94, PXE60('0', '7'), IPXE77, PXE55),
};

static const uint8_t uuid97[] = {UUID97};

static size_t
build(uint8_t *out, uint8_t type, const uint8_t mac[6], uint32_t xid, uint32_t req_ip,
    uint32_t server, const struct craft_case *c)
{
	struct dhcp_msg *m = (struct dhcp_msg *)out;
	size_t n = DHCP_FIXED_LEN;

	memset(out, 0, 576);
	m->op = BOOTREQUEST;
	m->htype = 1;
	m->hlen = 6;
	be32_put(m->xid, xid);
	be16_put(m->flags, DHCP_FLAG_BROADCAST);
	memcpy(m->chaddr, mac, 6);
	be32_put(out + n, DHCP_MAGIC_COOKIE);
	n += 4;
	out[n++] = 53;
	out[n++] = 1;
	out[n++] = type;
	if (type == 3) {
		out[n++] = 50;
		out[n++] = 4;
		be32_put(out + n, req_ip);
		n += 4;
		out[n++] = 54;
		out[n++] = 4;
		be32_put(out + n, server);
		n += 4;
	}
	memcpy(out + n, c->opts, c->len);
	n += c->len;
	out[n++] = 255;
	return n < 300 ? 300 : n;
}

/* The value of option code in the reply's options field (no overload: neither server uses it
 * for these), or NULL. */
static const uint8_t *
find_opt(const uint8_t *msg, size_t len, uint8_t code, size_t *ret_len)
{
	size_t i = DHCP_FIXED_LEN + 4;

	while (i < len && msg[i] != 255) {
		if (msg[i] == 0) {
			i++;
			continue;
		}
		if (i + 1 >= len || i + 2 + msg[i + 1] > len)
			return NULL;
		if (msg[i] == code) {
			*ret_len = msg[i + 1];
			return msg + i + 2;
		}
		i += 2u + msg[i + 1];
	}
	return NULL;
}

static void
print_value(const char *key, const uint8_t *v, size_t len)
{
	bool plain = len > 0;

	for (size_t i = 0; i < len; i++)
		plain = plain && v[i] > ' ' && v[i] < 0x7f;
	printf(" %s=", key);
	if (v == NULL || len == 0)
		printf("-");
	else if (plain)
		printf("%.*s", (int)len, (const char *)v);
	else
		for (size_t i = 0; i < len; i++)
			printf("%02x", v[i]);
}

static void
print_reply(const char *name, const uint8_t *msg, size_t len)
{
	static const char *const types[] = {
	    "?", "DISCOVER", "OFFER", "REQUEST", "DECLINE", "ACK", "NAK", "RELEASE", "INFORM"};
	const struct dhcp_msg *m = (const struct dhcp_msg *)msg;
	const uint8_t *v;
	size_t vlen = 0;
	char ip[INET_ADDRSTRLEN];
	static const uint8_t codes[] = {43, 60, 66, 67};

	v = find_opt(msg, len, 53, &vlen);
	printf("%s %s", name, v != NULL && vlen == 1 && v[0] <= 8 ? types[v[0]] : "?");
	inet_ntop(AF_INET, m->siaddr, ip, sizeof(ip));
	printf(" siaddr=%s", ip);
	print_value("sname", m->sname, strnlen((const char *)m->sname, sizeof(m->sname)));
	print_value("file", m->file, strnlen((const char *)m->file, sizeof(m->file)));
	for (size_t i = 0; i < ELEMS(codes); i++) {
		char key[8];

		snprintf(key, sizeof(key), "o%u", codes[i]);
		v = find_opt(msg, len, codes[i], &vlen);
		print_value(key, v, v != NULL ? vlen : 0);
	}
	v = find_opt(msg, len, 97, &vlen);
	if (v != NULL && vlen == sizeof(uuid97) - 2 && memcmp(v, uuid97 + 2, vlen) == 0)
		printf(" o97=echo");
	else
		print_value("o97", v, v != NULL ? vlen : 0);
	printf("\n");
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Waits for a reply to xid; its length, 0 on timeout, -1 on errors. */
static ssize_t
wait_reply(int fd, uint32_t xid, uint8_t *buf, size_t cap, int timeout_ms)
{
	uint64_t end = now_ms() + (uint64_t)timeout_ms;

	for (uint64_t t = now_ms(); t < end; t = now_ms()) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;
		int r = poll(&p, 1, (int)(end - t));

		if (r < 0 && errno != EINTR)
			return -1;
		if (r <= 0)
			continue;
		n = recv(fd, buf, cap, 0);
		if (n < 0)
			return -1;
		if ((size_t)n >= DHCP_FIXED_LEN + 4 && buf[0] == BOOTREPLY &&
		    be32_get(((struct dhcp_msg *)buf)->xid) == xid)
			return n;
	}
	return 0;
}

static int
open_socket(const char *ifname, uint8_t mac[6])
{
	struct sockaddr_in me = {.sin_family = AF_INET, .sin_port = htons(DHCP_PORT_CLIENT)};
	struct ifreq ifr;
	int one = 1, fd = socket(AF_INET, SOCK_DGRAM, 0);

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname)) < 0 ||
	    bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0 ||
	    ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		perror("dhcp-boot-craft: socket");
		return -1;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return fd;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in to = {.sin_family = AF_INET,
	    .sin_port = htons(DHCP_PORT_SERVER),
	    .sin_addr.s_addr = htonl(INADDR_BROADCAST)};
	const struct craft_case *c = NULL;
	const char *t = getenv("CRAFT_TIMEOUT_MS");
	int timeout = t != NULL ? atoi(t) : 2000, fd;
	uint8_t mac[6], out[576], in[2048];
	uint32_t xid;
	ssize_t n;
	size_t len;

	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		for (size_t i = 0; i < ELEMS(cases); i++)
			printf("%s\n", cases[i].name);
		return 0;
	}
	for (size_t i = 0; argc == 3 && i < ELEMS(cases); i++)
		if (strcmp(cases[i].name, argv[2]) == 0)
			c = &cases[i];
	if (c == NULL) {
		fprintf(stderr, "usage: dhcp-boot-craft IFACE CASE | --list\n");
		return 2;
	}
	if ((fd = open_socket(argv[1], mac)) < 0)
		return 2;
	xid = (uint32_t)getpid() << 8 | (uint32_t)(now_ms() & 0xff);
	len = build(out, 1, mac, xid, 0, 0, c);
	if (sendto(fd, out, len, 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
		perror("dhcp-boot-craft: send");
		return 2;
	}
	n = wait_reply(fd, xid, in, sizeof(in), timeout);
	if (n > 0 && c->request) {
		const struct dhcp_msg *m = (const struct dhcp_msg *)in;
		const uint8_t *sid;
		size_t sl = 0;

		sid = find_opt(in, (size_t)n, 54, &sl);
		if (sid == NULL || sl != 4) {
			printf("%s offer-without-server-id\n", c->name);
			return 0;
		}
		len = build(out, 3, mac, xid + 1, be32_get(m->yiaddr), be32_get(sid), c);
		if (sendto(fd, out, len, 0, (struct sockaddr *)&to, sizeof(to)) < 0) {
			perror("dhcp-boot-craft: send");
			return 2;
		}
		n = wait_reply(fd, xid + 1, in, sizeof(in), timeout);
	}
	if (n < 0) {
		perror("dhcp-boot-craft: receive");
		return 2;
	}
	if (n == 0)
		printf("%s silent\n", c->name);
	else
		print_reply(c->name, in, (size_t)n);
	close(fd);
	return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lease file's on-disk format, one lease a line (described in leasefile.c):
 *     52:54:00:12:34:56 10.0.0.10
 *     52:54:00:ab:cd:ef 10.0.0.11 id=ff00000001000100012a3b4c5d525400abcdef
 * formatted for the journal and the rewrite, parsed strictly at load.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/leasefile-internal.h"
#include "lib/util.h"

int
lf_format_line(
    char *out, size_t n, const uint8_t *id, size_t id_len, const uint8_t mac[6], uint32_t ip)
{
	static const char hex[] = "0123456789abcdef";
	char a[IPV4_STRLEN];
	size_t alen, len;

	/* "MAC IP[ id=HEX]\n", assembled by hand: one line per ACK on the reply path */
	ipv4_format(ip, a);
	alen = strlen(a);
	len = MAC_STRLEN - 1 + 1 + alen;
	if (len + (id != NULL ? 4 + 2 * id_len : 0) + 2 > n)
		return -1;
	mac_format(mac, out);
	out[MAC_STRLEN - 1] = ' ';
	memcpy(out + MAC_STRLEN, a, alen);
	if (id != NULL) {
		memcpy(out + len, " id=", 4);
		len += 4;
	}
	for (size_t i = 0; i < id_len; i++) {
		out[len++] = hex[id[i] >> 4];
		out[len++] = hex[id[i] & 15];
	}
	out[len++] = '\n';
	out[len] = '\0';
	return (int)len;
}

/* "id=HEX": AGENT_ID_MIN..AGENT_ID_MAX bytes into id; their number, or -1. */
static int
parse_id(const char *s, uint8_t id[AGENT_ID_MAX])
{
	size_t n;

	if (strncmp(s, "id=", 3) != 0)
		return -1;
	s += 3;
	n = strlen(s);
	if (n % 2 != 0 || n / 2 < AGENT_ID_MIN || n / 2 > AGENT_ID_MAX)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hexval(s[2 * i]), lo = hexval(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		id[i] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}

const char *
lf_parse_line(const char *s, size_t n, struct line *l, bool *lease)
{
	char line[LINE_MAX_LEN + 16], ms[64], is[64], ids[576], extra[2];
	int fields, r;

	_Static_assert(LINE_MAX_LEN < sizeof(ids), "an id= field fits ids whole");

	*lease = false;
	/* never ours; and sscanf would stop at it, reading "10.0.0.1\0" "5" as 10.0.0.1 */
	if (memchr(s, '\0', n) != NULL)
		return "NUL byte";
	/* spaces before a line: the journal's reserve when it could not be trimmed */
	while (n > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	if (n == 0 || *s == '#')
		return NULL;
	if (n >= LINE_MAX_LEN)
		return "line too long";
	memcpy(line, s, n);
	line[n] = '\0';
	/* ids holds a whole line: an id= field is never cut */
	fields = sscanf(line, "%63s %63s %575s %1s", ms, is, ids, extra);
	if (fields != 2 && fields != 3)
		return "expected \"MAC IP [id=HEX]\"";
	if (mac_parse(ms, l->mac) < 0)
		return "not a MAC address";
	if (ipv4_parse(is, &l->ip) < 0)
		return "not an IPv4 address";
	l->id_len = 0;
	if (fields == 3) {
		if ((r = parse_id(ids, l->id)) < 0)
			return "not a client identifier (id= and 2 to 255 bytes in hex)";
		l->id_len = (size_t)r;
	}
	*lease = true;
	return NULL;
}

bool
lf_torn_line(const char *s, size_t n)
{
	size_t k = 0;

	while (k < n && s[k] == ' ')
		k++;
	if (n - k >= LINE_MAX_LEN)
		return false;
	for (; k < n; k++)
		if (s[k] == '\0' || strchr("0123456789abcdefABCDEF:-. i=", s[k]) == NULL)
			return false;
	return true;
}

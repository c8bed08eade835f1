/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/admit-goparse.c - Go-compatible parsing for the admission rules: the messages
 * upstream's webhook returns come from Go's net/netip and net packages
 * (harvester/vm-dhcp-controller pkg/util/network.go LoadCIDR/LoadPool), its strings from
 * Go's JSON decoder and wrangler's kv.RSplit.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/admit-internal.h"

/* --- Go-compatible parsing --------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (1..4) and its code point, or 0 when invalid. */
static size_t
utf8_seq(const unsigned char *s, uint32_t *cp)
{
	size_t n;
	uint32_t v, min;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	v = s[0] & (0x3f >> (n - 1));
	min = n == 2 ? 0x80 : n == 3 ? 0x800 : 0x10000;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return n;
}

/* strconv.Quote: printable runes as they are, Go's escapes for the rest. */
void
admit_go_quote(const char *s, char *out, size_t len)
{
	static const char esc[] = "\a\b\f\n\r\t\v", letters[] = "abfnrtv";
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;
	char tmp[16];

#define PUT(str)                                                                                   \
	do {                                                                                       \
		size_t l_ = strlen(str);                                                           \
		if (o + l_ + 2 > len)                                                              \
			goto done;                                                                 \
		memcpy(out + o, str, l_);                                                          \
		o += l_;                                                                           \
	} while (0)
	if (len < 3) {
		if (len)
			out[0] = '\0';
		return;
	}
	out[o++] = '"';
	while (*p) {
		uint32_t cp;
		size_t n;
		const char *e;

		if (*p == '"' || *p == '\\') {
			snprintf(tmp, sizeof(tmp), "\\%c", *p);
			n = 1;
		} else if (*p >= 0x20 && *p < 0x7f) {
			snprintf(tmp, sizeof(tmp), "%c", *p);
			n = 1;
		} else if (*p && (e = strchr(esc, *p)) != NULL) {
			snprintf(tmp, sizeof(tmp), "\\%c", letters[e - esc]);
			n = 1;
		} else if ((n = utf8_seq(p, &cp)) == 0) {
			snprintf(tmp, sizeof(tmp), "\\x%02x", *p);
			n = 1;
		} else if (cp < 0xa0 || cp == 0xad || cp == 0x2028 || cp == 0x2029 ||
			   cp == 0xfeff) {
			snprintf(tmp, sizeof(tmp), "\\u%04x", (unsigned)cp);
		} else {
			memcpy(tmp, p, n);
			tmp[n] = '\0';
		}
		PUT(tmp);
		p += n;
	}
done:
#undef PUT
	out[o++] = '"';
	out[o] = '\0';
}

static int
parse_error(const char *in, const char *msg, const char *at, char *err, size_t len)
{
	char qin[160], qat[160];

	if (err && len) {
		admit_go_quote(in, qin, sizeof(qin));
		if (at) {
			admit_go_quote(at, qat, sizeof(qat));
			snprintf(err, len, "ParseAddr(%s): %s (at %s)", qin, msg, qat);
		} else {
			snprintf(err, len, "ParseAddr(%s): %s", qin, msg);
		}
	}
	return -EINVAL;
}

/* net/netip's parseIPv4, message for message. */
static int
go_parse_ipv4(const char *s, uint32_t *ret, char *err, size_t len)
{
	unsigned fields[4] = {0}, val = 0, pos = 0, digits = 0;
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++) {
		if (s[i] >= '0' && s[i] <= '9') {
			if (digits == 1 && val == 0)
				return parse_error(
				    s, "IPv4 field has octet with leading zero", NULL, err, len);
			val = val * 10 + (unsigned)(s[i] - '0');
			digits++;
			if (val > 255)
				return parse_error(s, "IPv4 field has value >255", NULL, err, len);
		} else if (s[i] == '.') {
			if (i == 0 || i == n - 1 || s[i - 1] == '.')
				return parse_error(
				    s, "IPv4 field must have at least one digit", s + i, err, len);
			if (pos == 3)
				return parse_error(s, "IPv4 address too long", NULL, err, len);
			fields[pos++] = val;
			val = 0;
			digits = 0;
		} else {
			return parse_error(s, "unexpected character", s + i, err, len);
		}
	}
	if (pos < 3)
		return parse_error(s, "IPv4 address too short", NULL, err, len);
	fields[3] = val;
	*ret = fields[0] << 24 | fields[1] << 16 | fields[2] << 8 | fields[3];
	return 0;
}

int
admit_go_parse_addr(const char *s, uint32_t *ret, char *err, size_t len)
{
	char q[160];

	for (const char *p = s; *p; p++) {
		if (*p == '.')
			return go_parse_ipv4(s, ret, err, len);
		if (*p == ':') {
			admit_go_quote(s, q, sizeof(q));
			if (err && len)
				snprintf(err, len, "%s is not an IPv4 address", q);
			return -EAFNOSUPPORT;
		}
		if (*p == '%')
			return parse_error(s, "missing IPv6 address", NULL, err, len);
	}
	return parse_error(s, "unable to parse IP", NULL, err, len);
}

int
admit_parse_ipv4(const char *s, uint32_t *ret, char *err, size_t err_len)
{
	uint32_t a;
	int r;

	if (!s)
		s = "";
	r = admit_go_parse_addr(s, &a, err, err_len);
	if (r < 0)
		return -EINVAL;
	*ret = a;
	return 0;
}

int
admit_parse_field(const char *label, const char *s, uint32_t *ret, char *reason, size_t len)
{
	int r = admit_go_parse_addr(s, ret, reason, len);

	if (r == -EAFNOSUPPORT)
		snprintf(reason, len, "%s %s is not an IPv4 address", label, s);
	return r < 0 ? -1 : 0;
}

int
admit_go_parse_cidr(const char *s, uint32_t *net, unsigned *prefix, char *err, size_t len)
{
	const char *slash = strchr(s, '/');
	char addr[64];
	unsigned long n = 0;
	size_t i;
	uint32_t a;
	int r;

	if (!slash || (size_t)(slash - s) >= sizeof(addr))
		goto bad;
	memcpy(addr, s, (size_t)(slash - s));
	addr[slash - s] = '\0';
	/* net's dtoi: decimal digits only, at least one */
	for (i = 1; slash[i] >= '0' && slash[i] <= '9'; i++)
		if ((n = n * 10 + (unsigned long)(slash[i] - '0')) >= 0xFFFFFF)
			goto bad;
	if (i == 1 || slash[i] != '\0')
		goto bad;
	r = admit_go_parse_addr(addr, &a, NULL, 0);
	if (r == -EAFNOSUPPORT && n <= 128) {
		snprintf(err, len, "cidr %s is not an IPv4 CIDR", s);
		return -EAFNOSUPPORT;
	}
	if (r < 0 || n > 32)
		goto bad;
	*prefix = (unsigned)n;
	*net = a & ipv4_prefix_mask(*prefix);
	return 0;
bad:
	snprintf(err, len, "invalid CIDR address: %s", s);
	return -EINVAL;
}

/* --- JSON and names ---------------------------------------------------------------------- */

int
admit_json_str(const json_t *obj, const char *key, const char **ret)
{
	json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
		return -EINVAL;
	*ret = json_string_value(v);
	return 0;
}

/* strings.TrimSpace of s[0..n) into out (size cap). */
static void
trim_copy(const char *s, size_t n, char *out, size_t cap)
{
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (n >= cap)
		n = cap - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

void
admit_split_network(
    const char *network, char ns[KIND_NS_MAX], char name[KIND_NAME_MAX], char canon[KIND_REF_MAX])
{
	/* wrangler's kv.RSplit splits at the first separator (strings.SplitN(s, sep, 2)). */
	const char *slash = strchr(network, '/');

	if (slash) {
		trim_copy(network, (size_t)(slash - network), ns, KIND_NS_MAX);
		trim_copy(slash + 1, strlen(slash + 1), name, KIND_NAME_MAX);
	} else {
		ns[0] = '\0';
		trim_copy(network, strlen(network), name, KIND_NAME_MAX);
	}
	if (ns[0] == '\0')
		snprintf(ns, KIND_NS_MAX, "default");
	snprintf(canon, KIND_REF_MAX, "%s/%s", ns, name);
}

/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/clock.h"

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
mac_parse(const char *s, uint8_t ret[MAC_LEN])
{
	uint8_t mac[MAC_LEN];
	size_t len;

	if (s == NULL)
		return -EINVAL;
	len = strlen(s);
	if (len == 17) {
		char sep = s[2];
		if (sep != ':' && sep != '-')
			return -EINVAL;
		for (int i = 0; i < MAC_LEN; i++) {
			int hi = hexval(s[i * 3]), lo = hexval(s[i * 3 + 1]);
			if (hi < 0 || lo < 0)
				return -EINVAL;
			if (i < MAC_LEN - 1 && s[i * 3 + 2] != sep)
				return -EINVAL;
			mac[i] = (uint8_t)(hi << 4 | lo);
		}
	} else if (len == 14) {
		/* aabb.ccdd.eeff */
		if (s[4] != '.' || s[9] != '.')
			return -EINVAL;
		int k = 0;
		for (size_t i = 0; i < len; i += 5) {
			for (int j = 0; j < 2; j++) {
				int hi = hexval(s[i + 2 * j]), lo = hexval(s[i + 2 * j + 1]);
				if (hi < 0 || lo < 0)
					return -EINVAL;
				mac[k++] = (uint8_t)(hi << 4 | lo);
			}
		}
	} else {
		return -EINVAL;
	}
	memcpy(ret, mac, MAC_LEN);
	return 0;
}

bool
mac_is_nic(const uint8_t mac[MAC_LEN])
{
	static const uint8_t zero[MAC_LEN];

	return (mac[0] & 0x01) == 0 && memcmp(mac, zero, MAC_LEN) != 0;
}

const char *
mac_kind(const uint8_t mac[MAC_LEN])
{
	static const uint8_t zero[MAC_LEN], bcast[MAC_LEN] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	if (memcmp(mac, bcast, MAC_LEN) == 0)
		return "the broadcast address";
	if (mac[0] & 0x01)
		return "a multicast (group) address";
	if (memcmp(mac, zero, MAC_LEN) == 0)
		return "all zeros";
	return "a NIC's address";
}

void
mac_format(const uint8_t mac[MAC_LEN], char out[MAC_STRLEN])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 0; i < MAC_LEN; i++) {
		out[i * 3] = hex[mac[i] >> 4];
		out[i * 3 + 1] = hex[mac[i] & 0xf];
		out[i * 3 + 2] = i == MAC_LEN - 1 ? '\0' : ':';
	}
}

int
mac_canonicalize(const char *s, char out[MAC_STRLEN])
{
	uint8_t mac[MAC_LEN];
	int r = mac_parse(s, mac);

	if (r < 0)
		return r;
	mac_format(mac, out);
	return 0;
}

int
ipv4_parse(const char *s, uint32_t *ret)
{
	uint32_t addr = 0;
	const char *p = s;

	if (s == NULL)
		return -EINVAL;
	for (int part = 0; part < 4; part++) {
		unsigned v = 0;
		int digits = 0;

		if (part > 0) {
			if (*p != '.')
				return -EINVAL;
			p++;
		}
		if (p[0] == '0' && p[1] >= '0' && p[1] <= '9')
			return -EINVAL; /* leading zero */
		while (*p >= '0' && *p <= '9') {
			v = v * 10 + (unsigned)(*p - '0');
			if (v > 255 || ++digits > 3)
				return -EINVAL;
			p++;
		}
		if (digits == 0)
			return -EINVAL;
		addr = addr << 8 | v;
	}
	if (*p != '\0')
		return -EINVAL;
	*ret = addr;
	return 0;
}

void
ipv4_format(uint32_t a, char out[IPV4_STRLEN])
{
	snprintf(
	    out, IPV4_STRLEN, "%u.%u.%u.%u", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff);
}

int
ipv4_cidr_parse(const char *s, uint32_t *ret_addr, unsigned *ret_prefix)
{
	char tmp[IPV4_STRLEN];
	const char *slash;
	uint64_t prefix;
	uint32_t addr;
	size_t n;

	if (s == NULL || (slash = strchr(s, '/')) == NULL)
		return -EINVAL;
	n = (size_t)(slash - s);
	if (n == 0 || n >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (ipv4_parse(tmp, &addr) < 0)
		return -EINVAL;
	if (slash[1] == '0' && slash[2] != '\0')
		return -EINVAL;
	if (parse_uint(slash + 1, 0, 32, &prefix) < 0)
		return -EINVAL;
	*ret_addr = addr;
	*ret_prefix = (unsigned)prefix;
	return 0;
}

uint64_t
hash64(const void *data, size_t len, uint64_t seed)
{
	/* FNV-1a, then a splitmix64 finaliser for the high bits. */
	const uint8_t *p = data;
	uint64_t h = UINT64_C(0xcbf29ce484222325) ^ seed;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	h = (h ^ (h >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	h = (h ^ (h >> 27)) * UINT64_C(0x94d049bb133111eb);
	return h ^ (h >> 31);
}

int
parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret)
{
	uint64_t v = 0;

	if (s == NULL || *s == '\0')
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int
parse_seconds_usec(const char *s, unsigned max_decimals, uint64_t max_usec, uint64_t *ret)
{
	uint64_t whole = 0, frac = 0, scale = USEC_PER_SEC;
	unsigned decimals = 0;
	const char *p = s;

	if (s == NULL || *p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++)
		if ((whole = whole * 10 + (uint64_t)(*p - '0')) > max_usec / USEC_PER_SEC)
			return -ERANGE;
	if (*p == '.') {
		if (*++p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (++decimals > max_decimals || decimals > 6)
				return -EINVAL;
			scale /= 10;
			frac += (uint64_t)(*p - '0') * scale;
		}
	}
	if (*p != '\0')
		return -EINVAL;
	if (whole * USEC_PER_SEC + frac > max_usec)
		return -ERANGE;
	*ret = whole * USEC_PER_SEC + frac;
	return 0;
}

int
write_file_atomic(const char *path, const void *data, size_t len, unsigned mode)
{
	char tmp[4096], dir[4096];
	const uint8_t *p = data;
	int fd, r;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto fail;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) < 0) {
		r = -errno;
		goto fail;
	}
	if (close(fd) < 0) {
		fd = -1;
		r = -errno;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		r = -errno;
		goto fail;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return r;
}

int
read_file(const char *path, size_t max, char **ret, size_t *ret_len)
{
	size_t cap = 4096, len = 0;
	char *buf;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (buf == NULL) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 2) {
			char *nb;
			if (cap >= max) {
				r = -EFBIG;
				goto fail;
			}
			cap *= 2;
			nb = realloc(buf, cap);
			if (nb == NULL) {
				r = -ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max) {
			r = -EFBIG;
			goto fail;
		}
	}
	close(fd);
	buf[len] = '\0';
	*ret = buf;
	if (ret_len != NULL)
		*ret_len = len;
	return 0;
fail:
	close(fd);
	free(buf);
	return r;
}

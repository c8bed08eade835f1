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

int
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
	/* by hand, not snprintf: it is on the agent's reply path (a lease journal line per ACK) */
	char *p = out;

	for (int shift = 24; shift >= 0; shift -= 8) {
		unsigned b = (a >> shift) & 0xff;

		if (b >= 100)
			*p++ = (char)('0' + b / 100);
		if (b >= 10)
			*p++ = (char)('0' + b / 10 % 10);
		*p++ = (char)('0' + b % 10);
		*p++ = shift > 0 ? '.' : '\0';
	}
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
	struct atomic_file f;
	int r;

	if ((r = atomic_file_open(&f, path, mode, ATOMIC_FILE_TMP_PID)) < 0)
		return r;
	if ((r = atomic_file_write(&f, data, len)) < 0) {
		atomic_file_abort(&f);
		return r;
	}
	return atomic_file_commit(&f);
}

int
read_file(const char *path, size_t max, char **ret, size_t *ret_len)
{
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = read_fd(fd, max, 0, ret, ret_len);
	close(fd);
	return r;
}

int
read_fd(int fd, size_t max, size_t hint, char **ret, size_t *ret_len)
{
	size_t cap, len = 0;
	char *buf;
	int r;

	max = MIN(max, SIZE_MAX / 4);
	/* room for one byte more than max (or than the hint), to see a file longer than that */
	cap = MIN(MAX(hint, (size_t)4094), max) + 2;
	if ((buf = malloc(cap)) == NULL)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == cap - 1) {
			size_t ncap = cap - 2 >= max ? cap : MIN((cap - 2) * 2, max) + 2;
			char *nb;

			if (ncap == cap) {
				r = -EFBIG;
				goto fail;
			}
			if ((nb = realloc(buf, ncap)) == NULL) {
				r = -ENOMEM;
				goto fail;
			}
			buf = nb;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max) {
		r = -EFBIG;
		goto fail;
	}
	buf[len] = '\0';
	*ret = buf;
	if (ret_len != NULL)
		*ret_len = len;
	return 0;
fail:
	free(buf);
	return r;
}

int
fd_write_all(int fd, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
fsync_parent_dir(const char *path)
{
	char dir[4096];
	int fd, r = 0;

	if ((size_t)snprintf(dir, sizeof(dir), "%s", path) >= sizeof(dir))
		return -ENAMETOOLONG;
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

int
atomic_file_open(struct atomic_file *f, const char *path, unsigned mode, unsigned flags)
{
	int oflags = O_CREAT | O_TRUNC | O_CLOEXEC;
	int n;

	f->fd = -1;
	f->flags = flags;
	f->path = path;
	f->step = NULL; /* the temp file's name does not fit */
	if ((flags & ATOMIC_FILE_TMP_PID) != 0)
		n = snprintf(f->tmp, sizeof(f->tmp), "%s.tmp.%ld", path, (long)getpid());
	else
		n = snprintf(f->tmp, sizeof(f->tmp), "%s.tmp", path);
	if (n < 0 || (size_t)n >= sizeof(f->tmp))
		return -ENAMETOOLONG;
	f->step = "open";
	oflags |= (flags & ATOMIC_FILE_KEEP_FD) != 0 ? O_RDWR | O_APPEND : O_WRONLY;
	if ((flags & ATOMIC_FILE_PRIVATE) != 0)
		oflags |= O_NOFOLLOW;
	f->fd = open(f->tmp, oflags, mode);
	if (f->fd < 0)
		return -errno; /* nothing created (or someone else's file: left alone) */
	/* a temp file left by an older run keeps its mode through O_TRUNC */
	f->step = "chmod";
	if ((flags & ATOMIC_FILE_PRIVATE) != 0 && fchmod(f->fd, mode) < 0) {
		n = -errno;
		atomic_file_abort(f);
		return n;
	}
	f->step = "write";
	return 0;
}

int
atomic_file_write(struct atomic_file *f, const void *data, size_t len)
{
	f->step = "write";
	return fd_write_all(f->fd, data, len);
}

int
atomic_file_commit(struct atomic_file *f)
{
	int r;

	f->step = "fsync";
	if (fsync(f->fd) < 0)
		goto fail;
	if ((f->flags & ATOMIC_FILE_KEEP_FD) == 0) {
		f->step = "close";
		r = close(f->fd);
		f->fd = -1;
		if (r < 0)
			goto fail;
	}
	f->step = "rename";
	if (rename(f->tmp, f->path) < 0)
		goto fail;
	/* the rename itself must survive a crash */
	f->step = "fsync of the directory";
	r = fsync_parent_dir(f->path);
	if (r < 0 && (f->flags & ATOMIC_FILE_SYNC_DIR) != 0) {
		if (f->fd >= 0)
			close(f->fd);
		f->fd = -1;
		return r;
	}
	return 0;
fail:
	r = -errno;
	atomic_file_abort(f);
	return r;
}

void
atomic_file_abort(struct atomic_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	unlink(f->tmp);
}

/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_UTIL_H
#define VMDHCP_LIB_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define MAC_LEN 6
#define MAC_STRLEN 18  /* "aa:bb:cc:dd:ee:ff" + NUL */
#define IPV4_STRLEN 16 /* "255.255.255.255" + NUL */

/*
 * MAC addresses: accepted as six hex pairs separated by ':' or '-' (any case), or as
 * "aabb.ccdd.eeff"; always written lower case with colons. Returns -EINVAL on bad input.
 */
int mac_parse(const char *s, uint8_t ret[MAC_LEN]);
void mac_format(const uint8_t mac[MAC_LEN], char out[MAC_STRLEN]);
/* Canonicalise a MAC string (lower case, colon separated) into out. */
int mac_canonicalize(const char *s, char out[MAC_STRLEN]);
/* Can mac be a NIC's? false for the all-zero MAC and for group (multicast, broadcast) MACs:
 * the low bit of the first octet set. Neither can hold a DHCP binding. */
bool mac_is_nic(const uint8_t mac[MAC_LEN]);
/* What a MAC that is no NIC's is, for messages: "the broadcast address", "a multicast (group)
 * address", "all zeros"; "a NIC's address" for the others. */
const char *mac_kind(const uint8_t mac[MAC_LEN]);

/*
 * IPv4 addresses in host byte order. Strict dotted quad: four decimal numbers 0..255, no
 * leading zeros (so "010.0.0.1" is refused, as Kubernetes' ipv4 format does), no spaces.
 */
int ipv4_parse(const char *s, uint32_t *ret);
void ipv4_format(uint32_t addr, char out[IPV4_STRLEN]);
/* "a.b.c.d/n" with 0 <= n <= 32 -> address (host order, not masked) and prefix. */
int ipv4_cidr_parse(const char *s, uint32_t *ret_addr, unsigned *ret_prefix);
static inline uint32_t
ipv4_prefix_mask(unsigned prefix)
{
	return prefix == 0 ? 0 : UINT32_MAX << (32 - prefix);
}

/* 64-bit hash (non-cryptographic, good mixing) of arbitrary bytes. */
uint64_t hash64(const void *data, size_t len, uint64_t seed);
static inline uint64_t
hash_mac(const uint8_t mac[MAC_LEN])
{
	uint64_t v = (uint64_t)mac[0] << 40 | (uint64_t)mac[1] << 32 | (uint64_t)mac[2] << 24 |
		     (uint64_t)mac[3] << 16 | (uint64_t)mac[4] << 8 | (uint64_t)mac[5];
	/* splitmix64 finaliser */
	v += UINT64_C(0x9e3779b97f4a7c15);
	v = (v ^ (v >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	v = (v ^ (v >> 27)) * UINT64_C(0x94d049bb133111eb);
	return v ^ (v >> 31);
}

/* Parse a decimal unsigned integer in [min, max]; the whole string must be consumed. */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret);
/*
 * Decimal seconds ("2", "1.5", "0.025": digits, then optionally '.' and 1 to max_decimals
 * digits, at most 6) -> microseconds. -EINVAL when not that form, -ERANGE over max_usec.
 */
int parse_seconds_usec(const char *s, unsigned max_decimals, uint64_t max_usec, uint64_t *ret);

/* Write a file atomically: temp file in the same directory, fsync, rename, fsync dir. */
int write_file_atomic(const char *path, const void *data, size_t len, unsigned mode);

/* Read a whole file into a new NUL-terminated buffer (caller frees). */
int read_file(const char *path, size_t max, char **ret, size_t *ret_len);

/* The value of hex digit c (either case), or -1. */
int hexval(char c);

/*
 * Reads fd to its end into a new NUL-terminated buffer (caller frees), *ret_len bytes (may be
 * NULL): -EFBIG when there are more than max. hint: the expected size (0: unknown), the first
 * allocation. Negative errno.
 */
int read_fd(int fd, size_t max, size_t hint, char **ret, size_t *ret_len);
/* Writes len bytes to fd, retrying short writes and EINTR. Negative errno (-EIO: wrote 0). */
int fd_write_all(int fd, const void *data, size_t len);
/* fsync of the directory that holds path (a rename in it made durable). Negative errno. */
int fsync_parent_dir(const char *path);

/*
 * A file replaced atomically, its content streamed: atomic_file_open creates the temp file
 * beside path, atomic_file_write appends to it, atomic_file_commit makes it durable and renames
 * it over path (fsync, close, rename, fsync of the directory), atomic_file_abort closes and
 * removes it. On failure commit aborts itself (the file at path is as it was, unless only the
 * directory's fsync failed); step names what failed: "open", "chmod", "write", "fsync",
 * "close", "rename" or "fsync of the directory" (NULL: the temp file's name is too long).
 * Negative errno.
 */
#define ATOMIC_FILE_TMP_PID 0x1u  /* the temp file is PATH.tmp.PID, else PATH.tmp */
#define ATOMIC_FILE_KEEP_FD 0x2u  /* opened O_RDWR | O_APPEND; after commit fd is the file */
#define ATOMIC_FILE_PRIVATE 0x4u  /* O_NOFOLLOW, and mode set on a temp file left behind */
#define ATOMIC_FILE_SYNC_DIR 0x8u /* the directory's fsync failing fails commit (else ignored) */
struct atomic_file {
	int fd;
	unsigned flags;
	const char *path; /* borrowed */
	const char *step;
	char tmp[4096];
};
int atomic_file_open(struct atomic_file *f, const char *path, unsigned mode, unsigned flags);
int atomic_file_write(struct atomic_file *f, const void *data, size_t len);
int atomic_file_commit(struct atomic_file *f);
void atomic_file_abort(struct atomic_file *f);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes mode's warm-start snapshot: the pool's identity, network, paused flag, DHCP
 * options and the engine's bindings, written as one compact checksummed file (atomically:
 * PATH.tmp, write, fsync, rename, fsync of the directory) so that a restarted agent serves at
 * once, before it has synced from the API server. When and how often it is written is the
 * caller's business (warmstart.c); this file only encodes, writes, reads and validates.
 *
 * Size: about 1000 lines, kept in one file on purpose: the encoder and the strict decoder of
 * one binary format are read side by side (every field written is checked on the way back,
 * in the same order), and the format is described once, below.
 *
 * Format, version 1. Every integer little-endian; a "str" is a length byte and that many bytes
 * (no NUL inside; shorter than the agent_config / dhcp_options field it fills).
 *
 *     0   8  magic "VMDHSNAP"
 *     8   4  format version (1)
 *    12   4  total length of the file, checksum included
 *    16   4  flags: bit 0 paused; the other bits 0
 *    20   8  written at (CLOCK_REALTIME microseconds)
 *    28      str resourceVersion of the IPPool ("" = unknown), str namespace, str name,
 *            str network; u32 cidr, u8 prefix, u32 pool start, u32 pool end,
 *            u32 n_exclude, n_exclude x u32
 *            options: u32 server_ip, u8 prefix, u32 router, u8 n_dns + u32 each,
 *            u8 n_ntp + u32 each, str domain_name, u8 n_search + str each, u16 mtu,
 *            u8 n_routes + (u32 destination, u8 prefix, u32 gateway) each, u32 lease_time
 *            u32 n_bindings, u32 hostname bytes (H)
 *            n_bindings x 10 bytes: MAC (6), IP (u32), in ascending IP order (so an address
 *            is bound once and the same table always gives the same bytes)
 *            when H > 0: n_bindings x u8 hostname length (0 = none; at most 63), then the
 *            H hostname bytes, binding after binding
 *   L-4   4  CRC-32C (Castagnoli) of every byte before it
 *
 * 65 000 bindings without hostnames take 650 000 bytes, plus about a hundred for the rest.
 * Decoding checks everything (lengths and counts against the file's length, ranges, bindable
 * MACs, unique MACs and addresses, options the engine accepts) and refuses the file whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "lib/clock.h"
#include "lib/util.h"

#define SNAP_MAGIC "VMDHSNAP"
#define SNAP_MAGIC_LEN 8
#define SNAP_PREAMBLE 16	     /* magic, version, length */
#define SNAP_MIN (SNAP_PREAMBLE + 4) /* ... and the checksum */
#define SNAP_FIXED_MAX 8192	     /* upper bound of everything but excludes and bindings */
#define SNAP_RECORD 10		     /* MAC + IP */
#define SNAP_FLAG_PAUSED UINT32_C(0x1)

/* ---- CRC-32C (Castagnoli, reflected polynomial 0x82f63b78), table-driven, 8 bytes a step ---- */

static uint32_t crc32c_table[8][256]; /* [0]: one byte; [k]: a byte followed by k zero bytes */
static bool crc32c_ready; /* the agent is single-threaded; two initialisers would agree */

static void
crc32c_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (UINT32_C(0x82f63b78) & (0u - (c & 1u)));
		crc32c_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			crc32c_table[k][i] = (crc32c_table[k - 1][i] >> 8) ^
					     crc32c_table[0][crc32c_table[k - 1][i] & 0xffu];
	crc32c_ready = true;
}

uint32_t
agent_snapshot_crc32c(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t c = UINT32_MAX;

	if (!crc32c_ready)
		crc32c_init();
	for (; len >= 8; len -= 8, p += 8) {
		uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				      (uint32_t)p[3] << 24);

		c = crc32c_table[7][lo & 0xffu] ^ crc32c_table[6][(lo >> 8) & 0xffu] ^
		    crc32c_table[5][(lo >> 16) & 0xffu] ^ crc32c_table[4][lo >> 24] ^
		    crc32c_table[3][p[4]] ^ crc32c_table[2][p[5]] ^ crc32c_table[1][p[6]] ^
		    crc32c_table[0][p[7]];
	}
	while (len-- > 0)
		c = crc32c_table[0][(c ^ *p++) & 0xffu] ^ (c >> 8);
	return ~c;
}

/* ---- little-endian helpers ----------------------------------------------------------- */

static uint32_t
le32_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void
le32_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Writer over a buffer sized beforehand; an overflow (a sizing bug) is sticky and checked once. */
struct wr {
	uint8_t *p;
	size_t len, cap;
	bool overflow;
};

static uint8_t *
wr_room(struct wr *w, size_t n)
{
	uint8_t *at;

	if (w->overflow || w->cap - w->len < n) {
		w->overflow = true;
		return NULL;
	}
	at = w->p + w->len;
	w->len += n;
	return at;
}

static void
put_u8(struct wr *w, uint8_t v)
{
	uint8_t *p = wr_room(w, 1);

	if (p != NULL)
		p[0] = v;
}

static void
put_u16(struct wr *w, uint16_t v)
{
	uint8_t *p = wr_room(w, 2);

	if (p != NULL) {
		p[0] = (uint8_t)v;
		p[1] = (uint8_t)(v >> 8);
	}
}

static void
put_u32(struct wr *w, uint32_t v)
{
	uint8_t *p = wr_room(w, 4);

	if (p != NULL)
		le32_put(p, v);
}

static void
put_u64(struct wr *w, uint64_t v)
{
	put_u32(w, (uint32_t)v);
	put_u32(w, (uint32_t)(v >> 32));
}

static void
put_bytes(struct wr *w, const void *src, size_t n)
{
	uint8_t *p = wr_room(w, n);

	if (p != NULL && n > 0)
		memcpy(p, src, n);
}

/* s is checked beforehand: NUL-terminated, shorter than 256 bytes. */
static void
put_str(struct wr *w, const char *s)
{
	size_t n = strlen(s);

	put_u8(w, (uint8_t)n);
	put_bytes(w, s, n);
}

/* Reader: every getter checks the bytes left first; false (cursor unchanged) when short. */
struct rd {
	const uint8_t *p;
	size_t left;
};

static bool
get_u8(struct rd *r, uint8_t *v)
{
	if (r->left < 1)
		return false;
	*v = r->p[0];
	r->p++;
	r->left--;
	return true;
}

static bool
get_u16(struct rd *r, uint16_t *v)
{
	if (r->left < 2)
		return false;
	*v = (uint16_t)(r->p[0] | r->p[1] << 8);
	r->p += 2;
	r->left -= 2;
	return true;
}

static bool
get_u32(struct rd *r, uint32_t *v)
{
	if (r->left < 4)
		return false;
	*v = le32_get(r->p);
	r->p += 4;
	r->left -= 4;
	return true;
}

static bool
get_u64(struct rd *r, uint64_t *v)
{
	uint32_t lo, hi;

	if (r->left < 8)
		return false;
	get_u32(r, &lo);
	get_u32(r, &hi);
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

static int __attribute__((format(printf, 3, 4)))
fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

#define TRUNCATED(field) fail(err, errlen, "%s: past the end of the snapshot", field)

/* A str into dst (cap bytes, NUL-terminated). */
static int
get_str(struct rd *r, char *dst, size_t cap, const char *field, char *err, size_t errlen)
{
	uint8_t n;

	if (!get_u8(r, &n) || r->left < n)
		return TRUNCATED(field);
	if (n >= cap)
		return fail(err, errlen, "%s: %u bytes, at most %zu", field, n, cap - 1);
	if (memchr(r->p, '\0', n) != NULL)
		return fail(err, errlen, "%s: NUL byte inside", field);
	memcpy(dst, r->p, n);
	dst[n] = '\0';
	r->p += n;
	r->left -= n;
	return 0;
}

/* ---- what both directions check --------------------------------------------------------- */

static bool
str_ok(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

/* Whether the engine takes o (dhcp_server_set_options on a scratch engine). */
static int
options_accepted(const struct dhcp_options *o, char *err, size_t errlen)
{
	struct dhcp_server *s = NULL;
	int r;

	r = dhcp_server_new(&s);
	if (r < 0)
		return r;
	r = dhcp_server_set_options(s, o);
	dhcp_server_free(s);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return fail(err, errlen, "options refused by the DHCP engine: %s", strerror(-r));
	return 0;
}

/*
 * The rules a snapshot's configuration part obeys: checked on what is encoded (so a written
 * snapshot always reads back) and on what is decoded.
 */
static int
config_check(const struct agent_config *c, char *err, size_t errlen)
{
	const struct dhcp_options *o = &c->opts;

	if (!str_ok(c->pool_ns, sizeof(c->pool_ns)) ||
	    !str_ok(c->pool_name, sizeof(c->pool_name)) || !str_ok(c->network, sizeof(c->network)))
		return fail(err, errlen, "pool namespace, name or network not NUL-terminated");
	if (c->prefix > 32)
		return fail(err, errlen, "prefix: %u, at most 32", c->prefix);
	if ((c->cidr & ~ipv4_prefix_mask(c->prefix)) != 0)
		return fail(err, errlen, "cidr: host bits set under /%u", c->prefix);
	if (c->pool_start > c->pool_end)
		return fail(err, errlen, "pool range: start after end");
	if (c->n_exclude > 0 && c->exclude == NULL)
		return fail(err, errlen, "exclude: %zu addresses, no array", c->n_exclude);
	if (c->n_exclude > UINT32_MAX / 4)
		return fail(err, errlen, "exclude: %zu addresses, too many", c->n_exclude);
	if (o->server_ip == 0)
		return fail(err, errlen, "options.server_ip: 0");
	if (o->prefix > 32)
		return fail(err, errlen, "options.prefix: %u, at most 32", o->prefix);
	if (o->n_dns > DHCP_MAX_DNS)
		return fail(
		    err, errlen, "options.dns: %zu servers, at most %d", o->n_dns, DHCP_MAX_DNS);
	if (o->n_ntp > DHCP_MAX_NTP)
		return fail(
		    err, errlen, "options.ntp: %zu servers, at most %d", o->n_ntp, DHCP_MAX_NTP);
	if (!str_ok(o->domain_name, sizeof(o->domain_name)))
		return fail(err, errlen, "options.domain_name: not NUL-terminated");
	if (o->n_search > DHCP_MAX_SEARCH)
		return fail(err, errlen, "options.search: %zu domains, at most %d", o->n_search,
		    DHCP_MAX_SEARCH);
	for (size_t i = 0; i < o->n_search; i++)
		if (!str_ok(o->search[i], sizeof(o->search[i])))
			return fail(err, errlen, "options.search[%zu]: not NUL-terminated", i);
	if (o->mtu != 0 && o->mtu < 68)
		return fail(err, errlen, "options.mtu: %u, below 68", o->mtu);
	if (o->n_routes > DHCP_MAX_ROUTES)
		return fail(
		    err, errlen, "options.routes: %zu, at most %d", o->n_routes, DHCP_MAX_ROUTES);
	for (size_t i = 0; i < o->n_routes; i++)
		if (o->routes[i].prefix > 32)
			return fail(err, errlen, "options.routes[%zu].prefix: %u, at most 32", i,
			    o->routes[i].prefix);
	return options_accepted(o, err, errlen);
}

/* ---- encoding ----------------------------------------------------------------------------- */

struct rec {
	uint32_t ip;
	uint8_t mac[6];
	uint8_t hlen;
	const char *hostname; /* borrowed from the engine for the encoding's duration */
};

struct collect {
	struct rec *recs;
	size_t n, cap;
	size_t names; /* hostname bytes */
};

static void
collect_binding(void *userdata, const uint8_t mac[6], uint32_t ip, const char *hostname)
{
	struct collect *c = userdata;
	struct rec *x;

	if (c->n == c->cap) /* the engine counted fewer than it holds: cannot happen */
		return;
	x = &c->recs[c->n++];
	x->ip = ip;
	memcpy(x->mac, mac, 6);
	x->hlen = hostname != NULL ? (uint8_t)strnlen(hostname, DHCP_HOSTNAME_MAX) : 0;
	x->hostname = hostname;
	c->names += x->hlen;
}

/*
 * The order of recs by address: LSD radix sort of (ip << 32 | index) keys on the address, a
 * byte a pass. Returns the sorted keys (malloc'd) or NULL.
 */
static uint64_t *
sort_by_ip(const struct rec *recs, size_t n)
{
	uint64_t *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b)), *t;
	size_t count[256];

	if (a == NULL || b == NULL) {
		free(a);
		free(b);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		a[i] = (uint64_t)recs[i].ip << 32 | i;
	for (unsigned shift = 32; shift < 64; shift += 8) {
		size_t sum = 0;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(a[i] >> shift) & 0xffu]++;
		for (size_t d = 0; d < 256; d++) {
			size_t x = count[d];

			count[d] = sum;
			sum += x;
		}
		for (size_t i = 0; i < n; i++)
			b[count[(a[i] >> shift) & 0xffu]++] = a[i];
		t = a, a = b, b = t;
	}
	free(b);
	return a;
}

static int
encode(const struct agent_config *cfg, const struct dhcp_server *s, const char *resource_version,
    uint64_t written_usec, uint8_t **ret, size_t *ret_len, char *err, size_t errlen)
{
	const struct dhcp_options *o;
	struct collect c = {0};
	struct wr w = {0};
	size_t rv_len, size;
	bool sorted = true;
	int r;

	if (cfg == NULL || ret == NULL || ret_len == NULL)
		return fail(err, errlen, "no configuration");
	o = &cfg->opts;
	if (resource_version == NULL)
		resource_version = "";
	rv_len = strnlen(resource_version, AGENT_SNAPSHOT_RV_MAX);
	if (rv_len >= AGENT_SNAPSHOT_RV_MAX)
		return fail(
		    err, errlen, "resourceVersion longer than %d bytes", AGENT_SNAPSHOT_RV_MAX - 1);
	r = config_check(cfg, err, errlen);
	if (r < 0)
		return r;

	c.cap = s != NULL ? dhcp_server_n_bindings(s) : 0;
	if (c.cap > UINT32_MAX)
		return fail(err, errlen, "%zu bindings, too many", c.cap);
	if (c.cap > 0) {
		c.recs = malloc(c.cap * sizeof(*c.recs));
		if (c.recs == NULL)
			return -ENOMEM;
		dhcp_server_foreach_binding(s, collect_binding, &c);
	}
	for (size_t i = 1; i < c.n && sorted; i++)
		sorted = c.recs[i - 1].ip < c.recs[i].ip;
	if (!sorted) {
		uint64_t *keys = sort_by_ip(c.recs, c.n);
		struct rec *recs = malloc(c.cap * sizeof(*recs));

		if (keys == NULL || recs == NULL) {
			free(keys);
			free(recs);
			free(c.recs);
			return -ENOMEM;
		}
		for (size_t i = 0; i < c.n; i++)
			recs[i] = c.recs[(uint32_t)keys[i]];
		free(keys);
		free(c.recs);
		c.recs = recs;
	}
	for (size_t i = 0; i < c.n; i++) {
		/* the engine never holds these; refusing here keeps every snapshot readable */
		if (c.recs[i].ip == 0 || !dhcp_mac_bindable(c.recs[i].mac) ||
		    (i > 0 && c.recs[i - 1].ip == c.recs[i].ip)) {
			free(c.recs);
			return fail(err, errlen, "the engine holds a binding a snapshot cannot");
		}
	}

	size = SNAP_FIXED_MAX + 4 * cfg->n_exclude + SNAP_RECORD * c.n +
	       (c.names > 0 ? c.n + c.names : 0);
	if (size > AGENT_SNAPSHOT_MAX_SIZE) {
		free(c.recs);
		return fail(err, errlen, "%zu bindings, %zu excluded addresses: over %u bytes", c.n,
		    cfg->n_exclude, AGENT_SNAPSHOT_MAX_SIZE);
	}
	w.cap = size;
	w.p = malloc(size);
	if (w.p == NULL) {
		free(c.recs);
		return -ENOMEM;
	}

	put_bytes(&w, SNAP_MAGIC, SNAP_MAGIC_LEN);
	put_u32(&w, AGENT_SNAPSHOT_VERSION);
	put_u32(&w, 0); /* length: below */
	put_u32(&w, cfg->paused ? SNAP_FLAG_PAUSED : 0);
	put_u64(&w, written_usec);
	put_str(&w, resource_version);
	put_str(&w, cfg->pool_ns);
	put_str(&w, cfg->pool_name);
	put_str(&w, cfg->network);
	put_u32(&w, cfg->cidr);
	put_u8(&w, (uint8_t)cfg->prefix);
	put_u32(&w, cfg->pool_start);
	put_u32(&w, cfg->pool_end);
	put_u32(&w, (uint32_t)cfg->n_exclude);
	for (size_t i = 0; i < cfg->n_exclude; i++)
		put_u32(&w, cfg->exclude[i]);

	put_u32(&w, o->server_ip);
	put_u8(&w, o->prefix);
	put_u32(&w, o->router);
	put_u8(&w, (uint8_t)o->n_dns);
	for (size_t i = 0; i < o->n_dns; i++)
		put_u32(&w, o->dns[i]);
	put_u8(&w, (uint8_t)o->n_ntp);
	for (size_t i = 0; i < o->n_ntp; i++)
		put_u32(&w, o->ntp[i]);
	put_str(&w, o->domain_name);
	put_u8(&w, (uint8_t)o->n_search);
	for (size_t i = 0; i < o->n_search; i++)
		put_str(&w, o->search[i]);
	put_u16(&w, o->mtu);
	put_u8(&w, (uint8_t)o->n_routes);
	for (size_t i = 0; i < o->n_routes; i++) {
		put_u32(&w, o->routes[i].destination);
		put_u8(&w, o->routes[i].prefix);
		put_u32(&w, o->routes[i].gateway);
	}
	put_u32(&w, o->lease_time);

	put_u32(&w, (uint32_t)c.n);
	put_u32(&w, (uint32_t)c.names);
	for (size_t i = 0; i < c.n; i++) {
		uint8_t *p = wr_room(&w, SNAP_RECORD);

		if (p == NULL)
			break;
		memcpy(p, c.recs[i].mac, 6);
		le32_put(p + 6, c.recs[i].ip);
	}
	if (c.names > 0) {
		for (size_t i = 0; i < c.n; i++)
			put_u8(&w, c.recs[i].hlen);
		for (size_t i = 0; i < c.n; i++)
			put_bytes(&w, c.recs[i].hostname, c.recs[i].hlen);
	}
	free(c.recs);
	put_u32(&w, 0); /* checksum: below */
	if (w.overflow) {
		free(w.p);
		return fail(err, errlen, "snapshot larger than computed (a bug)");
	}
	le32_put(w.p + 12, (uint32_t)w.len);
	le32_put(w.p + w.len - 4, agent_snapshot_crc32c(w.p, w.len - 4));
	*ret = w.p;
	*ret_len = w.len;
	return 0;
}

int
agent_snapshot_encode(const struct agent_config *cfg, const struct dhcp_server *s,
    const char *resource_version, uint64_t written_usec, uint8_t **ret, size_t *ret_len)
{
	return encode(cfg, s, resource_version, written_usec, ret, ret_len, NULL, 0);
}

/* ---- writing -------------------------------------------------------------------------------- */

static int
write_all(int fd, const uint8_t *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
agent_snapshot_write(const char *path, const struct agent_config *cfg, const struct dhcp_server *s,
    const char *resource_version, struct agent_snapshot_info *info, char *err, size_t errlen)
{
	char tmp[PATH_MAX], dir[PATH_MAX], msg[AGENT_ERR_MAX];
	uint64_t now = (uint64_t)clock_realtime_usec();
	const char *step, *parent;
	uint8_t *buf = NULL;
	size_t len = 0;
	int fd = -1, r;

	msg[0] = '\0';
	r = encode(cfg, s, resource_version, now, &buf, &len, msg, sizeof(msg));
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot write: %s", path,
		    r == -ENOMEM ? strerror(ENOMEM) : msg);
		return r;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp) ||
	    (size_t)snprintf(dir, sizeof(dir), "%s", path) >= sizeof(dir)) {
		free(buf);
		snprintf(err, errlen, "%s: cannot write: %s", path, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}

	step = "open";
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		r = -errno;
		goto fail; /* nothing created (or someone else's file: left alone) */
	}
	step = "chmod"; /* a PATH.tmp left by an older run keeps its mode through O_TRUNC */
	if (fchmod(fd, 0600) < 0)
		goto fail_unlink;
	step = "write";
	if ((r = write_all(fd, buf, len)) < 0)
		goto fail_unlink_r;
	step = "fsync";
	if (fsync(fd) < 0)
		goto fail_unlink;
	step = "close";
	r = close(fd);
	fd = -1;
	if (r < 0)
		goto fail_unlink;
	step = "rename";
	if (rename(tmp, path) < 0)
		goto fail_unlink;
	free(buf);
	buf = NULL;

	/* the rename itself must survive a crash */
	parent = dirname(dir); /* dir itself, or a static "." */
	fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "%s: cannot write: fsync of the directory %s: %s", path,
		    parent, strerror(-r));
		return r;
	}
	close(fd);
	if (info != NULL) {
		memset(info, 0, sizeof(*info));
		info->written_usec = now;
		snprintf(info->resource_version, sizeof(info->resource_version), "%s",
		    resource_version != NULL ? resource_version : "");
		info->bindings = s != NULL ? dhcp_server_n_bindings(s) : 0;
		info->bytes = len;
	}
	return 0;

fail_unlink:
	r = -errno;
fail_unlink_r:
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	fd = -1;
fail:
	free(buf);
	snprintf(err, errlen, "%s: cannot write: %s %s: %s", path, step, tmp, strerror(-r));
	return r;
}

/* ---- decoding ------------------------------------------------------------------------------- */

/* Refuses a MAC bound twice: an open-addressing set of binding indexes. */
static int
macs_unique(const struct agent_binding *b, size_t n, char *err, size_t errlen)
{
	size_t cap = 16, mask;
	uint32_t *slot;

	while (cap < 2 * n)
		cap *= 2;
	mask = cap - 1;
	slot = malloc(cap * sizeof(*slot));
	if (slot == NULL)
		return -ENOMEM;
	memset(slot, 0xff, cap * sizeof(*slot));
	for (size_t i = 0; i < n; i++) {
		size_t h = (size_t)hash_mac(b[i].mac) & mask;

		while (slot[h] != UINT32_MAX) {
			if (memcmp(b[slot[h]].mac, b[i].mac, 6) == 0) {
				char m[MAC_STRLEN];

				free(slot);
				mac_format(b[i].mac, m);
				return fail(err, errlen, "binding %zu: MAC %s bound twice", i, m);
			}
			h = (h + 1) & mask;
		}
		slot[h] = (uint32_t)i;
	}
	free(slot);
	return 0;
}

/* The bindings and hostnames, the last part of the file: r holds exactly them. */
static int
decode_bindings(
    struct rd *r, uint32_t n, uint32_t names, struct agent_config *c, char *err, size_t errlen)
{
	const uint8_t *rec = r->p, *lens = NULL, *text = NULL;
	size_t named = 0, sum = 0, off = 0;

	if (n == 0)
		return 0;
	if (names > 0) {
		lens = rec + (size_t)n * SNAP_RECORD;
		text = lens + n;
		for (size_t i = 0; i < n; i++) {
			if (lens[i] > DHCP_HOSTNAME_MAX)
				return fail(err, errlen,
				    "binding %zu: hostname of %u bytes, at most %d", i, lens[i],
				    DHCP_HOSTNAME_MAX);
			sum += lens[i];
			named += lens[i] > 0;
		}
		if (sum != names)
			return fail(
			    err, errlen, "hostnames: %zu bytes, the header says %u", sum, names);
		if (memchr(text, '\0', names) != NULL)
			return fail(err, errlen, "hostnames: NUL byte inside");
		c->names = malloc(sum + named);
		if (c->names == NULL)
			return -ENOMEM;
		c->names_len = c->names_cap = sum + named;
	}
	c->bindings = malloc((size_t)n * sizeof(*c->bindings));
	if (c->bindings == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++, rec += SNAP_RECORD) {
		struct agent_binding *b = &c->bindings[i];

		memcpy(b->mac, rec, 6);
		b->ip = le32_get(rec + 6);
		b->hostname = UINT32_MAX;
		if (!dhcp_mac_bindable(b->mac))
			return fail(
			    err, errlen, "binding %zu: MAC not bindable (zero or group)", i);
		if (b->ip == 0)
			return fail(err, errlen, "binding %zu: address 0", i);
		if (i > 0 && b->ip <= c->bindings[i - 1].ip)
			return fail(
			    err, errlen, "binding %zu: addresses not in ascending order", i);
		if (names > 0 && lens[i] > 0) {
			b->hostname = (uint32_t)off;
			memcpy(c->names + off, text, lens[i]);
			c->names[off + lens[i]] = '\0';
			off += lens[i] + 1u;
			text += lens[i];
		}
		c->n_bindings = i + 1;
	}
	return macs_unique(c->bindings, n, err, errlen);
}

static int
decode_options(struct rd *r, struct dhcp_options *o, char *err, size_t errlen)
{
	uint8_t n, prefix;
	int ret;

	if (!get_u32(r, &o->server_ip) || !get_u8(r, &o->prefix) || !get_u32(r, &o->router))
		return TRUNCATED("options");
	if (!get_u8(r, &n))
		return TRUNCATED("options.dns");
	if (n > DHCP_MAX_DNS)
		return fail(err, errlen, "options.dns: %u servers, at most %d", n, DHCP_MAX_DNS);
	o->n_dns = n;
	for (size_t i = 0; i < o->n_dns; i++)
		if (!get_u32(r, &o->dns[i]))
			return TRUNCATED("options.dns");
	if (!get_u8(r, &n))
		return TRUNCATED("options.ntp");
	if (n > DHCP_MAX_NTP)
		return fail(err, errlen, "options.ntp: %u servers, at most %d", n, DHCP_MAX_NTP);
	o->n_ntp = n;
	for (size_t i = 0; i < o->n_ntp; i++)
		if (!get_u32(r, &o->ntp[i]))
			return TRUNCATED("options.ntp");
	ret =
	    get_str(r, o->domain_name, sizeof(o->domain_name), "options.domain_name", err, errlen);
	if (ret < 0)
		return ret;
	if (!get_u8(r, &n))
		return TRUNCATED("options.search");
	if (n > DHCP_MAX_SEARCH)
		return fail(
		    err, errlen, "options.search: %u domains, at most %d", n, DHCP_MAX_SEARCH);
	o->n_search = n;
	for (size_t i = 0; i < o->n_search; i++) {
		ret = get_str(r, o->search[i], sizeof(o->search[i]), "options.search", err, errlen);
		if (ret < 0)
			return ret;
	}
	if (!get_u16(r, &o->mtu))
		return TRUNCATED("options.mtu");
	if (!get_u8(r, &n))
		return TRUNCATED("options.routes");
	if (n > DHCP_MAX_ROUTES)
		return fail(err, errlen, "options.routes: %u, at most %d", n, DHCP_MAX_ROUTES);
	o->n_routes = n;
	for (size_t i = 0; i < o->n_routes; i++) {
		if (!get_u32(r, &o->routes[i].destination) || !get_u8(r, &prefix) ||
		    !get_u32(r, &o->routes[i].gateway))
			return TRUNCATED("options.routes");
		o->routes[i].prefix = prefix;
	}
	if (!get_u32(r, &o->lease_time))
		return TRUNCATED("options.lease_time");
	return 0;
}

static int
decode(const uint8_t *buf, size_t len, const char *ippool_ref, struct agent_config *c,
    struct agent_snapshot_info *info, char *err, size_t errlen)
{
	uint32_t version, total, file_crc, crc, flags, u32, n_bindings, names;
	struct rd r;
	uint8_t prefix;
	int ret;

	if (len < SNAP_MIN)
		return fail(err, errlen, "truncated (%zu bytes)", len);
	if (memcmp(buf, SNAP_MAGIC, SNAP_MAGIC_LEN) != 0)
		return fail(err, errlen, "not a snapshot (bad magic)");
	version = le32_get(buf + 8);
	if (version != AGENT_SNAPSHOT_VERSION)
		return fail(err, errlen, "format version %" PRIu32 ", this agent reads %d", version,
		    AGENT_SNAPSHOT_VERSION);
	total = le32_get(buf + 12);
	if (total != len)
		return fail(
		    err, errlen, "length mismatch (header %" PRIu32 ", file %zu)", total, len);
	file_crc = le32_get(buf + len - 4);
	crc = agent_snapshot_crc32c(buf, len - 4);
	if (file_crc != crc)
		return fail(err, errlen,
		    "checksum mismatch (file 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")", file_crc,
		    crc);

	r = (struct rd){.p = buf + SNAP_PREAMBLE, .left = len - SNAP_PREAMBLE - 4};
	if (!get_u32(&r, &flags) || !get_u64(&r, &info->written_usec))
		return TRUNCATED("header");
	if ((flags & ~SNAP_FLAG_PAUSED) != 0)
		return fail(
		    err, errlen, "flags: unknown bits 0x%" PRIx32, flags & ~SNAP_FLAG_PAUSED);
	c->paused = (flags & SNAP_FLAG_PAUSED) != 0;
	if ((ret = get_str(&r, info->resource_version, sizeof(info->resource_version),
		 "resourceVersion", err, errlen)) < 0 ||
	    (ret = get_str(&r, c->pool_ns, sizeof(c->pool_ns), "namespace", err, errlen)) < 0 ||
	    (ret = get_str(&r, c->pool_name, sizeof(c->pool_name), "name", err, errlen)) < 0 ||
	    (ret = get_str(&r, c->network, sizeof(c->network), "network", err, errlen)) < 0)
		return ret;
	if (ippool_ref != NULL) {
		size_t ns = strlen(c->pool_ns);

		if (strncmp(ippool_ref, c->pool_ns, ns) != 0 || ippool_ref[ns] != '/' ||
		    strcmp(ippool_ref + ns + 1, c->pool_name) != 0)
			return fail(err, errlen, "snapshot of IPPool %s/%s, not %s", c->pool_ns,
			    c->pool_name, ippool_ref);
	}
	if (!get_u32(&r, &c->cidr) || !get_u8(&r, &prefix) || !get_u32(&r, &c->pool_start) ||
	    !get_u32(&r, &c->pool_end) || !get_u32(&r, &u32))
		return TRUNCATED("pool");
	c->prefix = prefix;
	if (u32 > r.left / 4)
		return fail(err, errlen, "exclude: %" PRIu32 " addresses, past the end", u32);
	if (u32 > 0) {
		c->exclude = malloc((size_t)u32 * sizeof(*c->exclude));
		if (c->exclude == NULL)
			return -ENOMEM;
		c->n_exclude = u32;
		for (size_t i = 0; i < c->n_exclude; i++)
			get_u32(&r, &c->exclude[i]);
	}
	if ((ret = decode_options(&r, &c->opts, err, errlen)) < 0)
		return ret;
	if ((ret = config_check(c, err, errlen)) < 0)
		return ret;

	if (!get_u32(&r, &n_bindings) || !get_u32(&r, &names))
		return TRUNCATED("bindings");
	if ((uint64_t)r.left !=
	    (uint64_t)n_bindings * SNAP_RECORD + (names > 0 ? (uint64_t)n_bindings + names : 0))
		return fail(err, errlen,
		    "bindings: %" PRIu32 " bindings and %" PRIu32 " hostname bytes in %zu bytes",
		    n_bindings, names, r.left);
	if (n_bindings == 0 && names > 0)
		return fail(err, errlen, "hostnames: %" PRIu32 " bytes, no bindings", names);
	ret = decode_bindings(&r, n_bindings, names, c, err, errlen);
	if (ret < 0)
		return ret;
	info->bindings = n_bindings;
	info->bytes = len;
	return 0;
}

int
agent_snapshot_decode(const uint8_t *buf, size_t len, const char *ippool_ref,
    struct agent_config **ret, struct agent_snapshot_info *info, char *err, size_t errlen)
{
	struct agent_snapshot_info inf;
	struct agent_config *c;
	int r;

	if (buf == NULL && len > 0)
		return fail(err, errlen, "no data");
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	memset(&inf, 0, sizeof(inf));
	r = decode(buf, len, ippool_ref, c, &inf, err, errlen);
	if (r < 0) {
		if (r == -ENOMEM)
			snprintf(err, errlen, "%s", strerror(ENOMEM));
		agent_config_free(c);
		return r;
	}
	if (ret != NULL)
		*ret = c;
	else
		agent_config_free(c);
	if (info != NULL)
		*info = inf;
	return 0;
}

/* ---- reading ------------------------------------------------------------------------------- */

int
agent_snapshot_load(const char *path, const char *ippool_ref, struct agent_config **ret,
    struct agent_snapshot_info *info, char *err, size_t errlen)
{
	char msg[AGENT_ERR_MAX];
	uint8_t *buf = NULL;
	size_t len = 0;
	struct stat st;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (r == -ENOENT)
			snprintf(err, errlen, "%s: no snapshot", path);
		else
			snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-r));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if ((uint64_t)st.st_size > AGENT_SNAPSHOT_MAX_SIZE) {
		r = -EINVAL;
		snprintf(err, errlen, "%s: %jd bytes, larger than any snapshot", path,
		    (intmax_t)st.st_size);
		goto out;
	}
	buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (buf == NULL) {
		r = -ENOMEM;
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(ENOMEM));
		goto out;
	}
	while (len < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + len, (size_t)st.st_size - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-r));
			goto out;
		}
		if (n == 0)
			break; /* shrank under us: the length check refuses it */
		len += (size_t)n;
	}
	r = agent_snapshot_decode(buf, len, ippool_ref, ret, info, msg, sizeof(msg));
	if (r < 0)
		snprintf(err, errlen, "%s: %s", path, msg);
out:
	free(buf);
	close(fd);
	return r;
}

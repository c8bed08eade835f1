/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent/snapshot*.c: round trips (options, bindings, hostnames; an empty table; 65 000
 * bindings), byte-identical re-encoding of a decoded snapshot, every single-byte corruption and
 * every truncation refused, out-of-range fields behind a valid checksum refused with a message
 * naming them, the wrong version or pool refused, random mutations with the checksum fixed up
 * (never a crash; what decodes re-encodes to the same bytes), and the atomic write: mode 0600,
 * no PATH.tmp left, the old file intact when the write fails (no parent directory, PATH.tmp a
 * directory, a file size limit hit mid-write, PATH a directory, a read-only directory).
 *
 * Size: about 950 lines, one file on purpose: one format's cases sharing the encode/decode
 * fixtures and the corruption loops.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/apply-config.h"
#include "agent/pool-config.h"
#include "agent/snapshot.h"
#include "lib/util.h"
#include "tests/runner.h"

#define RV "4711"
#define WRITTEN UINT64_C(1700000000123456)
#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static char dir[64];
static char path[128];
static char tmppath[160];

static int
suite_init(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test-agent-snapshot.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/snapshot", dir);
	snprintf(tmppath, sizeof(tmppath), "%s.tmp", path);
	return 0;
}

static int
suite_cleanup(void)
{
	char p[200];

	unlink(path);
	rmdir(path);
	unlink(tmppath);
	rmdir(tmppath);
	snprintf(p, sizeof(p), "%s/ro/snapshot", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/ro", dir);
	chmod(p, 0700);
	rmdir(p);
	rmdir(dir);
	return 0;
}

static void
mac_n(uint8_t mac[6], unsigned n)
{
	mac[0] = 0x52;
	mac[1] = 0x54;
	mac[2] = (uint8_t)(n >> 24);
	mac[3] = (uint8_t)(n >> 16);
	mac[4] = (uint8_t)(n >> 8);
	mac[5] = (uint8_t)n;
}

/* The pool's config: identity, range, excludes and every kind of option. */
static struct agent_config *
make_config(void)
{
	struct agent_config *c = calloc(1, sizeof(*c));
	struct dhcp_options *o;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	o = &c->opts;
	snprintf(c->pool_ns, sizeof(c->pool_ns), "default");
	snprintf(c->pool_name, sizeof(c->pool_name), "pool-a");
	snprintf(c->network, sizeof(c->network), "default/net-a");
	c->cidr = IP(10, 1, 0, 0);
	c->prefix = 16;
	c->pool_start = IP(10, 1, 0, 10);
	c->pool_end = IP(10, 1, 255, 250);
	c->exclude = malloc(2 * sizeof(*c->exclude));
	CU_ASSERT_PTR_NOT_NULL_FATAL(c->exclude);
	c->exclude[0] = IP(10, 1, 0, 20);
	c->exclude[1] = IP(10, 1, 0, 21);
	c->n_exclude = 2;
	o->server_ip = IP(10, 1, 0, 1);
	o->prefix = 16;
	o->router = IP(10, 1, 0, 254);
	o->dns[0] = IP(10, 1, 0, 2);
	o->dns[1] = IP(10, 1, 0, 3);
	o->n_dns = 2;
	o->ntp[0] = IP(10, 1, 0, 4);
	o->n_ntp = 1;
	snprintf(o->domain_name, sizeof(o->domain_name), "example.org");
	snprintf(o->search[0], sizeof(o->search[0]), "a.example.org");
	/* 31 + 1 + 32 bytes: one '.' away from a label the engine refuses */
	snprintf(o->search[1], sizeof(o->search[1]), "%s.%s", "sssssssssssssssssssssssssssssss",
	    "tttttttttttttttttttttttttttttttt");
	o->n_search = 2;
	o->mtu = 1450;
	o->routes[0] = (struct dhcp_route){
	    .destination = IP(192, 168, 0, 0), .prefix = 16, .gateway = IP(10, 1, 0, 253)};
	o->n_routes = 1;
	o->lease_time = 7200;
	return c;
}

/* An engine with cfg's options and bindings 0..n-1 (IP 10.1.x.y from 10.1.1.0 on), inserted in
 * descending address order; every other one with a hostname when hostnames. */
static struct dhcp_server *
make_engine(const struct agent_config *c, unsigned n, bool hostnames)
{
	struct dhcp_server *s = NULL;

	CU_ASSERT_EQUAL_FATAL(dhcp_server_new(&s), 0);
	CU_ASSERT_EQUAL_FATAL(dhcp_server_set_options(s, &c->opts), 0);
	for (unsigned k = n; k-- > 0;) {
		char name[32];
		uint8_t mac[6];

		mac_n(mac, k + 1);
		snprintf(name, sizeof(name), "vm-%05u", k);
		CU_ASSERT_EQUAL_FATAL(dhcp_server_set_binding(s, mac, IP(10, 1, 1, 0) + k,
					  hostnames && k % 2 == 0 ? name : NULL),
		    0);
	}
	return s;
}

static void
encode_ok(const struct agent_config *c, const struct dhcp_server *s, uint8_t **buf, size_t *len)
{
	CU_ASSERT_EQUAL_FATAL(agent_snapshot_encode(c, s, RV, WRITTEN, buf, len), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(*buf);
}

/* A small snapshot: the full config, 5 bindings, 3 of them named. */
static void
small_snapshot(uint8_t **buf, size_t *len)
{
	struct agent_config *c = make_config();
	struct dhcp_server *s = make_engine(c, 5, true);

	encode_ok(c, s, buf, len);
	dhcp_server_free(s);
	agent_config_free(c);
}

static void
fix_crc(uint8_t *buf, size_t len)
{
	uint32_t crc = agent_snapshot_crc32c(buf, len - 4);

	buf[len - 4] = (uint8_t)crc;
	buf[len - 3] = (uint8_t)(crc >> 8);
	buf[len - 2] = (uint8_t)(crc >> 16);
	buf[len - 1] = (uint8_t)(crc >> 24);
}

static size_t
find(const uint8_t *buf, size_t len, const void *pat, size_t plen)
{
	for (size_t i = 0; i + plen <= len; i++)
		if (memcmp(buf + i, pat, plen) == 0)
			return i;
	CU_FAIL_FATAL("pattern not found");
	return 0;
}

static void
le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static bool
options_equal(const struct dhcp_options *a, const struct dhcp_options *b)
{
	if (a->server_ip != b->server_ip || a->prefix != b->prefix || a->router != b->router ||
	    a->n_dns != b->n_dns || a->n_ntp != b->n_ntp || a->n_search != b->n_search ||
	    a->mtu != b->mtu || a->n_routes != b->n_routes || a->lease_time != b->lease_time ||
	    strcmp(a->domain_name, b->domain_name) != 0)
		return false;
	for (size_t i = 0; i < a->n_dns; i++)
		if (a->dns[i] != b->dns[i])
			return false;
	for (size_t i = 0; i < a->n_ntp; i++)
		if (a->ntp[i] != b->ntp[i])
			return false;
	for (size_t i = 0; i < a->n_search; i++)
		if (strcmp(a->search[i], b->search[i]) != 0)
			return false;
	for (size_t i = 0; i < a->n_routes; i++)
		if (a->routes[i].destination != b->routes[i].destination ||
		    a->routes[i].prefix != b->routes[i].prefix ||
		    a->routes[i].gateway != b->routes[i].gateway)
			return false;
	return true;
}

static void
assert_config_equal(const struct agent_config *a, const struct agent_config *b)
{
	CU_ASSERT_STRING_EQUAL(a->pool_ns, b->pool_ns);
	CU_ASSERT_STRING_EQUAL(a->pool_name, b->pool_name);
	CU_ASSERT_STRING_EQUAL(a->network, b->network);
	CU_ASSERT_EQUAL(a->paused, b->paused);
	CU_ASSERT_EQUAL(a->cidr, b->cidr);
	CU_ASSERT_EQUAL(a->prefix, b->prefix);
	CU_ASSERT_EQUAL(a->pool_start, b->pool_start);
	CU_ASSERT_EQUAL(a->pool_end, b->pool_end);
	CU_ASSERT_EQUAL_FATAL(a->n_exclude, b->n_exclude);
	for (size_t i = 0; i < a->n_exclude; i++)
		CU_ASSERT_EQUAL(a->exclude[i], b->exclude[i]);
	CU_ASSERT_TRUE(options_equal(&a->opts, &b->opts));
}

/* Applies d into a fresh engine and encodes that: the same bytes as buf. */
static void
assert_reencodes(const struct agent_config *d, const struct agent_snapshot_info *info,
    const uint8_t *buf, size_t len)
{
	struct dhcp_server *s = NULL;
	char err[AGENT_ERR_MAX] = "";
	uint8_t *again = NULL;
	size_t again_len = 0;

	CU_ASSERT_EQUAL_FATAL(dhcp_server_new(&s), 0);
	CU_ASSERT_EQUAL_FATAL(agent_apply_config(s, d, NULL, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s), d->n_bindings);
	CU_ASSERT_EQUAL_FATAL(agent_snapshot_encode(d, s, info->resource_version,
				  info->written_usec, &again, &again_len),
	    0);
	CU_ASSERT_EQUAL(again_len, len);
	CU_ASSERT(again_len == len && memcmp(again, buf, len) == 0);
	free(again);
	dhcp_server_free(s);
}

static void
test_crc32c(void)
{
	/* the check value of CRC-32C (RFC 3720 B.4 and the CRC catalogue) */
	CU_ASSERT_EQUAL(agent_snapshot_crc32c("123456789", 9), 0xe3069283u);
	CU_ASSERT_EQUAL(agent_snapshot_crc32c("", 0), 0u);
	{
		uint8_t zeros[32] = {0};
		CU_ASSERT_EQUAL(agent_snapshot_crc32c(zeros, sizeof(zeros)), 0x8a9136aau);
	}
}

static void
test_round_trip(void)
{
	struct agent_config *c = make_config(), *d = NULL;
	struct dhcp_server *s = make_engine(c, 5, true);
	struct agent_snapshot_info info;
	char err[AGENT_ERR_MAX] = "";
	uint8_t *buf = NULL;
	size_t len = 0;

	c->paused = true;
	encode_ok(c, s, &buf, &len);
	CU_ASSERT_EQUAL(memcmp(buf, "VMDHSNAP\x02\0\0\0", 12), 0);
	CU_ASSERT_EQUAL(buf[12] | buf[13] << 8 | buf[14] << 16 | (uint32_t)buf[15] << 24, len);
	CU_ASSERT_EQUAL_FATAL(
	    agent_snapshot_decode(buf, len, "default/pool-a", &d, &info, err, sizeof(err)), 0);
	assert_config_equal(c, d);
	CU_ASSERT_TRUE(d->paused);
	CU_ASSERT_EQUAL(info.written_usec, WRITTEN);
	CU_ASSERT_STRING_EQUAL(info.resource_version, RV);
	CU_ASSERT_EQUAL(info.bindings, 5u);
	CU_ASSERT_EQUAL(info.bytes, len);
	/* ascending addresses (inserted in descending order); vm-00000, vm-00002, vm-00004 named */
	CU_ASSERT_EQUAL_FATAL(d->n_bindings, 5u);
	for (unsigned k = 0; k < 5; k++) {
		const struct agent_binding *b = &d->bindings[k];
		const char *h = agent_config_hostname(d, b);
		uint8_t mac[6];
		char name[32];

		mac_n(mac, k + 1);
		CU_ASSERT_EQUAL(memcmp(b->mac, mac, 6), 0);
		CU_ASSERT_EQUAL(b->ip, IP(10, 1, 1, 0) + k);
		snprintf(name, sizeof(name), "vm-%05u", k);
		if (k % 2 == 0) {
			CU_ASSERT_PTR_NOT_NULL_FATAL(h);
			CU_ASSERT_STRING_EQUAL(h, name);
		} else {
			CU_ASSERT_PTR_NULL(h);
		}
	}
	assert_reencodes(d, &info, buf, len);
	agent_config_free(d);
	/* NULL outputs and NULL ref are fine */
	CU_ASSERT_EQUAL(agent_snapshot_decode(buf, len, NULL, NULL, NULL, err, sizeof(err)), 0);
	free(buf);
	dhcp_server_free(s);
	agent_config_free(c);
}

static void
test_hostname_truncated_and_max(void)
{
	struct agent_config *c = make_config(), *d = NULL;
	struct dhcp_server *s = NULL;
	struct agent_snapshot_info info;
	char err[AGENT_ERR_MAX] = "", long_name[100];
	uint8_t mac[6], *buf = NULL;
	size_t len = 0;

	memset(long_name, 'h', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	CU_ASSERT_EQUAL_FATAL(dhcp_server_new(&s), 0);
	mac_n(mac, 1);
	CU_ASSERT_EQUAL_FATAL(dhcp_server_set_binding(s, mac, IP(10, 1, 2, 3), long_name), 0);
	encode_ok(c, s, &buf, &len);
	CU_ASSERT_EQUAL_FATAL(
	    agent_snapshot_decode(buf, len, NULL, &d, &info, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(d->n_bindings, 1u);
	CU_ASSERT_EQUAL(strlen(agent_config_hostname(d, &d->bindings[0])), DHCP_HOSTNAME_MAX);
	assert_reencodes(d, &info, buf, len);
	agent_config_free(d);
	free(buf);
	dhcp_server_free(s);
	agent_config_free(c);
}

static void
test_empty_table(void)
{
	struct agent_config *c = make_config(), *d = NULL;
	struct dhcp_server *s = make_engine(c, 0, false);
	struct agent_snapshot_info info;
	char err[AGENT_ERR_MAX] = "";
	uint8_t *buf = NULL, *buf2 = NULL;
	size_t len = 0, len2 = 0;

	encode_ok(c, s, &buf, &len);
	CU_ASSERT_EQUAL_FATAL(
	    agent_snapshot_decode(buf, len, "default/pool-a", &d, &info, err, sizeof(err)), 0);
	assert_config_equal(c, d);
	CU_ASSERT_EQUAL(d->n_bindings, 0u);
	CU_ASSERT_EQUAL(info.bindings, 0u);
	CU_ASSERT_PTR_NULL(d->names);
	assert_reencodes(d, &info, buf, len);
	agent_config_free(d);
	/* no engine at all: the same as an empty one */
	encode_ok(c, NULL, &buf2, &len2);
	CU_ASSERT(len2 == len && memcmp(buf, buf2, len) == 0);
	free(buf2);
	/* and the smallest config: no options beyond server_ip, no strings, no excludes */
	{
		struct agent_config *m = calloc(1, sizeof(*m));

		CU_ASSERT_PTR_NOT_NULL_FATAL(m);
		m->opts.server_ip = IP(10, 0, 0, 1);
		CU_ASSERT_EQUAL(agent_snapshot_encode(m, NULL, NULL, 0, &buf2, &len2), 0);
		CU_ASSERT_EQUAL_FATAL(
		    agent_snapshot_decode(buf2, len2, "/", &d, &info, err, sizeof(err)), 0);
		assert_config_equal(m, d);
		CU_ASSERT_STRING_EQUAL(info.resource_version, "");
		agent_config_free(d);
		free(buf2);
		agent_config_free(m);
	}
	free(buf);
	dhcp_server_free(s);
	agent_config_free(c);
}

static void
big(bool hostnames)
{
	const unsigned n = 65000;
	struct agent_config *c = make_config(), *d = NULL;
	struct dhcp_server *s = make_engine(c, n, hostnames);
	struct agent_snapshot_info info;
	char err[AGENT_ERR_MAX] = "";
	uint8_t *buf = NULL;
	size_t len = 0;

	encode_ok(c, s, &buf, &len);
	if (!hostnames) {
		/* 10 bytes a binding, a few hundred for the rest */
		CU_ASSERT(len >= 10u * n && len <= 10u * n + 512);
	} else {
		/* + a length byte each + "vm-NNNNN" for every other one */
		CU_ASSERT(len >= 11u * n + 8u * (n / 2) && len <= 11u * n + 8u * (n / 2) + 512);
	}
	CU_ASSERT_EQUAL_FATAL(
	    agent_snapshot_decode(buf, len, "default/pool-a", &d, &info, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(d->n_bindings, n);
	CU_ASSERT_EQUAL(info.bindings, n);
	for (unsigned k = 0; k < n; k++) {
		const struct agent_binding *b = &d->bindings[k];
		uint8_t mac[6];

		mac_n(mac, k + 1);
		if (memcmp(b->mac, mac, 6) != 0 || b->ip != IP(10, 1, 1, 0) + k ||
		    (agent_config_hostname(d, b) != NULL) != (hostnames && k % 2 == 0)) {
			CU_FAIL("binding differs");
			break;
		}
	}
	assert_reencodes(d, &info, buf, len);
	agent_config_free(d);
	free(buf);
	dhcp_server_free(s);
	agent_config_free(c);
}

static void
test_65000(void)
{
	big(false);
}

static void
test_65000_hostnames(void)
{
	big(true);
}

static void
test_every_byte_corruption_refused(void)
{
	char err[AGENT_ERR_MAX];
	uint8_t *buf = NULL;
	size_t len = 0, refused = 0;

	small_snapshot(&buf, &len);
	for (size_t i = 0; i < len; i++) {
		uint8_t orig = buf[i];

		for (unsigned x = 1; x < 256; x++) {
			struct agent_config *d = NULL;
			int r;

			buf[i] = (uint8_t)(orig ^ x);
			err[0] = '\0';
			r = agent_snapshot_decode(buf, len, NULL, &d, NULL, err, sizeof(err));
			if (r != -EINVAL || d != NULL || err[0] == '\0') {
				CU_FAIL("a corrupted byte was not refused");
				fprintf(stderr, "byte %zu ^ 0x%02x: %d %s\n", i, x, r, err);
				agent_config_free(d);
				buf[i] = orig;
				goto out;
			}
			refused++;
		}
		buf[i] = orig;
	}
out:
	CU_ASSERT_EQUAL(refused, len * 255);
	/* the message names the checksum for a corruption in the body */
	buf[40] ^= 1;
	CU_ASSERT_EQUAL(
	    agent_snapshot_decode(buf, len, NULL, NULL, NULL, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "checksum mismatch (file 0x"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ", computed 0x"));
	buf[40] ^= 1;
	CU_ASSERT_EQUAL(agent_snapshot_decode(buf, len, NULL, NULL, NULL, err, sizeof(err)), 0);
	free(buf);
}

static void
test_truncation_refused(void)
{
	char err[AGENT_ERR_MAX];
	uint8_t *buf = NULL, *copy;
	size_t len = 0;

	small_snapshot(&buf, &len);
	for (size_t l = 0; l < len; l++) {
		struct agent_config *d = NULL;
		/* a copy of exactly l bytes, so ASan sees any read past them */
		copy = malloc(l > 0 ? l : 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
		memcpy(copy, buf, l);
		if (agent_snapshot_decode(copy, l, NULL, &d, NULL, err, sizeof(err)) != -EINVAL ||
		    d != NULL) {
			CU_FAIL("a truncated snapshot was accepted");
			agent_config_free(d);
			free(copy);
			break;
		}
		free(copy);
	}
	/* one byte more is refused too */
	copy = malloc(len + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(copy);
	memcpy(copy, buf, len);
	copy[len] = 0;
	CU_ASSERT_EQUAL(
	    agent_snapshot_decode(copy, len + 1, NULL, NULL, NULL, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "length mismatch"));
	/* a truncated tail whose header length was fixed up: the checksum catches it */
	le32(copy + 12, (uint32_t)(len - 1));
	CU_ASSERT_EQUAL(
	    agent_snapshot_decode(copy, len - 1, NULL, NULL, NULL, err, sizeof(err)), -EINVAL);
	free(copy);
	CU_ASSERT_EQUAL(
	    agent_snapshot_decode(NULL, 0, NULL, NULL, NULL, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "truncated"));
	free(buf);
}

static void
test_wrong_version_refused(void)
{
	static const uint32_t versions[] = {0, 3, 0x01000000u, UINT32_MAX};
	char err[AGENT_ERR_MAX];
	uint8_t *buf = NULL;
	size_t len = 0;

	small_snapshot(&buf, &len);
	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		struct agent_config *d = NULL;
		char want[64];

		le32(buf + 8, versions[i]);
		fix_crc(buf, len);
		CU_ASSERT_EQUAL(
		    agent_snapshot_decode(buf, len, NULL, &d, NULL, err, sizeof(err)), -EINVAL);
		CU_ASSERT_PTR_NULL(d);
		snprintf(
		    want, sizeof(want), "format version %u, this agent reads 1 and 2", versions[i]);
		CU_ASSERT_STRING_EQUAL(err, want);
	}
	memcpy(buf, "VMDHSNAQ", 8);
	CU_ASSERT_EQUAL(
	    agent_snapshot_decode(buf, len, NULL, NULL, NULL, err, sizeof(err)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err, "not a snapshot (bad magic)");
	free(buf);
}

static void
test_wrong_pool_refused(void)
{
	static const char *const others[] = {"default/pool-b", "default/pool-a2", "default/pool",
	    "defaul/pool-a", "default", "default/", "/pool-a", "", "default/pool-a/x",
	    "other/pool-a"};
	char err[AGENT_ERR_MAX];
	uint8_t *buf = NULL;
	size_t len = 0;

	small_snapshot(&buf, &len);
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		struct agent_config *d = NULL;
		char want[128];

		CU_ASSERT_EQUAL(
		    agent_snapshot_decode(buf, len, others[i], &d, NULL, err, sizeof(err)),
		    -EINVAL);
		CU_ASSERT_PTR_NULL(d);
		snprintf(
		    want, sizeof(want), "snapshot of IPPool default/pool-a, not %s", others[i]);
		CU_ASSERT_STRING_EQUAL(err, want);
	}
	CU_ASSERT_EQUAL(
	    agent_snapshot_decode(buf, len, "default/pool-a", NULL, NULL, err, sizeof(err)), 0);
	free(buf);
}

/* Patches len bytes at off with val (after fixing the checksum): refused, err contains want. */
static void
refused_with(
    const uint8_t *orig, size_t len, size_t off, const void *val, size_t vlen, const char *want)
{
	uint8_t *buf = malloc(len);
	char err[AGENT_ERR_MAX] = "";
	struct agent_config *d = NULL;
	int r;

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	memcpy(buf, orig, len);
	memcpy(buf + off, val, vlen);
	fix_crc(buf, len);
	r = agent_snapshot_decode(buf, len, NULL, &d, NULL, err, sizeof(err));
	CU_ASSERT_EQUAL(r, -EINVAL);
	CU_ASSERT_PTR_NULL(d);
	if (strstr(err, want) == NULL) {
		CU_FAIL("unexpected message");
		fprintf(stderr, "want \"%s\" in \"%s\"\n", want, err);
	}
	agent_config_free(d);
	free(buf);
}

static void
test_fields_out_of_range(void)
{
	const uint8_t search1[] = "sssssssssssssssssssssssssssssss.tttt";
	uint8_t *buf = NULL, v[16];
	size_t len = 0, off, rec1, rec2;
	uint8_t mac[6];

	small_snapshot(&buf, &len);
	/* header */
	refused_with(buf, len, 16, "\x02", 1, "flags: unknown bits 0x2");
	refused_with(buf, len, 28, "\x40", 1, "resourceVersion: 64 bytes, at most 63");
	refused_with(buf, len, 29, "\0", 1, "resourceVersion: NUL byte inside");
	off = find(buf, len,
	    "\x07"
	    "default",
	    8);
	refused_with(buf, len, off + 1, "\0", 1, "namespace: NUL byte inside");
	/* pool: prefix 33, host bits under the prefix, start after end */
	le32(v, IP(10, 1, 0, 0));
	off = find(buf, len, v, 4);
	refused_with(buf, len, off + 4, "\x21", 1, "prefix: 33, at most 32");
	refused_with(buf, len, off + 4, "\x08", 1, "cidr: host bits set under /8");
	le32(v, IP(10, 2, 0, 0));
	refused_with(buf, len, off + 5, v, 4, "pool range: start after end");
	/* excludes: a count past the end */
	le32(v, 1000000);
	refused_with(buf, len, off + 13, v, 4, "exclude: 1000000 addresses, past the end");
	/* options (server_ip follows the two excludes) */
	off += 4 + 1 + 4 + 4 + 4 + 2 * 4;
	le32(v, 0);
	refused_with(buf, len, off, v, 4, "options.server_ip: 0");
	refused_with(buf, len, off + 4, "\x21", 1, "options.prefix: 33, at most 32");
	refused_with(buf, len, off + 9, "\x04", 1, "options.dns: 4 servers, at most 3");
	off = find(buf, len, "\x01\x04\x00\x01\x0a", 5); /* n_ntp 1, 10.1.0.4 */
	refused_with(buf, len, off, "\x05", 1, "options.ntp: 5 servers, at most 4");
	off = find(buf, len, search1, sizeof(search1) - 1);
	/* a 64-byte label: the engine's option 119 encoder refuses it */
	refused_with(buf, len, off + 31, "s", 1, "options refused by the DHCP engine");
	off = find(buf, len, "\xaa\x05\x01", 3); /* mtu 1450, one route */
	refused_with(buf, len, off, "\x10\x00", 2, "options.mtu: 16, below 68");
	refused_with(buf, len, off + 2, "\x21", 1, "options.routes: 33, at most 32");
	refused_with(buf, len, off + 2 + 1 + 4, "\x21", 1, "options.routes[0].prefix: 33");
	/* bindings */
	mac_n(mac, 1);
	rec1 = find(buf, len, mac, 6);
	mac_n(mac, 2);
	rec2 = find(buf, len, mac, 6);
	CU_ASSERT_EQUAL_FATAL(rec2, rec1 + 10);
	refused_with(buf, len, rec1, "\x01", 1, "binding 0: MAC not bindable");
	refused_with(buf, len, rec1, "\0\0\0\0\0\0", 6, "binding 0: MAC not bindable");
	refused_with(buf, len, rec1 + 6, "\0\0\0\0", 4, "binding 0: address 0");
	refused_with(
	    buf, len, rec2 + 6, buf + rec1 + 6, 4, "binding 1: addresses not in ascending");
	refused_with(buf, len, rec2, buf + rec1, 6, "bound twice");
	le32(v, 6);
	refused_with(buf, len, rec1 - 8, v, 4, "bindings: 6 bindings and");
	le32(v, 25);
	refused_with(buf, len, rec1 - 4, v, 4, "bindings: 5 bindings and 25 hostname bytes");
	/* hostnames: lengths 8 0 8 0 8, then the names */
	off = rec1 + 5 * 10;
	refused_with(buf, len, off, "\x07", 1, "hostnames: 23 bytes, the header says 24");
	refused_with(buf, len, off, "\x40", 1, "binding 0: hostname of 64 bytes, at most 63");
	refused_with(buf, len, off + 5 + 3, "\0", 1, "hostnames: NUL byte inside");
	free(buf);
}

static void
test_random_mutations(void)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	uint8_t *orig = NULL, *buf;
	size_t len = 0, accepted = 0;
	char err[AGENT_ERR_MAX];

	small_snapshot(&orig, &len);
	buf = malloc(len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	for (unsigned it = 0; it < 20000; it++) {
		struct agent_snapshot_info info;
		struct agent_config *d = NULL;
		unsigned flips;

		memcpy(buf, orig, len);
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		flips = 1 + (unsigned)(rng % 3);
		for (unsigned f = 0; f < flips; f++) {
			rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
			/* the version and length are left alone: they have their own tests */
			buf[16 + (rng >> 8) % (len - 20)] = (uint8_t)rng;
		}
		fix_crc(buf, len);
		if (agent_snapshot_decode(buf, len, NULL, &d, &info, err, sizeof(err)) == 0) {
			accepted++;
			assert_reencodes(d, &info, buf, len);
			agent_config_free(d);
		}
	}
	/* some mutations (an address, a MAC octet, a hostname letter) are valid snapshots */
	CU_ASSERT(accepted > 0);
	free(buf);
	free(orig);
}

static void
test_encode_refuses_what_cannot_be_read(void)
{
	struct agent_config *c = make_config();
	char rv[80], err[AGENT_ERR_MAX] = "";
	uint8_t *buf = NULL;
	size_t len = 0;

	memset(rv, '1', sizeof(rv) - 1);
	rv[sizeof(rv) - 1] = '\0';
	CU_ASSERT_EQUAL(agent_snapshot_encode(c, NULL, rv, 0, &buf, &len), -EINVAL);
	rv[64] = '\0';
	CU_ASSERT_EQUAL(agent_snapshot_encode(c, NULL, rv, 0, &buf, &len), -EINVAL);
	rv[63] = '\0'; /* 63 bytes: the most */
	CU_ASSERT_EQUAL(agent_snapshot_encode(c, NULL, rv, 0, &buf, &len), 0);
	free(buf);
	buf = NULL;
	c->opts.n_dns = 4;
	CU_ASSERT_EQUAL(agent_snapshot_encode(c, NULL, NULL, 0, &buf, &len), -EINVAL);
	c->opts.n_dns = 2;
	memset(c->pool_ns, 'x', sizeof(c->pool_ns));
	CU_ASSERT_EQUAL(agent_snapshot_encode(c, NULL, NULL, 0, &buf, &len), -EINVAL);
	snprintf(c->pool_ns, sizeof(c->pool_ns), "default");
	snprintf(c->opts.search[0], sizeof(c->opts.search[0]), "%064d.example.org", 0);
	CU_ASSERT_EQUAL(agent_snapshot_encode(c, NULL, NULL, 0, &buf, &len), -EINVAL);
	CU_ASSERT_EQUAL(agent_snapshot_write(path, c, NULL, NULL, NULL, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ": cannot write: options refused by the DHCP engine"));
	CU_ASSERT_PTR_NULL(buf);
	agent_config_free(c);
}

static uint8_t *
slurp(const char *p, size_t *len)
{
	char *text = NULL;

	if (read_file(p, 64 << 20, &text, len) < 0)
		return NULL;
	return (uint8_t *)text;
}

static void
test_write_and_load(void)
{
	struct agent_config *c = make_config(), *d = NULL;
	struct dhcp_server *s = make_engine(c, 100, true);
	struct agent_snapshot_info winfo, linfo;
	char err[AGENT_ERR_MAX] = "", want[256];
	struct stat st;
	uint8_t *file;
	size_t flen = 0;

	unlink(path);
	/* a PATH.tmp left by an earlier run, world-readable: replaced, and the result is 0600 */
	{
		int fd = open(tmppath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT_EQUAL(write(fd, "junk", 4), 4);
		fchmod(fd, 0644);
		close(fd);
	}
	CU_ASSERT_EQUAL_FATAL(agent_snapshot_write(path, c, s, "99", &winfo, err, sizeof(err)), 0);
	CU_ASSERT_NOT_EQUAL(access(tmppath, F_OK), 0);
	CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 07777, 0600);
	CU_ASSERT_EQUAL((size_t)st.st_size, winfo.bytes);
	CU_ASSERT_EQUAL(winfo.bindings, 100u);
	CU_ASSERT_STRING_EQUAL(winfo.resource_version, "99");
	CU_ASSERT(winfo.written_usec > UINT64_C(1577836800000000)); /* after 2020 */

	CU_ASSERT_EQUAL_FATAL(
	    agent_snapshot_load(path, "default/pool-a", &d, &linfo, err, sizeof(err)), 0);
	assert_config_equal(c, d);
	CU_ASSERT_EQUAL(d->n_bindings, 100u);
	CU_ASSERT_EQUAL(linfo.written_usec, winfo.written_usec);
	CU_ASSERT_STRING_EQUAL(linfo.resource_version, "99");
	CU_ASSERT_EQUAL(linfo.bindings, 100u);
	CU_ASSERT_EQUAL(linfo.bytes, winfo.bytes);
	file = slurp(path, &flen);
	CU_ASSERT_PTR_NOT_NULL_FATAL(file);
	assert_reencodes(d, &linfo, file, flen);
	free(file);
	agent_config_free(d);
	d = NULL;

	/* another pool's snapshot: the message names the file */
	CU_ASSERT_EQUAL(
	    agent_snapshot_load(path, "default/pool-b", &d, NULL, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NULL(d);
	snprintf(
	    want, sizeof(want), "%s: snapshot of IPPool default/pool-a, not default/pool-b", path);
	CU_ASSERT_STRING_EQUAL(err, want);

	/* a corrupted file: refused, the message names the file and the checksum */
	{
		int fd = open(path, O_WRONLY);
		CU_ASSERT_FATAL(fd >= 0);
		CU_ASSERT_EQUAL(pwrite(fd, "X", 1, 100), 1);
		close(fd);
	}
	CU_ASSERT_EQUAL(agent_snapshot_load(path, NULL, &d, NULL, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NULL(d);
	snprintf(want, sizeof(want), "%s: checksum mismatch (file 0x", path);
	CU_ASSERT_EQUAL(strncmp(err, want, strlen(want)), 0);

	/* an empty file */
	CU_ASSERT_EQUAL(truncate(path, 0), 0);
	CU_ASSERT_EQUAL(agent_snapshot_load(path, NULL, &d, NULL, err, sizeof(err)), -EINVAL);
	snprintf(want, sizeof(want), "%s: truncated (0 bytes)", path);
	CU_ASSERT_STRING_EQUAL(err, want);
	unlink(path);

	/* not a regular file */
	CU_ASSERT_EQUAL(agent_snapshot_load(dir, NULL, &d, NULL, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NULL(d);
	dhcp_server_free(s);
	agent_config_free(c);
}

static void
test_missing_file(void)
{
	struct agent_config *d = NULL;
	char err[AGENT_ERR_MAX] = "", want[256];

	unlink(path);
	CU_ASSERT_EQUAL(
	    agent_snapshot_load(path, "default/pool-a", &d, NULL, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NULL(d);
	snprintf(want, sizeof(want), "%s: no snapshot", path);
	CU_ASSERT_STRING_EQUAL(err, want);
}

/* Writes a first snapshot to path (returned, malloc'd), the one a failed write must keep. */
static uint8_t *
first_snapshot(const struct agent_config *c, size_t *len)
{
	struct dhcp_server *s = make_engine(c, 3, true);
	char err[AGENT_ERR_MAX] = "";
	uint8_t *old;

	unlink(path);
	CU_ASSERT_EQUAL_FATAL(agent_snapshot_write(path, c, s, "1", NULL, err, sizeof(err)), 0);
	dhcp_server_free(s);
	old = slurp(path, len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(old);
	return old;
}

static void
assert_unchanged(const uint8_t *old, size_t old_len)
{
	size_t len = 0;
	uint8_t *now = slurp(path, &len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(now);
	CU_ASSERT(len == old_len && memcmp(now, old, len) == 0);
	free(now);
}

static void
test_failed_write_keeps_old_file(void)
{
	struct agent_config *c = make_config();
	struct dhcp_server *big = make_engine(c, 65000, false);
	char err[AGENT_ERR_MAX] = "", p[200];
	size_t old_len = 0;
	uint8_t *old = first_snapshot(c, &old_len);
	struct sigaction ign = {.sa_handler = SIG_IGN}, prev;
	struct rlimit lim, small;
	int r;

	/* no parent directory */
	snprintf(p, sizeof(p), "%s/missing/snapshot", dir);
	CU_ASSERT_EQUAL(agent_snapshot_write(p, c, big, NULL, NULL, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ": cannot write: open "));
	snprintf(p, sizeof(p), "%s/missing/snapshot.tmp", dir);
	CU_ASSERT_NOT_EQUAL(access(p, F_OK), 0);

	/* PATH.tmp is a directory (not ours: left alone) */
	CU_ASSERT_EQUAL_FATAL(mkdir(tmppath, 0700), 0);
	CU_ASSERT(agent_snapshot_write(path, c, big, NULL, NULL, err, sizeof(err)) < 0);
	assert_unchanged(old, old_len);
	CU_ASSERT_EQUAL(rmdir(tmppath), 0);

	/* the file size limit hit in the middle of the write (EFBIG): PATH.tmp removed */
	CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_FSIZE, &lim), 0);
	small = lim;
	small.rlim_cur = 64 * 1024;
	sigaction(SIGXFSZ, &ign, &prev);
	fflush(NULL);
	CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_FSIZE, &small), 0);
	r = agent_snapshot_write(path, c, big, NULL, NULL, err, sizeof(err));
	setrlimit(RLIMIT_FSIZE, &lim);
	sigaction(SIGXFSZ, &prev, NULL);
	CU_ASSERT_EQUAL(r, -EFBIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ": cannot write: write "));
	CU_ASSERT_NOT_EQUAL(access(tmppath, F_OK), 0);
	assert_unchanged(old, old_len);

	/* PATH is a (non-empty) directory: the rename fails, PATH.tmp removed */
	snprintf(p, sizeof(p), "%s/x", path);
	CU_ASSERT_EQUAL_FATAL(unlink(path), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(path, 0700), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(p, 0700), 0);
	CU_ASSERT(agent_snapshot_write(path, c, big, NULL, NULL, err, sizeof(err)) < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, ": cannot write: rename "));
	CU_ASSERT_NOT_EQUAL(access(tmppath, F_OK), 0);
	rmdir(p);
	rmdir(path);

	/* a directory we may not write to (only meaningful when not root) */
	if (geteuid() != 0) {
		char ro[160];

		snprintf(ro, sizeof(ro), "%s/ro", dir);
		snprintf(p, sizeof(p), "%s/ro/snapshot", dir);
		CU_ASSERT_EQUAL_FATAL(mkdir(ro, 0700), 0);
		CU_ASSERT_EQUAL(agent_snapshot_write(p, c, big, NULL, NULL, err, sizeof(err)), 0);
		CU_ASSERT_EQUAL(chmod(ro, 0500), 0);
		CU_ASSERT_EQUAL(
		    agent_snapshot_write(p, c, NULL, NULL, NULL, err, sizeof(err)), -EACCES);
		CU_ASSERT_EQUAL(agent_snapshot_load(p, NULL, NULL, NULL, err, sizeof(err)), 0);
		chmod(ro, 0700);
		unlink(p);
		rmdir(ro);
	}
	free(old);
	dhcp_server_free(big);
	agent_config_free(c);
}

static const struct test_case snapshot_tests[] = {
    {"CRC-32C check values", test_crc32c},
    {"round trip: options, bindings, hostnames; re-encodes to the same bytes", test_round_trip},
    {"a long hostname: truncated by the engine, 63 bytes round trip",
	test_hostname_truncated_and_max},
    {"empty table, no engine, smallest config", test_empty_table},
    {"65 000 bindings round trip, 10 bytes each", test_65000},
    {"65 000 bindings with hostnames round trip", test_65000_hostnames},
    {"every single-byte corruption refused", test_every_byte_corruption_refused},
    {"truncation at every length refused", test_truncation_refused},
    {"wrong version or magic refused", test_wrong_version_refused},
    {"another pool's snapshot refused", test_wrong_pool_refused},
    {"out-of-range fields behind a valid checksum refused, named", test_fields_out_of_range},
    {"random mutations, checksum fixed: no crash, accepted ones re-encode", test_random_mutations},
    {"encode refuses what could not be read back", test_encode_refuses_what_cannot_be_read},
    {"write (0600, no PATH.tmp) and load", test_write_and_load},
    {"a missing file is -ENOENT", test_missing_file},
    {"a failed write leaves no PATH.tmp and the old file intact", test_failed_write_keeps_old_file},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "agent-snapshot",
	.init = suite_init,
	.cleanup = suite_cleanup,
	.tests = snapshot_tests},
    {.name = NULL},
};

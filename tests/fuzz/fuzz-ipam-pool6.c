/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer: bytes -> a sequence of ipam_pool6 operations (alloc, take, release, set_range,
 * rebuild) on a pool inside a /118 whose range sits anywhere in the 128-bit space, checked
 * against a naive model of the 1024 addresses: every return value, the lowest-free choice, the
 * -EBUSY conflict, the counts, every state and the foreach order. Any difference traps.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ipam/ipam.h"
#include "lib/ip6.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N 1024

struct fz {
	const uint8_t *d;
	size_t n, i;
	ip6_u128 net;
	int st[N]; /* -1 outside the range, else an ipam_state */
	unsigned server;
	uint64_t used;
	struct ipam_pool6 *p;
	size_t walked;
	ip6_u128 last_walked;
};

static unsigned
byte(struct fz *f)
{
	return f->i < f->n ? f->d[f->i++] : 0;
}

static unsigned
off10(struct fz *f)
{
	return (byte(f) << 8 | byte(f)) % N;
}

static struct in6_addr
at(const struct fz *f, unsigned off)
{
	struct in6_addr a;

	ipv6_from_u128(f->net + off, &a);
	return a;
}

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c))                                                                          \
			__builtin_trap();                                                          \
	} while (0)

static void
model_range(struct fz *f, unsigned s, unsigned e, const unsigned *ex, size_t n_ex)
{
	for (unsigned i = 0; i < N; i++)
		f->st[i] = i < s || i > e ? -1 : f->st[i] == IPAM_USED ? IPAM_USED : IPAM_FREE;
	for (size_t k = 0; k < n_ex; k++)
		if (ex[k] >= s && ex[k] <= e)
			f->st[ex[k]] = IPAM_EXCLUDED;
	if (s == 0)
		f->st[0] = IPAM_RESERVED; /* the Subnet-Router anycast address */
	if (f->server >= s && f->server <= e)
		f->st[f->server] = IPAM_RESERVED;
}

static int
walk(const struct in6_addr *a, enum ipam_state s, void *userdata)
{
	struct fz *f = userdata;
	ip6_u128 off = ipv6_to_u128(a) - f->net;

	CHECK(off < N && f->st[off] == (int)s);
	CHECK(f->walked == 0 || off > f->last_walked); /* ascending */
	f->last_walked = off;
	f->walked++;
	return 0;
}

static void
check_all(struct fz *f)
{
	int64_t avail = 0;
	size_t nonfree = 0;

	for (unsigned i = 0; i < N; i++) {
		struct in6_addr a = at(f, i);

		CHECK(ipam_pool6_state(f->p, &a) == (f->st[i] < 0 ? -ERANGE : f->st[i]));
		avail += f->st[i] == IPAM_FREE;
		nonfree += f->st[i] > IPAM_FREE;
	}
	CHECK(ipam_pool6_used(f->p) == f->used);
	CHECK(ipam_pool6_available(f->p) == avail);
	f->walked = 0;
	CHECK(ipam_pool6_foreach(f->p, IPAM_MASK_ALL, walk, f) == 0);
	CHECK(f->walked == nonfree);
}

static void
op_set_range(struct fz *f)
{
	unsigned s = off10(f), e = off10(f), ex[4], lowest = N;
	struct in6_addr as = at(f, s), ae = at(f, e), xa[4], bad;
	size_t n = byte(f) % 5;

	for (size_t k = 0; k < n; k++) {
		ex[k] = off10(f);
		xa[k] = at(f, ex[k]);
	}
	if (s > e) {
		CHECK(ipam_pool6_set_range(f->p, &as, &ae, xa, n, NULL) == -EINVAL);
		return;
	}
	for (unsigned i = 0; i < N && lowest == N; i++) {
		bool blocked = i == 0 || i == f->server;

		for (size_t k = 0; k < n; k++)
			blocked |= ex[k] == i;
		if (f->st[i] == IPAM_USED && (i < s || i > e || blocked))
			lowest = i;
	}
	if (lowest < N) {
		struct in6_addr w = at(f, lowest);

		CHECK(ipam_pool6_set_range(f->p, &as, &ae, xa, n, &bad) == -EBUSY);
		CHECK(ipv6_equal(&bad, &w));
		return;
	}
	CHECK(ipam_pool6_set_range(f->p, &as, &ae, xa, n, NULL) == 0);
	model_range(f, s, e, ex, n);
}

static void
op_rebuild(struct fz *f)
{
	struct ipam_binding6 b[8];
	struct ipam_conflict6 *c = NULL;
	size_t n = byte(f) % 8;
	int r;

	for (unsigned i = 0; i < N; i++)
		if (f->st[i] == IPAM_USED)
			f->st[i] = IPAM_FREE;
	f->used = 0;
	for (size_t k = 0; k < n; k++) {
		unsigned o = off10(f);

		b[k] = (struct ipam_binding6){.addr = at(f, o), .mac = {2, 0, 0, 0, 0, (uint8_t)k}};
		if (f->st[o] == IPAM_FREE) {
			f->st[o] = IPAM_USED;
			f->used++;
		}
	}
	r = ipam_pool6_rebuild(f->p, b, n, &c);
	CHECK(r >= 0 && (r == 0) == (c == NULL));
	free(c);
}

static void
op(struct fz *f)
{
	unsigned kind = byte(f) % 8, o = off10(f);
	struct in6_addr a = at(f, o);

	if (kind <= 2) {
		unsigned want = N;

		for (unsigned i = 0; i < N && want == N; i++)
			if (f->st[i] == IPAM_FREE)
				want = i;
		if (want == N) {
			CHECK(ipam_pool6_alloc(f->p, &a) == -ENOSPC);
			return;
		}
		CHECK(ipam_pool6_alloc(f->p, &a) == 0 && ipv6_to_u128(&a) == f->net + want);
		f->st[want] = IPAM_USED;
		f->used++;
	} else if (kind == 3) {
		int want = f->st[o] < 0		       ? -ERANGE
			   : f->st[o] == IPAM_USED     ? -EEXIST
			   : f->st[o] != IPAM_FREE     ? -EPERM
						       : 0;

		CHECK(ipam_pool6_take(f->p, &a) == want);
		if (want == 0) {
			f->st[o] = IPAM_USED;
			f->used++;
		}
	} else if (kind <= 5) {
		int want = f->st[o] < 0 ? -ERANGE : f->st[o] == IPAM_USED ? 0 : -ENOENT;

		CHECK(ipam_pool6_release(f->p, &a) == want);
		if (want == 0) {
			f->st[o] = IPAM_FREE;
			f->used--;
		}
	} else if (kind == 6) {
		op_set_range(f);
	} else {
		op_rebuild(f);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fz f;
	struct in6_addr net, s, e, srv;
	unsigned ex[3];
	struct in6_addr xa[3];

	memset(&f, 0, sizeof(f));
	f.d = data;
	f.n = size;
	/* the /118 anywhere: 110 bits from the input */
	for (int k = 0; k < 14; k++)
		f.net = f.net << 8 | byte(&f);
	f.net <<= 10;
	f.server = off10(&f);
	for (int k = 0; k < 3; k++) {
		ex[k] = off10(&f);
		xa[k] = at(&f, ex[k]);
	}
	ipv6_from_u128(f.net, &net);
	s = at(&f, 0);
	e = at(&f, N - 1);
	srv = at(&f, f.server);
	if (ipam_pool6_new(&net, 118, &s, &e, &srv, xa, 3, &f.p) < 0)
		__builtin_trap();
	model_range(&f, 0, N - 1, ex, 3);
	for (int steps = 0; f.i < f.n && steps < 4096; steps++)
		op(&f);
	check_all(&f);
	ipam_pool6_free(f.p);
	return 0;
}

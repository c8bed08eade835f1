/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes mode of the agent (agent/source-kube*.c) against the in-memory API server: a real
 * dhcp_server without sockets, answered through dhcp_handle_message(). Initial sync and
 * readiness, option and binding changes visible to the next reply, outages and restarts of
 * the API server (served from memory meanwhile), 410 relist, paused and deleted pools,
 * malformed versions.
 *
 * Size: about 1000 lines, one file on purpose: one source's cases sharing one test API server
 * and the DHCP fixtures that check what the next reply says.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "agent/pool-config.h"
#include "agent/source.h"
#include "dhcp/dhcp-internal.h"
#include "kube/kube.h"
#include "lib/buf.h"
#include "lib/util.h"
#include "tests/helpers/apiserver.h"
#include "tests/helpers/capture.h"
#include "tests/runner.h"

#define NS "lab"
#define IP(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (d))
#define WAIT_MS 20000

static struct test_apiserver *srv;
static struct event_base *base;
static struct kube_config *kcfg;
static struct kube_client *client;

/* src_start() passes these when set (the NTP test's resolver) */
static const char *resolv_conf;
static uint64_t ntp_refresh_usec;

static const uint8_t mac1[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x01};
static const uint8_t mac2[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x02};
static const uint8_t mac3[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x03};

static int
suite_init(void)
{
	char err[512];

	/* no periodic bookmarks: the 410 test needs the informer's resourceVersion to lag */
	if (test_apiserver_start(&srv, "--bookmark-interval 3600") < 0)
		return -1;
	/* the CRDs' schemas: IPPools pruned and defaulted as in a cluster */
	snprintf(err, sizeof(err), "%s/../../crds", test_data_dir());
	if (test_apiserver_apply_crds(srv, err) < 0)
		return -1;
	base = event_base_new();
	if (base == NULL)
		return -1;
	if (kube_config_from_kubeconfig(
		test_apiserver_kubeconfig(srv), NULL, &kcfg, err, sizeof(err)) < 0)
		return -1;
	return kube_client_new(base, kcfg, &client);
}

static int
suite_cleanup(void)
{
	kube_client_free(client);
	kube_config_free(kcfg);
	event_base_free(base);
	test_apiserver_stop(srv);
	return 0;
}

/* ---- API helpers ---------------------------------------------------------------------------- */

static long
api(const char *method, const char *path, const char *body)
{
	const char *ct = strcmp(method, "PATCH") == 0 ? "application/merge-patch+json" : NULL;
	long code = 0;

	CU_ASSERT_EQUAL(test_apiserver_request(srv, method, path, ct, body, &code, NULL), 0);
	return code;
}

static void
pool_path(char *out, size_t n, const char *name, const char *sub)
{
	snprintf(out, n, "/apis/network.harvesterhci.io/v1alpha1/namespaces/" NS "/ippools%s%s%s",
	    name != NULL ? "/" : "", name != NULL ? name : "", sub != NULL ? sub : "");
}

/* Creates NAME with the given extra ipv4Config JSON members, then its status.allocated. */
static void
create_pool(const char *name, const char *extra, const char *allocated)
{
	char path[256], body[2048];

	pool_path(path, sizeof(path), NULL, NULL);
	snprintf(body, sizeof(body),
	    "{\"apiVersion\":\"network.harvesterhci.io/v1alpha1\",\"kind\":\"IPPool\","
	    "\"metadata\":{\"name\":\"%s\",\"namespace\":\"" NS "\"},"
	    "\"spec\":{\"networkName\":\"" NS "/net\",\"ipv4Config\":{"
	    "\"serverIP\":\"10.0.0.2\",\"cidr\":\"10.0.0.0/24\","
	    "\"pool\":{\"start\":\"10.0.0.10\",\"end\":\"10.0.0.200\",\"exclude\":[\"10.0.0.12\"]},"
	    "\"router\":\"10.0.0.1\"%s%s}}}",
	    name, extra != NULL ? "," : "", extra != NULL ? extra : "");
	CU_ASSERT_EQUAL(api("POST", path, body), 201);
	if (allocated == NULL)
		return;
	pool_path(path, sizeof(path), name, "/status");
	snprintf(body, sizeof(body),
	    "{\"status\":{\"ipv4\":{\"used\":2,\"available\":188,\"allocated\":{%s}}}}", allocated);
	CU_ASSERT_EQUAL(api("PATCH", path, body), 200);
}

static void
patch_pool(const char *name, const char *sub, const char *body)
{
	char path[256];

	pool_path(path, sizeof(path), name, sub);
	CU_ASSERT_EQUAL(api("PATCH", path, body), 200);
}

/* Replaces status.ipv4.allocated in one write (a merge patch would merge the map). */
static void
set_allocated(const char *name, const char *allocated)
{
	char path[256], body[2048];
	long code = 0;

	pool_path(path, sizeof(path), name, "/status");
	snprintf(body, sizeof(body),
	    "[{\"op\":\"add\",\"path\":\"/status/ipv4/allocated\",\"value\":{%s}}]", allocated);
	CU_ASSERT_EQUAL(test_apiserver_request(
			    srv, "PATCH", path, "application/json-patch+json", body, &code, NULL),
	    0);
	CU_ASSERT_EQUAL(code, 200);
}

static void
delete_pool(const char *name)
{
	char path[256];

	pool_path(path, sizeof(path), name, NULL);
	CU_ASSERT_EQUAL(api("DELETE", path, NULL), 200);
}

/* ---- loop helpers ----------------------------------------------------------------------- */

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

static bool
wait_for(bool (*cond)(void *), void *arg, long ms)
{
	struct timeval tv = {0, 20000};
	struct event *t = event_new(base, -1, EV_PERSIST, tick_cb, NULL);
	long loops = ms / 20 + 1;
	bool ok;

	evtimer_add(t, &tv);
	while (!(ok = cond(arg)) && loops-- > 0)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(t);
	return ok;
}

struct src {
	struct dhcp_server *dhcp;
	struct agent_kube *k;
	unsigned changes;
	bool last_null;
	uint64_t want; /* for the stat waits */
};

static void
on_change(void *userdata, const struct agent_config *cfg)
{
	struct src *s = userdata;

	s->changes++;
	s->last_null = cfg == NULL;
}

static void
src_start(struct src *s, const char *name)
{
	char ref[128], err[AGENT_ERR_MAX];
	struct agent_kube_opts o = {
	    .ippool_ref = ref,
	    .on_change = on_change,
	    .userdata = s,
	    .backoff_base_usec = 20000,
	    .backoff_max_usec = 100000,
	    .resolv_conf = resolv_conf,
	    .ntp_refresh_usec = ntp_refresh_usec,
	};
	static const uint8_t hw[6] = {0x02, 0, 0, 0, 0, 0x01};

	memset(s, 0, sizeof(*s));
	snprintf(ref, sizeof(ref), NS "/%s", name);
	CU_ASSERT_FATAL(dhcp_server_new(&s->dhcp) == 0);
	memcpy(s->dhcp->hwaddr, hw, 6);
	CU_ASSERT_FATAL(agent_kube_new(client, s->dhcp, &o, &s->k, err, sizeof(err)) == 0);
	CU_ASSERT_FATAL(agent_kube_start(s->k) == 0);
}

static void
src_stop(struct src *s)
{
	agent_kube_free(s->k);
	dhcp_server_free(s->dhcp);
}

static struct agent_source_stats
stats(const struct src *s)
{
	struct agent_source_stats st;

	agent_kube_get_stats(s->k, &st);
	return st;
}

static bool
is_ready(void *arg)
{
	char why[256];

	return agent_kube_ready(((struct src *)arg)->k, why, sizeof(why));
}

static bool
is_absent(void *arg)
{
	return agent_kube_get_state(((struct src *)arg)->k) == AGENT_KUBE_ABSENT;
}

static bool
applied_reaches(void *arg)
{
	struct src *s = arg;

	return stats(s).applied >= s->want;
}

static bool
malformed_reaches(void *arg)
{
	struct src *s = arg;

	return stats(s).malformed >= s->want;
}

static bool
errors_reach(void *arg)
{
	struct src *s = arg;

	return stats(s).errors >= s->want;
}

static bool
relists_reach(void *arg)
{
	struct src *s = arg;

	return stats(s).relists_410 >= s->want;
}

/* Waits for one more applied version than now (call before making the change). */
#define EXPECT_APPLY(s, change)                                                                    \
	do {                                                                                       \
		(s)->want = stats(s).applied + 1;                                                  \
		change;                                                                            \
		CU_ASSERT(wait_for(applied_reaches, (s), WAIT_MS));                                \
	} while (0)

/* ---- DHCP helpers ---------------------------------------------------------------------------- */

struct req {
	struct dhcp_msg m;
	uint8_t cookie[4];
	uint8_t opts[64];
} __attribute__((packed));

/* A DISCOVER from mac asking for 1, 3, 6, 12, 26, 42, 51, 121; returns the reply type. */
static int
discover(struct src *s, const uint8_t mac[6], struct dhcp_reply *rep)
{
	static const uint8_t prl[] = {DHCP_OPT_PRL, 8, 1, 3, 6, 12, 26, 42, 51, 121};
	struct req r;
	size_t n = 0;

	memset(&r, 0, sizeof(r));
	r.m.op = BOOTREQUEST;
	r.m.htype = 1;
	r.m.hlen = 6;
	be32_put(r.m.xid, 0x01020304);
	memcpy(r.m.chaddr, mac, 6);
	be32_put(r.cookie, DHCP_MAGIC_COOKIE);
	r.opts[n++] = DHCP_OPT_MESSAGE_TYPE;
	r.opts[n++] = 1;
	r.opts[n++] = DHCP_MSG_DISCOVER;
	memcpy(r.opts + n, prl, sizeof(prl));
	n += sizeof(prl);
	r.opts[n++] = DHCP_OPT_END;
	return dhcp_handle_message(
	    s->dhcp, (const uint8_t *)&r, sizeof(struct dhcp_msg) + 4 + n, 1, rep);
}

static uint32_t
offered(struct src *s, const uint8_t mac[6])
{
	struct dhcp_reply rep;

	if (discover(s, mac, &rep) != DHCP_MSG_OFFER)
		return 0;
	return be32_get(((const struct dhcp_msg *)rep.payload)->yiaddr);
}

/* Option code of the OFFER to mac: copies up to cap bytes, returns the length or -1. */
static int
offer_option(struct src *s, const uint8_t mac[6], uint8_t code, uint8_t *out, size_t cap)
{
	static struct dhcp_option_table t;
	struct dhcp_reply rep;
	const uint8_t *p;
	size_t len;

	if (discover(s, mac, &rep) != DHCP_MSG_OFFER)
		return -1;
	if (dhcp_option_parse(&t, rep.payload, rep.payload_len) < 0)
		return -1;
	p = dhcp_option_get(&t, code, &len);
	if (p == NULL)
		return -1;
	memcpy(out, p, len < cap ? len : cap);
	return (int)len;
}

static uint32_t
bound(struct src *s, const uint8_t mac[6])
{
	uint32_t ip = 0;

	if (dhcp_server_get_binding(s->dhcp, mac, &ip) < 0)
		return 0;
	return ip;
}

#define ALLOC_2                                                                                    \
	"\"10.0.0.20\":\"52:54:00:00:00:01\",\"10.0.0.21\":\"52:54:00:00:00:02\","                 \
	"\"10.0.0.12\":\"EXCLUDED\",\"10.0.0.2\":\"RESERVED\",\"10.0.0.1\":\"RESERVED\""

/* ---- tests ---------------------------------------------------------------------------------- */

static void
test_initial_sync(void)
{
	struct src s;
	char why[256];
	uint8_t b[64];
	struct agent_source_stats st;

	create_pool("p-initial",
	    "\"dns\":[\"10.0.0.53\",\"1.1.1.1\"],\"ntp\":[\"10.0.0.123\"],\"leaseTime\":600,"
	    "\"mtu\":9000,\"routes\":[{\"destination\":\"10.50.0.0/"
	    "16\",\"gateway\":\"10.0.0.254\"}]",
	    ALLOC_2);
	src_start(&s, "p-initial");
	/* nothing listed yet: not ready, nothing served */
	CU_ASSERT_FALSE(agent_kube_ready(s.k, why, sizeof(why)));
	CU_ASSERT(strstr(why, "first sync") != NULL);
	CU_ASSERT_EQUAL(agent_kube_get_state(s.k), AGENT_KUBE_WAITING);
	CU_ASSERT_FALSE(agent_kube_serving(s.k));
	CU_ASSERT_PTR_NULL(agent_kube_config(s.k));
	CU_ASSERT_EQUAL(offered(&s, mac1), 0);
	/* serve.c's view of it: agent_kube_source_ops */
	CU_ASSERT_FALSE(agent_kube_source_ops.ready(s.k, why, sizeof(why)));
	CU_ASSERT_FALSE(agent_kube_source_ops.serving(s.k));
	CU_ASSERT_PTR_NULL(agent_kube_source_ops.config(s.k));

	CU_ASSERT_FATAL(wait_for(is_ready, &s, WAIT_MS));
	CU_ASSERT(agent_kube_serving(s.k));
	CU_ASSERT_EQUAL(s.changes, 1);
	st = stats(&s);
	CU_ASSERT(st.synced);
	CU_ASSERT_EQUAL(st.bindings, 2); /* marks skipped */
	CU_ASSERT(st.last_sync_usec > 0);
	CU_ASSERT_EQUAL(bound(&s, mac1), IP(10, 0, 0, 20));
	CU_ASSERT_EQUAL(bound(&s, mac2), IP(10, 0, 0, 21));
	CU_ASSERT_EQUAL(bound(&s, mac3), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(agent_kube_config(s.k));
	CU_ASSERT_EQUAL(agent_kube_config(s.k)->opts.server_ip, IP(10, 0, 0, 2));
	CU_ASSERT_EQUAL(agent_kube_config(s.k)->prefix, 24);
	CU_ASSERT_STRING_EQUAL(agent_kube_config(s.k)->network, NS "/net");
	CU_ASSERT(agent_kube_source_ops.ready(s.k, why, sizeof(why)));
	CU_ASSERT(agent_kube_source_ops.serving(s.k));
	CU_ASSERT_PTR_EQUAL(agent_kube_source_ops.config(s.k), agent_kube_config(s.k));
	memset(&st, 0, sizeof(st));
	agent_kube_source_ops.stats(s.k, &st);
	CU_ASSERT(st.synced);
	CU_ASSERT_EQUAL(st.bindings, 2);

	/* the reply carries the pool's options */
	CU_ASSERT_EQUAL(offered(&s, mac1), IP(10, 0, 0, 20));
	CU_ASSERT_EQUAL(offered(&s, mac3), 0); /* unknown MAC: silent */
	CU_ASSERT_EQUAL(offer_option(&s, mac1, DHCP_OPT_DNS, b, sizeof(b)), 8);
	CU_ASSERT_EQUAL(be32_get(b), IP(10, 0, 0, 53));
	CU_ASSERT_EQUAL(be32_get(b + 4), IP(1, 1, 1, 1));
	CU_ASSERT_EQUAL(offer_option(&s, mac1, DHCP_OPT_NTP, b, sizeof(b)), 4);
	CU_ASSERT_EQUAL(be32_get(b), IP(10, 0, 0, 123));
	CU_ASSERT_EQUAL(offer_option(&s, mac1, DHCP_OPT_LEASE_TIME, b, sizeof(b)), 4);
	CU_ASSERT_EQUAL(be32_get(b), 600);
	CU_ASSERT_EQUAL(offer_option(&s, mac1, DHCP_OPT_MTU, b, sizeof(b)), 2);
	CU_ASSERT_EQUAL(be16_get(b), 9000);
	CU_ASSERT(offer_option(&s, mac1, DHCP_OPT_CLASSLESS_ROUTES, b, sizeof(b)) > 0);
	CU_ASSERT_EQUAL(offer_option(&s, mac1, DHCP_OPT_HOSTNAME, b, sizeof(b)), -1);
	src_stop(&s);
	delete_pool("p-initial");
}

static void
test_absent_then_created(void)
{
	struct src s;
	char why[256];

	src_start(&s, "p-later");
	CU_ASSERT_FATAL(wait_for(is_absent, &s, WAIT_MS));
	CU_ASSERT_FALSE(agent_kube_ready(s.k, why, sizeof(why)));
	CU_ASSERT(strstr(why, "not found") != NULL);
	/* another pool in the namespace is not ours */
	create_pool("p-other", NULL, "\"10.0.0.30\":\"52:54:00:00:00:03\"");
	create_pool("p-later", NULL, ALLOC_2);
	s.want = 2; /* created, then its status */
	CU_ASSERT_FATAL(wait_for(applied_reaches, &s, WAIT_MS));
	CU_ASSERT(is_ready(&s));
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s.dhcp), 2);
	CU_ASSERT_EQUAL(bound(&s, mac3), 0);
	src_stop(&s);
	delete_pool("p-later");
	delete_pool("p-other");
}

static void
test_option_changes(void)
{
	struct src s;
	uint8_t b[64];
	int n;

	create_pool("p-opts", "\"dns\":[\"10.0.0.53\"],\"leaseTime\":600", ALLOC_2);
	src_start(&s, "p-opts");
	CU_ASSERT_FATAL(wait_for(is_ready, &s, WAIT_MS));
	CU_ASSERT_EQUAL(offer_option(&s, mac1, DHCP_OPT_DNS, b, sizeof(b)), 4);

	EXPECT_APPLY(&s, patch_pool("p-opts", NULL,
			     "{\"spec\":{\"ipv4Config\":{\"dns\":[\"9.9.9.9\",\"8.8.8.8\"]}}}"));
	CU_ASSERT_EQUAL(offer_option(&s, mac1, DHCP_OPT_DNS, b, sizeof(b)), 8);
	CU_ASSERT_EQUAL(be32_get(b), IP(9, 9, 9, 9));
	CU_ASSERT_EQUAL(be32_get(b + 4), IP(8, 8, 8, 8));

	EXPECT_APPLY(&s, patch_pool("p-opts", NULL,
			     "{\"spec\":{\"ipv4Config\":{\"leaseTime\":120,\"mtu\":1400,"
			     "\"ntp\":[\"10.0.0.123\",\"localhost\"],"
			     "\"routes\":[{\"destination\":\"172.16.0.0/12\","
			     "\"gateway\":\"10.0.0.253\"}]}}}"));
	CU_ASSERT_EQUAL(offer_option(&s, mac2, DHCP_OPT_LEASE_TIME, b, sizeof(b)), 4);
	CU_ASSERT_EQUAL(be32_get(b), 120);
	CU_ASSERT_EQUAL(offer_option(&s, mac2, DHCP_OPT_MTU, b, sizeof(b)), 2);
	CU_ASSERT_EQUAL(be16_get(b), 1400);
	/* NTP: the literal and the resolved hostname */
	CU_ASSERT_EQUAL(offer_option(&s, mac2, DHCP_OPT_NTP, b, sizeof(b)), 8);
	CU_ASSERT_EQUAL(be32_get(b), IP(10, 0, 0, 123));
	CU_ASSERT_EQUAL(be32_get(b + 4), IP(127, 0, 0, 1));
	/* option 121: 172.16/12 via .253, then the router as 0/0 */
	n = offer_option(&s, mac2, DHCP_OPT_CLASSLESS_ROUTES, b, sizeof(b));
	CU_ASSERT_EQUAL(n, 1 + 2 + 4 + 1 + 4);
	CU_ASSERT_EQUAL(b[0], 12);
	CU_ASSERT_EQUAL(b[1], 172);
	CU_ASSERT_EQUAL(b[2], 16);

	/* removing an option removes it from the next reply */
	EXPECT_APPLY(&s, patch_pool("p-opts", NULL, "{\"spec\":{\"ipv4Config\":{\"mtu\":null}}}"));
	CU_ASSERT_EQUAL(offer_option(&s, mac2, DHCP_OPT_MTU, b, sizeof(b)), -1);
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s.dhcp), 2);
	src_stop(&s);
	delete_pool("p-opts");
}

/* A pool without leaseTime (and one with 0 or a negative value) is served as upstream's
 * agent serves it (pkg/dhcp/dhcp.go): one-year leases; T1/T2 at 50 % and 87.5 %. */
static void
test_lease_time_unset(void)
{
	struct src s;
	uint8_t b[64];

	create_pool("p-lease", NULL, ALLOC_2);
	src_start(&s, "p-lease");
	CU_ASSERT_FATAL(wait_for(is_ready, &s, WAIT_MS));
	CU_ASSERT_EQUAL(offer_option(&s, mac1, DHCP_OPT_LEASE_TIME, b, sizeof(b)), 4);
	CU_ASSERT_EQUAL(be32_get(b), 31536000);
	CU_ASSERT_EQUAL(offer_option(&s, mac1, DHCP_OPT_T1, b, sizeof(b)), 4);
	CU_ASSERT_EQUAL(be32_get(b), 15768000);
	CU_ASSERT_EQUAL(offer_option(&s, mac1, DHCP_OPT_T2, b, sizeof(b)), 4);
	CU_ASSERT_EQUAL(be32_get(b), 27594000);

	EXPECT_APPLY(
	    &s, patch_pool("p-lease", NULL, "{\"spec\":{\"ipv4Config\":{\"leaseTime\":30}}}"));
	CU_ASSERT_EQUAL(offer_option(&s, mac1, DHCP_OPT_LEASE_TIME, b, sizeof(b)), 4);
	CU_ASSERT_EQUAL(be32_get(b), 30); /* below 60: served as written, as upstream */
	EXPECT_APPLY(
	    &s, patch_pool("p-lease", NULL, "{\"spec\":{\"ipv4Config\":{\"leaseTime\":-1}}}"));
	CU_ASSERT_EQUAL(offer_option(&s, mac1, DHCP_OPT_LEASE_TIME, b, sizeof(b)), 4);
	CU_ASSERT_EQUAL(be32_get(b), 31536000);
	EXPECT_APPLY(
	    &s, patch_pool("p-lease", NULL, "{\"spec\":{\"ipv4Config\":{\"leaseTime\":0}}}"));
	CU_ASSERT_EQUAL(offer_option(&s, mac1, DHCP_OPT_LEASE_TIME, b, sizeof(b)), 4);
	CU_ASSERT_EQUAL(be32_get(b), 31536000);
	src_stop(&s);
	delete_pool("p-lease");
}

/* stderr to a file while f runs; the file's text (malloc'd) */
static char *
stderr_of(void (*f)(struct src *), struct src *s)
{
	char path[64], *text = NULL;
	size_t len = 0;
	int fd, saved;

	snprintf(path, sizeof(path), "/tmp/%ld-vmdhcp-kube-stderr", (long)getpid());
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (saved < 0 || fd < 0) {
		CU_FAIL("cannot redirect stderr");
		return NULL;
	}
	dup2(fd, STDERR_FILENO);
	close(fd);
	f(s);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	CU_ASSERT_EQUAL(read_file(path, 1 << 20, &text, &len), 0);
	unlink(path);
	return text;
}

static void
apply_group_macs(struct src *s)
{
	EXPECT_APPLY(s, patch_pool("p-group", "/status",
			    "{\"status\":{\"ipv4\":{\"allocated\":"
			    "{\"10.0.0.30\":\"ff:ff:ff:ff:ff:ff\","
			    "\"10.0.0.31\":\"01:00:5e:00:00:01\","
			    "\"10.0.0.32\":\"00:00:00:00:00:00\","
			    "\"10.0.0.33\":\"52:54:00:00:00:03\"}}}}"));
}

/*
 * Broadcast, multicast and all-zero MACs in status.ipv4.allocated are no bindings: skipped,
 * the others of the same version served, one warning line for the version (not one per entry),
 * the version not counted as malformed.
 */
static void
test_group_macs_skipped(void)
{
	static const uint8_t bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct src s;
	char *log;

	create_pool("p-group", NULL, ALLOC_2);
	src_start(&s, "p-group");
	CU_ASSERT_FATAL(wait_for(is_ready, &s, WAIT_MS));
	log = stderr_of(apply_group_macs, &s);
	CU_ASSERT_PTR_NOT_NULL_FATAL(log);
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s.dhcp), 3);
	CU_ASSERT_EQUAL(offered(&s, mac3), IP(10, 0, 0, 33));
	CU_ASSERT_EQUAL(bound(&s, bc), 0);
	CU_ASSERT_EQUAL(stats(&s).malformed, 0);
	if (strstr(log,
		"status.ipv4.allocated has 3 entries whose MAC is no NIC's (e.g. "
		"10.0.0.30 -> ff:ff:ff:ff:ff:ff, the broadcast address); not served") == NULL)
		fprintf(stderr, "log:\n%s\n", log);
	CU_ASSERT_PTR_NOT_NULL(strstr(log, "status.ipv4.allocated has 3 entries whose MAC is no "
					   "NIC's (e.g. 10.0.0.30 -> ff:ff:ff:ff:ff:ff, the "
					   "broadcast address); not served"));
	CU_ASSERT_PTR_NULL(strstr(log, "skipped: a broadcast, multicast or all-zero MAC"));
	free(log);
	src_stop(&s);
	delete_pool("p-group");
}

static void
test_binding_changes(void)
{
	struct src s;

	create_pool("p-bind", NULL, ALLOC_2);
	src_start(&s, "p-bind");
	CU_ASSERT_FATAL(wait_for(is_ready, &s, WAIT_MS));

	/* added */
	EXPECT_APPLY(&s, patch_pool("p-bind", "/status",
			     "{\"status\":{\"ipv4\":{\"allocated\":"
			     "{\"10.0.0.22\":\"52:54:00:00:00:03\"}}}}"));
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s.dhcp), 3);
	CU_ASSERT_EQUAL(offered(&s, mac3), IP(10, 0, 0, 22));

	/* removed */
	EXPECT_APPLY(&s, patch_pool("p-bind", "/status",
			     "{\"status\":{\"ipv4\":{\"allocated\":{\"10.0.0.21\":null}}}}"));
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s.dhcp), 2);
	CU_ASSERT_EQUAL(bound(&s, mac2), 0);
	CU_ASSERT_EQUAL(offered(&s, mac2), 0);
	CU_ASSERT_EQUAL(offered(&s, mac3), IP(10, 0, 0, 22));

	/* moved: the two MACs swap addresses in one version */
	EXPECT_APPLY(&s, patch_pool("p-bind", "/status",
			     "{\"status\":{\"ipv4\":{\"allocated\":"
			     "{\"10.0.0.20\":\"52:54:00:00:00:03\","
			     "\"10.0.0.22\":\"52:54:00:00:00:01\"}}}}"));
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s.dhcp), 2);
	CU_ASSERT_EQUAL(offered(&s, mac1), IP(10, 0, 0, 22));
	CU_ASSERT_EQUAL(offered(&s, mac3), IP(10, 0, 0, 20));
	CU_ASSERT_EQUAL(stats(&s).malformed, 0);
	CU_ASSERT_EQUAL(stats(&s).duplicate_macs, 0);

	/* one MAC under two more addresses (written above and below its own): the lowest is
	 * served whatever the order, the others are not, and the version is counted */
	EXPECT_APPLY(&s, patch_pool("p-bind", "/status",
			     "{\"status\":{\"ipv4\":{\"allocated\":"
			     "{\"10.0.0.30\":\"52:54:00:00:00:03\","
			     "\"10.0.0.15\":\"52:54:00:00:00:03\"}}}}"));
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s.dhcp), 2);
	CU_ASSERT_EQUAL(offered(&s, mac3), IP(10, 0, 0, 15));
	CU_ASSERT_EQUAL(offered(&s, mac1), IP(10, 0, 0, 22));
	CU_ASSERT_EQUAL(stats(&s).duplicate_macs, 1);
	CU_ASSERT_EQUAL(stats(&s).malformed, 0);
	/* cleared: the count follows the applied version */
	EXPECT_APPLY(&s, patch_pool("p-bind", "/status",
			     "{\"status\":{\"ipv4\":{\"allocated\":"
			     "{\"10.0.0.30\":null,\"10.0.0.15\":null}}}}"));
	CU_ASSERT_EQUAL(offered(&s, mac3), IP(10, 0, 0, 20));
	CU_ASSERT_EQUAL(stats(&s).duplicate_macs, 0);
	src_stop(&s);
	delete_pool("p-bind");
}

static void
test_outage_and_restart(void)
{
	struct src s;
	char why[256];
	uint8_t b[16];

	create_pool("p-outage", "\"dns\":[\"10.0.0.53\"]", ALLOC_2);
	src_start(&s, "p-outage");
	CU_ASSERT_FATAL(wait_for(is_ready, &s, WAIT_MS));

	/* the watch drops and the next attempts fail: served from memory meanwhile */
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "fail?code=503&count=4"), 0);
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "close-watches"), 0);
	s.want = stats(&s).errors + 4;
	CU_ASSERT(wait_for(errors_reach, &s, WAIT_MS));
	CU_ASSERT(agent_kube_ready(s.k, why, sizeof(why)));
	CU_ASSERT_EQUAL(offered(&s, mac1), IP(10, 0, 0, 20));
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s.dhcp), 2);
	/* back: a change made now arrives */
	EXPECT_APPLY(&s, set_allocated("p-outage", "\"10.0.0.40\":\"52:54:00:00:00:03\""));
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s.dhcp), 1);
	CU_ASSERT_EQUAL(offered(&s, mac3), IP(10, 0, 0, 40));
	CU_ASSERT(stats(&s).watch_reconnects >= 1);

	/* the API server is gone for a while */
	CU_ASSERT_EQUAL(test_apiserver_terminate(srv), 0);
	s.want = stats(&s).errors + 5;
	CU_ASSERT(wait_for(errors_reach, &s, WAIT_MS));
	CU_ASSERT(agent_kube_ready(s.k, why, sizeof(why)));
	CU_ASSERT(agent_kube_serving(s.k));
	CU_ASSERT_EQUAL(offered(&s, mac3), IP(10, 0, 0, 40));
	CU_ASSERT_EQUAL(offer_option(&s, mac3, DHCP_OPT_DNS, b, sizeof(b)), 4);
	/* it comes back (same data): the informer reconnects and resyncs */
	CU_ASSERT_FATAL(test_apiserver_restart(srv) == 0);
	EXPECT_APPLY(&s,
	    patch_pool("p-outage", NULL, "{\"spec\":{\"ipv4Config\":{\"dns\":[\"10.0.0.54\"]}}}"));
	CU_ASSERT_EQUAL(offer_option(&s, mac3, DHCP_OPT_DNS, b, sizeof(b)), 4);
	CU_ASSERT_EQUAL(be32_get(b), IP(10, 0, 0, 54));
	CU_ASSERT_EQUAL(offered(&s, mac3), IP(10, 0, 0, 40));
	CU_ASSERT_EQUAL(stats(&s).malformed, 0);
	src_stop(&s);
	delete_pool("p-outage");
}

/*
 * The server holds exactly one open watch: the informer's, registered and answered. Faults
 * injected after this act on that stream, whatever order the server would take connections in.
 */
static bool
one_watch_open(void *arg)
{
	char *body = NULL;
	long code = 0;
	json_t *j = NULL;
	bool ok = false;

	(void)arg;
	if (test_apiserver_request(srv, "POST", "/_test/stats", NULL, NULL, &code, &body) == 0 &&
	    code == 200 && (j = json_loads(body, 0, NULL)) != NULL)
		ok = json_integer_value(json_object_get(j, "watches")) == 1;
	json_decref(j);
	free(body);
	return ok;
}

static void
test_relist_after_410(void)
{
	struct src s;

	create_pool("p-410", NULL, ALLOC_2);
	src_start(&s, "p-410");
	CU_ASSERT_FATAL(wait_for(is_ready, &s, WAIT_MS));
	CU_ASSERT_FATAL(wait_for(one_watch_open, &s, WAIT_MS));
	/*
	 * The loop does not run between these calls, so the informer reads none of it until its
	 * stream ends: the bindings change while it is disconnected, an object it does not watch
	 * moves the resourceVersion past that change, the history is compacted, and the streams
	 * are closed again. Its watch request may still be on its way to the server when the
	 * first close-watches runs (the server orders connections as it pleases), and then that
	 * stream delivers the change; either way the informer resumes from a resourceVersion
	 * older than the compacted one, gets 410 and must relist.
	 */
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "close-watches"), 0);
	set_allocated("p-410", "\"10.0.0.21\":\"52:54:00:00:00:01\","
			       "\"10.0.0.22\":\"52:54:00:00:00:03\"");
	create_pool("p-410-other", NULL, ALLOC_2);
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "compact"), 0);
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "close-watches"), 0);
	s.want = stats(&s).relists_410 + 1;
	CU_ASSERT_FATAL(wait_for(relists_reach, &s, WAIT_MS));
	s.want = 2;
	CU_ASSERT(wait_for(applied_reaches, &s, WAIT_MS));
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s.dhcp), 2);
	CU_ASSERT_EQUAL(bound(&s, mac1), IP(10, 0, 0, 21));
	CU_ASSERT_EQUAL(bound(&s, mac2), 0);
	CU_ASSERT_EQUAL(bound(&s, mac3), IP(10, 0, 0, 22));
	CU_ASSERT(is_ready(&s));
	src_stop(&s);
	delete_pool("p-410");
	delete_pool("p-410-other");
}

static void
test_paused(void)
{
	struct src s;
	char why[256];

	create_pool("p-pause", NULL, ALLOC_2);
	src_start(&s, "p-pause");
	CU_ASSERT_FATAL(wait_for(is_ready, &s, WAIT_MS));
	EXPECT_APPLY(&s, patch_pool("p-pause", NULL, "{\"spec\":{\"paused\":true}}"));
	CU_ASSERT_FALSE(agent_kube_serving(s.k));
	CU_ASSERT_FALSE(agent_kube_ready(s.k, why, sizeof(why)));
	CU_ASSERT(strstr(why, "paused") != NULL);
	CU_ASSERT_FALSE(s.last_null);
	CU_ASSERT(agent_kube_config(s.k)->paused);
	/* the table is kept, and still follows the pool */
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s.dhcp), 2);
	EXPECT_APPLY(&s, patch_pool("p-pause", "/status",
			     "{\"status\":{\"ipv4\":{\"allocated\":"
			     "{\"10.0.0.22\":\"52:54:00:00:00:03\"}}}}"));
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s.dhcp), 3);
	EXPECT_APPLY(&s, patch_pool("p-pause", NULL, "{\"spec\":{\"paused\":false}}"));
	CU_ASSERT(agent_kube_serving(s.k));
	CU_ASSERT(is_ready(&s));
	CU_ASSERT_EQUAL(offered(&s, mac3), IP(10, 0, 0, 22));
	src_stop(&s);
	delete_pool("p-pause");
}

static bool
deleted_seen(void *arg)
{
	return stats(arg).deleted >= 1;
}

static void
test_deleted(void)
{
	struct src s;
	char why[256];

	create_pool("p-del", NULL, ALLOC_2);
	src_start(&s, "p-del");
	CU_ASSERT_FATAL(wait_for(is_ready, &s, WAIT_MS));
	delete_pool("p-del");
	CU_ASSERT_FATAL(wait_for(deleted_seen, &s, WAIT_MS));
	CU_ASSERT_EQUAL(agent_kube_get_state(s.k), AGENT_KUBE_ABSENT);
	CU_ASSERT_FALSE(agent_kube_serving(s.k));
	CU_ASSERT_FALSE(agent_kube_ready(s.k, why, sizeof(why)));
	CU_ASSERT_PTR_NULL(agent_kube_config(s.k));
	CU_ASSERT(s.last_null);
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s.dhcp), 0);
	CU_ASSERT_EQUAL(offered(&s, mac1), 0);
	CU_ASSERT_FALSE(stats(&s).synced);
	/* created again: served again */
	create_pool("p-del", NULL, "\"10.0.0.50\":\"52:54:00:00:00:01\"");
	CU_ASSERT_FATAL(wait_for(is_ready, &s, WAIT_MS));
	s.want = 3; /* create, status */
	CU_ASSERT(wait_for(applied_reaches, &s, WAIT_MS));
	CU_ASSERT_EQUAL(offered(&s, mac1), IP(10, 0, 0, 50));
	src_stop(&s);
	delete_pool("p-del");
}

static void
test_malformed(void)
{
	struct src s;
	uint8_t b[16];
	struct agent_source_stats st;

	create_pool("p-bad", "\"dns\":[\"10.0.0.53\"]", ALLOC_2);
	src_start(&s, "p-bad");
	CU_ASSERT_FATAL(wait_for(is_ready, &s, WAIT_MS));
	/* a bad spec (the test server does no schema validation) */
	s.want = stats(&s).malformed + 1;
	patch_pool("p-bad", NULL,
	    "{\"spec\":{\"ipv4Config\":{\"dns\":[\"10.0.0.99\"],\"cidr\":\"10.0.0/33\"}}}");
	CU_ASSERT_FATAL(wait_for(malformed_reaches, &s, WAIT_MS));
	CU_ASSERT(is_ready(&s));
	CU_ASSERT_EQUAL(offer_option(&s, mac1, DHCP_OPT_DNS, b, sizeof(b)), 4);
	CU_ASSERT_EQUAL(be32_get(b), IP(10, 0, 0, 53)); /* previous version kept */
	CU_ASSERT_EQUAL(offered(&s, mac2), IP(10, 0, 0, 21));
	/* fixed: applied */
	EXPECT_APPLY(&s,
	    patch_pool("p-bad", NULL, "{\"spec\":{\"ipv4Config\":{\"cidr\":\"10.0.0.0/24\"}}}"));
	CU_ASSERT_EQUAL(offer_option(&s, mac1, DHCP_OPT_DNS, b, sizeof(b)), 4);
	CU_ASSERT_EQUAL(be32_get(b), IP(10, 0, 0, 99));
	/* a bad status: a value that is no MAC, then a binding outside the CIDR */
	s.want = stats(&s).malformed + 1;
	patch_pool("p-bad", "/status",
	    "{\"status\":{\"ipv4\":{\"allocated\":{\"10.0.0.22\":\"not-a-mac\"}}}}");
	CU_ASSERT_FATAL(wait_for(malformed_reaches, &s, WAIT_MS));
	s.want = stats(&s).malformed + 1;
	set_allocated("p-bad", "\"10.9.0.22\":\"52:54:00:00:00:03\"");
	CU_ASSERT_FATAL(wait_for(malformed_reaches, &s, WAIT_MS));
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s.dhcp), 2);
	CU_ASSERT_EQUAL(offered(&s, mac1), IP(10, 0, 0, 20));
	CU_ASSERT_EQUAL(bound(&s, mac3), 0);
	st = stats(&s);
	CU_ASSERT(st.malformed >= 3);
	CU_ASSERT(st.synced);
	src_stop(&s);
	delete_pool("p-bad");
}

/*
 * An invalid IPPool written again and again with the same fault (a watch event each time):
 * every version is counted, the error is logged once (a line per event before); a
 * different fault is logged again.
 */
static void
test_malformed_logged_once(void)
{
	enum { REPEATS = 20 };
	struct src s;
	char path[256], body[128], tmpl[] = "/tmp/test-agent-kube-log-XXXXXX";
	int log_fd, saved;

	log_fd = mkstemp(tmpl);
	CU_ASSERT_FATAL(log_fd >= 0);
	unlink(tmpl);
	pool_path(path, sizeof(path), NULL, NULL);
	CU_ASSERT_EQUAL(api("POST", path,
			    "{\"metadata\":{\"name\":\"p-loud\"},\"spec\":{\"networkName\":\"x\","
			    "\"ipv4Config\":{\"serverIP\":\"10.0.0.2\",\"cidr\":\"nope\","
			    "\"pool\":{\"start\":\"10.0.0.10\",\"end\":\"10.0.0.20\"}}}}"),
	    201);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	CU_ASSERT_FATAL(saved >= 0);
	dup2(log_fd, STDERR_FILENO);
	src_start(&s, "p-loud");
	s.want = 1;
	CU_ASSERT(wait_for(malformed_reaches, &s, WAIT_MS));
	for (unsigned i = 0; i < REPEATS; i++) {
		snprintf(body, sizeof(body), "{\"metadata\":{\"annotations\":{\"n\":\"%u\"}}}", i);
		s.want = stats(&s).malformed + 1;
		patch_pool("p-loud", NULL, body);
		CU_ASSERT(wait_for(malformed_reaches, &s, WAIT_MS));
	}
	fflush(stderr);
	unsigned once = test_count_in_fd(log_fd, "nothing to serve yet");
	/* another fault: said */
	s.want = stats(&s).malformed + 1;
	patch_pool("p-loud", NULL, "{\"spec\":{\"ipv4Config\":{\"cidr\":\"still-not\"}}}");
	CU_ASSERT(wait_for(malformed_reaches, &s, WAIT_MS));
	fflush(stderr);
	unsigned twice = test_count_in_fd(log_fd, "nothing to serve yet");
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(log_fd);
	CU_ASSERT_EQUAL(stats(&s).malformed, 1 + REPEATS + 1);
	CU_ASSERT_EQUAL(once, 1);
	CU_ASSERT_EQUAL(twice, 2);
	if (once != 1 || twice != 2)
		fprintf(stderr, "log lines: %u after %u versions, %u after another fault\n", once,
		    1 + REPEATS, twice);
	src_stop(&s);
	delete_pool("p-loud");
}

static void
test_malformed_first(void)
{
	struct src s;
	char why[256];
	char path[256];

	/* the first version seen is invalid: not ready, nothing served */
	pool_path(path, sizeof(path), NULL, NULL);
	CU_ASSERT_EQUAL(api("POST", path,
			    "{\"metadata\":{\"name\":\"p-bad1\"},\"spec\":{\"networkName\":\"x\","
			    "\"ipv4Config\":{\"serverIP\":\"10.0.0.2\",\"cidr\":\"nope\","
			    "\"pool\":{\"start\":\"10.0.0.10\",\"end\":\"10.0.0.20\"}}}}"),
	    201);
	src_start(&s, "p-bad1");
	s.want = 1;
	CU_ASSERT_FATAL(wait_for(malformed_reaches, &s, WAIT_MS));
	CU_ASSERT_EQUAL(agent_kube_get_state(s.k), AGENT_KUBE_INVALID);
	CU_ASSERT_FALSE(agent_kube_ready(s.k, why, sizeof(why)));
	CU_ASSERT_FALSE(agent_kube_serving(s.k));
	EXPECT_APPLY(&s,
	    patch_pool("p-bad1", NULL, "{\"spec\":{\"ipv4Config\":{\"cidr\":\"10.0.0.0/24\"}}}"));
	CU_ASSERT(is_ready(&s));
	src_stop(&s);
	delete_pool("p-bad1");
}

/* ---- a DNS server for the NTP names (UDP on 127.0.0.1, on the test's loop) ------------------- */

struct dns_name {
	const char *name;
	uint32_t addr; /* 0: NXDOMAIN */
	bool silent;   /* never answered */
};

static struct dns_name dns_names[] = {
    {"time1.example.test", 0, false},
    {"missing.example.test", 0, false},
    {"silent.example.test", 0, true},
};
static unsigned dns_queries;

static void
dns_cb(evutil_socket_t fd, short what, void *arg)
{
	uint8_t q[512], a[600];
	struct sockaddr_in from;
	socklen_t flen = sizeof(from);
	char name[256];
	size_t nlen = 0, p = 12, alen;
	ssize_t n;
	uint32_t addr = 0;
	bool silent = false;

	(void)what;
	(void)arg;
	n = recvfrom(fd, q, sizeof(q), 0, (struct sockaddr *)&from, &flen);
	if (n < 12)
		return;
	dns_queries++;
	/* QNAME labels -> dotted name */
	while (p < (size_t)n && q[p] != 0 && nlen + q[p] + 1 < sizeof(name)) {
		if (nlen > 0)
			name[nlen++] = '.';
		if (p + 1 + q[p] > (size_t)n)
			return;
		memcpy(name + nlen, q + p + 1, q[p]);
		nlen += q[p];
		p += 1u + q[p];
	}
	name[nlen] = '\0';
	p += 1 + 4; /* root label, QTYPE, QCLASS */
	if (p > (size_t)n)
		return;
	for (size_t i = 0; i < ELEMENTSOF(dns_names); i++)
		if (strcasecmp(dns_names[i].name, name) == 0) { /* evdns randomises case */
			addr = dns_names[i].addr;
			silent = dns_names[i].silent;
		}
	if (silent)
		return;
	memcpy(a, q, p);
	a[2] = 0x81;			/* QR, RD */
	a[3] = addr != 0 ? 0x80 : 0x83; /* RA; NOERROR or NXDOMAIN */
	a[6] = 0;
	a[7] = addr != 0; /* ANCOUNT */
	a[8] = a[9] = a[10] = a[11] = 0;
	alen = p;
	if (addr != 0) {
		static const uint8_t rr[] = {0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4};
		memcpy(a + alen, rr, sizeof(rr));
		alen += sizeof(rr);
		be32_put(a + alen, addr);
		alen += 4;
	}
	(void)sendto(fd, a, alen, 0, (struct sockaddr *)&from, flen);
}

struct ntp_wait {
	struct src *s;
	uint32_t want[4];
	size_t n;
};

/* The OFFER's option 42 is exactly want[0..n). */
static bool
ntp_is(void *arg)
{
	struct ntp_wait *w = arg;
	uint8_t b[64];
	int len = offer_option(w->s, mac1, DHCP_OPT_NTP, b, sizeof(b));

	if (len != (int)(4 * w->n))
		return false;
	for (size_t i = 0; i < w->n; i++)
		if (be32_get(b + 4 * i) != w->want[i])
			return false;
	return true;
}

static void
test_ntp_hostnames(void)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	socklen_t slen = sizeof(sin);
	char path[] = "/tmp/vmdhcp-resolv-XXXXXX", line[64];
	struct ntp_wait w = {0};
	struct event *ev;
	struct src s;
	int fd, tfd;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	CU_ASSERT_FATAL(getsockname(fd, (struct sockaddr *)&sin, &slen) == 0);
	ev = event_new(base, fd, EV_READ | EV_PERSIST, dns_cb, NULL);
	CU_ASSERT_FATAL(ev != NULL && event_add(ev, NULL) == 0);
	tfd = mkstemp(path);
	CU_ASSERT_FATAL(tfd >= 0);
	snprintf(line, sizeof(line), "nameserver 127.0.0.1:%u\n", ntohs(sin.sin_port));
	CU_ASSERT(write(tfd, line, strlen(line)) == (ssize_t)strlen(line));
	close(tfd);
	dns_names[0].addr = IP(192, 0, 2, 123);

	create_pool("p-ntp",
	    "\"ntp\":[\"10.0.0.123\",\"missing.example.test\",\"time1.example.test\","
	    "\"localhost\"]",
	    ALLOC_2);
	resolv_conf = path;
	ntp_refresh_usec = 100000;
	src_start(&s, "p-ntp");
	resolv_conf = NULL;
	ntp_refresh_usec = 0;
	CU_ASSERT_FATAL(wait_for(is_ready, &s, WAIT_MS));
	/* served at once; the names arrive from the resolver without a new version */
	w.s = &s;
	w.want[w.n++] = IP(10, 0, 0, 123);
	w.want[w.n++] = IP(192, 0, 2, 123);
	w.want[w.n++] = IP(127, 0, 0, 1); /* /etc/hosts */
	CU_ASSERT(wait_for(ntp_is, &w, WAIT_MS));
	CU_ASSERT_EQUAL(stats(&s).applied, 1);
	CU_ASSERT(dns_queries >= 2);
	/* the name moves: followed at the next refresh */
	dns_names[0].addr = IP(192, 0, 2, 124);
	w.want[1] = IP(192, 0, 2, 124);
	CU_ASSERT(wait_for(ntp_is, &w, WAIT_MS));
	/* a name that did not resolve is retried by the refresh too */
	dns_names[1].addr = IP(192, 0, 2, 200);
	w.want[1] = IP(192, 0, 2, 200);
	w.want[2] = IP(192, 0, 2, 124);
	w.want[w.n++] = IP(127, 0, 0, 1);
	CU_ASSERT(wait_for(ntp_is, &w, WAIT_MS));
	/* a new version with other names; one never answered: still pending when freed */
	EXPECT_APPLY(&s, patch_pool("p-ntp", NULL,
			     "{\"spec\":{\"ipv4Config\":{\"ntp\":[\"silent.example.test\","
			     "\"time1.example.test\"]}}}"));
	w.n = 0;
	w.want[w.n++] = IP(192, 0, 2, 124);
	CU_ASSERT(wait_for(ntp_is, &w, WAIT_MS));
	src_stop(&s);
	delete_pool("p-ntp");
	event_free(ev);
	close(fd);
	unlink(path);
	dns_names[0].addr = dns_names[1].addr = 0;
}

static void
test_bad_ref(void)
{
	struct dhcp_server *d = NULL;
	struct agent_kube *k = NULL;
	char err[AGENT_ERR_MAX];
	static const char *const refs[] = {"noslash", "/name", "ns/", ""};

	CU_ASSERT_FATAL(dhcp_server_new(&d) == 0);
	for (size_t i = 0; i < ELEMENTSOF(refs); i++) {
		struct agent_kube_opts o = {.ippool_ref = refs[i]};
		err[0] = '\0';
		CU_ASSERT_EQUAL(agent_kube_new(client, d, &o, &k, err, sizeof(err)), -EINVAL);
		CU_ASSERT(strstr(err, "NAMESPACE/NAME") != NULL);
	}
	dhcp_server_free(d);
}

static const struct test_case kube_tests[] = {
    {"initial sync: bindings, options, readiness", test_initial_sync},
    {"absent pool: not ready until created", test_absent_then_created},
    {"option changes reach the next reply", test_option_changes},
    {"no leaseTime: one-year leases, as upstream", test_lease_time_unset},
    {"bindings added, removed, moved", test_binding_changes},
    {"broadcast, multicast and zero MACs skipped, one line", test_group_macs_skipped},
    {"API server outage and restart: served from memory, resync", test_outage_and_restart},
    {"410 Gone: relist, table correct", test_relist_after_410},
    {"paused: not serving, table kept", test_paused},
    {"deleted: not serving, not ready", test_deleted},
    {"malformed version: counted, previous kept", test_malformed},
    {"malformed first version: not ready", test_malformed_first},
    {"same malformed version again: logged once", test_malformed_logged_once},
    {"NTP hostnames resolved in the background, followed", test_ntp_hostnames},
    {"bad --ippool-ref", test_bad_ref},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "agent-kube", .init = suite_init, .cleanup = suite_cleanup, .tests = kube_tests},
    {.name = NULL},
};

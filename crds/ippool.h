/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CRDS_IPPOOL_H
#define VMDHCP_CRDS_IPPOOL_H

/*
 * IPPool (network.harvesterhci.io/v1alpha1, crds/ippools.yaml) <-> struct ippool.
 * Field names and JSON shapes are those of harvester/vm-dhcp-controller; mtu, routes,
 * spec.ipv6Config and status.ipv6 are additive extensions. IPv4 addresses are host byte order
 * uint32_t (0 = unset for optional ones), IPv6 ones struct in6_addr (all zero = unset); MACs
 * are canonical strings (lower case, colons).
 *
 * Ownership: struct ippool owns everything it points to; ippool_free() releases it.
 * Decoders borrow their json_t input and keep no reference to it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <jansson.h>
#include <netinet/in.h>

#include "crds/conditions.h"
#include "lib/util.h"

#define IPPOOL_KIND "IPPool"
#define IPPOOL_PLURAL "ippools"

#define IPPOOL_DNS_MAX 3
#define IPPOOL_NTP_MAX 4
/* Served when leaseTime is unset or not above 0: one year, as upstream's agent serves it
 * (pkg/dhcp/dhcp.go). */
#define IPPOOL_LEASE_TIME_DEFAULT 31536000
#define IPPOOL_MTU_MIN 68
#define IPPOOL_MTU_MAX 65535
#define IPPOOL_ROUTES_MAX 64	 /* fits one option 121 with the router route */
#define IPPOOL_EXCLUDE_MAX 65536 /* the codec's limit; bounds decode work */
#define IPPOOL_DOMAIN_SEARCH_MAX 32
#define IPPOOL_NTP_LEN_MAX 253 /* a hostname */

/* Marks used in status.ipv4.allocated instead of a MAC. */
#define IPPOOL_ALLOCATED_EXCLUDED "EXCLUDED"
#define IPPOOL_ALLOCATED_RESERVED "RESERVED"

/*
 * spec.ipv6Config (additive; upstream has no IPv6). IPv6 addresses are struct in6_addr
 * (network byte order); the all-zero address means unset. A spec without ipv6Config has
 * has_ipv6 false and this struct all zero.
 */
#define IPPOOL6_DNS_MAX 3
#define IPPOOL6_PREFIX_MIN 8
#define IPPOOL6_PREFIX_MAX 128
#define IPPOOL6_RA_INTERVAL_DEFAULT 200
#define IPPOOL6_RA_INTERVAL_MIN 4	    /* RFC 4861 §6.2.1 MinRtrAdvInterval floor (3) + 1 */
#define IPPOOL6_RA_INTERVAL_MAX 1800	    /* RFC 4861 §6.2.1 MaxRtrAdvInterval ceiling */
#define IPPOOL6_RA_ROUTER_LIFETIME_MAX 9000 /* RFC 4861 §6.2.1 AdvDefaultLifetime ceiling */

/* spec.ipv6Config.routerAdvertisement, defaults applied. */
struct ippool_ipv6_ra {
	bool enabled;		  /* default false */
	uint32_t interval;	  /* seconds, 4..1800, default 200 */
	uint32_t router_lifetime; /* seconds, 0..9000, default 0 (not a default router) */
};

struct ippool_ipv6_config {
	struct in6_addr cidr_addr; /* as written (host bits may be set) */
	unsigned prefix;	   /* 8..128 */
	struct in6_addr server_ip; /* required; inside the CIDR */
	struct in6_addr start;	   /* pool.start <= pool.end, both inside the CIDR */
	struct in6_addr end;
	struct in6_addr *exclude; /* pool.exclude[], n_exclude items, each inside the CIDR */
	size_t n_exclude;
	struct in6_addr dns[IPPOOL6_DNS_MAX];
	size_t n_dns;
	char **domain_search;
	size_t n_domain_search;
	uint32_t preferred_lifetime; /* served (defaults applied) */
	uint32_t valid_lifetime;
	long long preferred_raw; /* as written */
	long long valid_raw;
	bool preferred_set; /* whether written (encode writes it back only then) */
	bool valid_set;
	bool rapid_commit;	  /* default false */
	struct ippool_ipv6_ra ra; /* defaults applied */
	bool ra_set; /* routerAdvertisement written (encode writes it back only then) */
};

/*
 * spec.ipv4Config.networkBoot (additive; crds/ippool-boot.c): strings are NULL when unset.
 * File names are 1..127 printable characters without spaces (the BOOTP file field is 128
 * bytes with its NUL); uefiHttp an http:// or https:// URL, ipxeScript a URL or file name and
 * tftpServerName at most 255 (option 67 / 66 carry them).
 */
#define IPPOOL_BOOT_FILE_MAX 127
#define IPPOOL_BOOT_URL_MAX 255

struct ippool_boot_files {
	char *bios;	  /* option 93 arch 0 */
	char *uefi;	  /* 6, 7, 9 */
	char *uefi_arm64; /* 11 */
	char *uefi_http;  /* 15, 16 (UEFI HTTP boot): a URL */
};

struct ippool_network_boot {
	uint32_t next_server; /* siaddr; 0 = unset */
	char *tftp_server_name;
	struct ippool_boot_files files;
	char *ipxe_script; /* answered instead to iPXE (option 77 "iPXE") */
};

struct ippool_route {
	uint32_t destination; /* network address (host bits must be zero) */
	unsigned prefix;      /* 0..32 */
	uint32_t gateway;
};

/*
 * spec.foreignServers (additive): what the agent does about another DHCP server on the
 * network (agent/guard.c, docs/foreign-servers.md). Defaults applied after decode; a spec
 * without it has has_foreign_servers false and policy Warn, probe_interval 300.
 */
#define IPPOOL_FOREIGN_WARN 0	    /* report only */
#define IPPOOL_FOREIGN_STAND_DOWN 1 /* also answer nothing while one is seen */
#define IPPOOL_PROBE_INTERVAL_DEFAULT 300
#define IPPOOL_PROBE_INTERVAL_MIN 30
#define IPPOOL_PROBE_INTERVAL_MAX 86400

struct ippool_foreign_servers {
	int policy;		 /* IPPOOL_FOREIGN_* */
	uint32_t probe_interval; /* seconds between probe DISCOVERs, 30..86400 */
};

struct ippool_spec {
	char network_name[CRD_NETWORK_NAME_MAX + 1]; /* canonical "namespace/name" */
	bool paused;
	/* ipv4Config */
	uint32_t cidr_addr; /* as written (host bits may be set, as net.ParseCIDR allows) */
	unsigned prefix;    /* 8..32 */
	uint32_t server_ip; /* required; inside the CIDR, not its network/broadcast address */
	uint32_t router;    /* 0 = unset; inside the CIDR */
	uint32_t start;	    /* pool.start <= pool.end, both inside the CIDR */
	uint32_t end;
	uint32_t *exclude; /* pool.exclude[], n_exclude items, each inside the CIDR */
	size_t n_exclude;
	uint32_t dns[IPPOOL_DNS_MAX];
	size_t n_dns;
	char *domain_name; /* NULL = unset */
	char **domain_search;
	size_t n_domain_search;
	char *ntp[IPPOOL_NTP_MAX]; /* IPv4 literals or hostnames, as written */
	size_t n_ntp;
	long long lease_time_raw; /* leaseTime as written (any integer) */
	bool lease_time_set;	  /* whether leaseTime was written (encode writes it back only
				     then) */
	uint32_t lease_time;	  /* seconds served: ippool_lease_time(lease_time_set, raw) */
	uint32_t mtu;		  /* 0 = unset, else 68..65535 */
	struct ippool_route *routes;
	size_t n_routes;
	bool has_boot; /* spec.ipv4Config.networkBoot present */
	struct ippool_network_boot boot;
	bool has_ipv6; /* spec.ipv6Config present */
	struct ippool_ipv6_config ipv6;
	bool has_foreign_servers; /* spec.foreignServers present */
	struct ippool_foreign_servers foreign_servers;
};

enum ippool_alloc_kind {
	IPPOOL_ALLOC_MAC = 0,
	IPPOOL_ALLOC_EXCLUDED,
	IPPOOL_ALLOC_RESERVED,
};

/* One status.ipv4.allocated entry: 12 bytes, so 65 536 entries take 768 KiB. */
struct ippool_alloc {
	uint32_t addr;
	uint8_t kind;	      /* enum ippool_alloc_kind */
	uint8_t mac[MAC_LEN]; /* when kind == IPPOOL_ALLOC_MAC */
};

/* One status.ipv6.allocated entry. */
struct ippool_alloc6 {
	struct in6_addr addr;
	uint8_t kind;	      /* enum ippool_alloc_kind */
	uint8_t mac[MAC_LEN]; /* when kind == IPPOOL_ALLOC_MAC */
};

struct ippool_agent_pod_ref {
	char *namespace;
	char *name;
	char *image;
	char *uid;
};

struct ippool_status {
	bool has_ipv4;			/* status.ipv4 present */
	struct ippool_alloc *allocated; /* sorted by addr, unique; n_allocated items */
	size_t n_allocated;
	long long used;
	long long available;
	bool has_ipv6_status;		  /* status.ipv6 present */
	struct ippool_alloc6 *allocated6; /* sorted by addr, unique; n_allocated6 items */
	size_t n_allocated6;
	long long used6;
	long long available6; /* saturated at INT64_MAX (a /64 cannot be counted out) */
	bool has_agent_pod_ref;
	struct ippool_agent_pod_ref agent_pod_ref;
	time_t last_update; /* 0 = unset */
	struct crd_conditions conditions;
};

struct ippool {
	struct crd_meta meta;
	struct ippool_spec spec;
	struct ippool_status status;
};

/*
 * Decode a whole IPPool object (borrowed). Validates apiVersion/kind when present, the
 * spec (required fields, formats, limits, start <= end inside the CIDR, …; ipv6Config's the
 * same, plus serverIP neither the Subnet-Router anycast address nor multicast, preferred <=
 * valid lifetime, a router lifetime of 0 or at least the RA interval) and the status
 * (allocated keys IPv4, and IPv6 in any textual form, one address once; values
 * MAC/EXCLUDED/RESERVED). Unknown fields in spec are refused
 * (a typo must not silently drop a setting); unknown fields elsewhere are ignored.
 * Returns 0 and *ret (new object), or -EINVAL with err filled (field path first), -ENOMEM.
 */
int ippool_decode(const json_t *obj, struct ippool **ret, struct crd_error *err);

/* Only the spec object (borrowed) into *spec (zeroed first; clear with ippool_spec_clear). */
int ippool_spec_decode(const json_t *spec_json, struct ippool_spec *spec, struct crd_error *err);
/* The lease time served for a leaseTime as written (set: present): unset or <= 0 is
 * IPPOOL_LEASE_TIME_DEFAULT (upstream pkg/dhcp/dhcp.go), above UINT32_MAX is UINT32_MAX. */
uint32_t ippool_lease_time(bool set, long long raw);
/* Only the status object (borrowed, may be NULL). */
int ippool_status_decode(
    const json_t *status_json, struct ippool_status *status, struct crd_error *err);

/* New references. The whole object (apiVersion, kind, metadata, spec, status). */
json_t *ippool_encode(const struct ippool *pool);
json_t *ippool_spec_encode(const struct ippool_spec *spec);
/* The status object, for a PUT/PATCH of the status subresource. */
json_t *ippool_status_encode(const struct ippool_status *status);

/*
 * Whether writing b over a would change the status: every field compared but the times of
 * the last write (lastUpdate, the conditions' lastUpdateTime and lastTransitionTime);
 * conditions matched by type in any order; a NULL string equals "".
 */
bool ippool_status_equal(const struct ippool_status *a, const struct ippool_status *b);

void ippool_spec_clear(struct ippool_spec *spec);
void ippool_status_clear(struct ippool_status *status);
/* Frees the object; accepts NULL; returns NULL. */
struct ippool *ippool_free(struct ippool *pool);

/*
 * Replace status->allocated with a copy of allocs[0..n) (borrowed), sorted by address.
 * Returns 0, -EEXIST when an address appears twice, -ENOMEM.
 */
int ippool_status_set_allocated(
    struct ippool_status *status, const struct ippool_alloc *allocs, size_t n);

/* Binary search in status->allocated; borrowed pointer or NULL. */
const struct ippool_alloc *ippool_status_find(const struct ippool_status *status, uint32_t addr);

/* As ippool_status_set_allocated, for status->allocated6. */
int ippool_status_set_allocated6(
    struct ippool_status *status, const struct ippool_alloc6 *allocs, size_t n);
/* Binary search in status->allocated6; borrowed pointer or NULL. */
const struct ippool_alloc6 *ippool_status_find6(
    const struct ippool_status *status, const struct in6_addr *addr);

/*
 * One IPPool's JSON text (a GET answer, a list item, a watch event's object) into *ret, as
 * json_loadb + ippool_decode would, without the jansson trees of status.ipv4.allocated and
 * status.ipv6.allocated: those maps are parsed straight into the sorted entries of
 * status.allocated and status.allocated6 (one per address: the last of duplicate keys, as
 * jansson keeps). A map that is not plainly written (a key or value with a backslash escape, a
 * value that is not a string, a key that is not an IPv4 address / not an IPv6 address in RFC
 * 5952 form, a value that is neither a MAC nor EXCLUDED/RESERVED, ...) goes through jansson
 * with the rest, so the result and the error text are always those of ippool_decode. A text that is
 * not JSON gives -EBADMSG and "not JSON: <jansson's error>". -ENOMEM.
 */
int ippool_decode_text(const char *text, size_t len, struct ippool **ret, struct crd_error *err);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_SOURCE_FILE_INTERNAL_H
#define VMDHCP_AGENT_SOURCE_FILE_INTERNAL_H

/*
 * What local mode's YAML stream reader (source-file.c) and its pool checks
 * (source-file-pool.c) share.
 */

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/source.h"

struct ippool;

struct loader {
	const char *name; /* file name for messages */
	char *err;
	size_t errlen;
	struct agent_config *cfg;
};

/* "NAME: document N (line L): MSG" into ld->err; returns -EINVAL. doc is 0-based. */
int sf_doc_error(struct loader *ld, size_t doc, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * A NIC seen in a VMNetCfg document, kept compactly until the served pool is known (a pool
 * document may come after the VMNetCfgs). net is hash64 of the canonical network name: the
 * NICs of the pool's network are those with its hash (64 bits: no collision in practice).
 */
struct nicrec {
	uint64_t net;
	struct in6_addr ip6; /* ipv6Address; zero: none */
	uint32_t ip;	     /* ipAddress; 0: none */
	uint32_t hostname;   /* offset in cfg->names */
	uint32_t doc;	     /* 0-based document index */
	uint16_t nic;	     /* index in spec.networkConfigs */
	uint8_t mac[6];
};

/* The hash of a canonical network name, nicrec.net. */
uint64_t sf_net_hash(const char *canonical);

struct stream {
	struct loader *ld;
	const char *ippool_ref;
	struct nicrec *nics;
	size_t n_nics, cap_nics;
	unsigned *lines; /* first line of each document */
	size_t n_docs, cap_docs;
	size_t n_pools;
	struct ippool *pool; /* the served one */
	size_t pool_doc;
};

/* Stores a hostname (truncated to an option 12 label of 63 bytes); UINT32_MAX on failure. */
uint32_t sf_names_add(struct agent_config *c, const char *s);
/*
 * Once every document is in: the served pool converted (NTP names resolved now), its NICs
 * become bindings, checked against the pool and for duplicates. 0 with ld->cfg complete, or
 * negative errno with ld->err filled.
 */
int sf_finish(struct stream *st);

#endif

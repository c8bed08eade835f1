/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_ADMISSION_H
#define VMDHCP_CONTROLLER_ADMISSION_H

/*
 * The admission webhook of the controller program, assembled: the HTTPS server
 * (webhook.c), its certificates (webcert.c) and the rules (admit.c) over a read-only view
 * of the controller's informer caches (IPPools, VMNetCfgs, NADs, Nodes). Every replica
 * serves, leader or not: the informers run in every replica (warm standby).
 *
 * The service CIDR the rules compare pools with: --service-cidr when given; else the
 * `--service-cidr` argument in a Node's rke2.io/node-args or k3s.io/node-args annotation
 * (admission-cidr.h; what RKE2, Harvester's distribution, and k3s record; upstream read the same
 * annotation before it settled on a flag, pkg/util/network.go GetServiceCIDRFromNode); else
 * upstream's default 10.53.0.0/16 (cmd/webhook/root.go). Nothing else the API exposes tells the
 * range reliably, so we do not guess from the `kubernetes` Service's address.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ctrl;
struct event_base;
struct kube_client;
struct metrics;
struct ctrl_admission;

#define ADMISSION_SERVICE_CIDR_DEFAULT "10.53.0.0/16"

struct ctrl_admission_opts {
	const char *listen;	  /* "HOST:PORT" */
	const char *namespace;	  /* the Secret's */
	const char *secret;	  /* the Secret holding the CA and serving pair */
	const char *service;	  /* the Service: certificate names (NULL: none) */
	const char *cert_sans;	  /* "IP:a,DNS:b" (NULL: none) */
	const char *mutating;	  /* comma-separated configuration names (NULL: none) */
	const char *validating;	  /* likewise */
	uint64_t cert_validity_s; /* 0: webcert's default */
	const char *service_cidr; /* NULL: from the Nodes, else the default */
};

int ctrl_admission_new(struct ctrl *c, struct event_base *base, struct kube_client *client,
    struct metrics *metrics, const struct ctrl_admission_opts *opts, struct ctrl_admission **ret);
struct ctrl_admission *ctrl_admission_free(struct ctrl_admission *a);
/* Serving with a certificate: true (a remark in reason when the caBundles lag); else false
 * and why. */
bool ctrl_admission_ready(struct ctrl_admission *a, char *reason, size_t len);
/* Shutdown begins (SIGTERM): reviews are still answered for the drain, each reply asking its
 * client to close the connection (webhook_drain), and the webhook's Secret is not written any
 * more (webcert_stop). */
void ctrl_admission_stopping(struct ctrl_admission *a);
/* Shutdown: stop accepting new connections. */
void ctrl_admission_stop_accepting(struct ctrl_admission *a);

#endif

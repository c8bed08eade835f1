/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_LIFECYCLE_H
#define VMDHCP_CONTROLLER_LIFECYCLE_H

/* The controller's life cycle (lifecycle.c): made, allowed to reconcile, freed. */

#include "controller/ctrl.h"

struct event_base;
struct kube_client;
struct metrics;

/*
 * New controller context on base with client (borrowed) and metrics (borrowed, may be NULL;
 * one ctrl per registry, which must not be rendered once the ctrl is freed: its per-pool
 * families read the ctrl). Creates and starts the informers. Returns 0 and *ret, or
 * negative errno.
 */
int ctrl_new(struct event_base *base, struct kube_client *client, struct metrics *metrics,
    const struct ctrl_opts *opts, struct ctrl **ret);
/* Writes still in flight are cancelled: their answers never come. Before kube_client_free. */
struct ctrl *ctrl_free(struct ctrl *c);

/* Allow reconciling (leader elected, or no election): controllers start once synced. */
void ctrl_lead(struct ctrl *c);

#endif

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/admit-nad-route.c - an IPPool on a network that gets its addresses elsewhere.
 *
 * Harvester's network controller (harvester/network-controller-harvester, pkg/utils/nad.go
 * Layer3NetworkConf) writes the annotation network.harvesterhci.io/route on a VM network's
 * NetworkAttachmentDefinition: {"mode":"auto"|"manual","serverIPAddr":..,"cidr":..,
 * "gateway":..,"connectivity":..}. In mode "auto" (the UI's "Auto (DHCP)") Harvester learns
 * the network's CIDR and gateway from a DHCP server already on it (serverIPAddr, when given,
 * is that server's address); in mode "manual" the user typed them. An IPPool on an "auto"
 * network puts a second DHCP server there: both answer, the VMs take the faster. That is
 * allowed (the user may be moving the network to the pool) with a warning, unless the
 * server the annotation names is the pool's own serverIP.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "controller/admit-internal.h"

int
admit_nad_route_parse(const char *value, struct admit_nad_route *ret)
{
	json_t *j = value != NULL ? json_loads(value, JSON_REJECT_DUPLICATES, NULL) : NULL;
	const char *mode, *server;

	memset(ret, 0, sizeof(*ret));
	if (!json_is_object(j)) {
		json_decref(j);
		return -EINVAL;
	}
	mode = json_string_value(json_object_get(j, "mode"));
	server = json_string_value(json_object_get(j, "serverIPAddr"));
	ret->auto_mode = mode != NULL && strcmp(mode, "auto") == 0;
	if (server != NULL)
		snprintf(ret->server, sizeof(ret->server), "%s", server);
	json_decref(j);
	return 0;
}

void
admit_warn_nad_route(struct admit_ctx *c, const char *ns, const char *name, const uint32_t *server)
{
	const char *value = NULL;
	struct admit_nad_route rt;
	char at[ADMIT_ROUTE_SERVER_MAX + 16] = "";
	uint32_t a;

	if (c->view->nad_route == NULL ||
	    c->view->nad_route(c->view->userdata, ns, name, &value) < 0 || value == NULL)
		return;
	if (admit_nad_route_parse(value, &rt) < 0 || !rt.auto_mode)
		return;
	if (rt.server[0] != '\0') {
		if (server != NULL && admit_parse_ipv4(rt.server, &a, NULL, 0) == 0 && a == *server)
			return; /* the server Harvester learns from is this pool's agent */
		snprintf(at, sizeof(at), " (serverIPAddr %s)", rt.server);
	}
	admit_warn(c,
	    "NetworkAttachmentDefinition %s/%s: route mode auto, so Harvester learns its route "
	    "from a DHCP server already on the network%s; with this pool's agent two DHCP "
	    "servers would answer the VMs",
	    ns, name, at);
}

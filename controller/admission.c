/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission webhook assembled (admission.h): the view of the caches the rules read, the
 * service CIDR they compare with, the certificates handed to the server, readiness.
 */
#include "controller/admission.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "controller/admit.h"
#include "controller/ctrl-internal.h"
#include "controller/webcert.h"
#include "controller/webhook.h"
#include "lib/log.h"
#include "lib/util.h"

#define LIST_MAX 16 /* names in one comma-separated list */

struct name_list {
	char *buf;
	const char *v[LIST_MAX];
	size_t n;
};

struct ctrl_admission {
	struct ctrl *c;
	struct webhook *server;
	struct webcert *certs;
	struct name_list sans, mutating, validating;
	bool cidr_given;
	uint32_t cidr_net;
	unsigned cidr_prefix;
	char cidr_seen[64]; /* the last one used, to log changes once */
};

/* --- comma-separated lists --------------------------------------------------------------- */

static int
name_list_parse(const char *s, struct name_list *l)
{
	char *save = NULL, *tok;

	memset(l, 0, sizeof(*l));
	if (s == NULL || s[0] == '\0')
		return 0;
	if ((l->buf = strdup(s)) == NULL)
		return -ENOMEM;
	for (tok = strtok_r(l->buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (*tok == '\0')
			continue;
		if (l->n == LIST_MAX)
			return -E2BIG;
		l->v[l->n++] = tok;
	}
	return 0;
}

/* --- the view over the informer caches -------------------------------------------------- */

static int
view_nad(void *ud, const char *ns, const char *name, const char **pool_ns, const char **pool_name)
{
	struct ctrl *c = ud;
	char key[KIND_REF_MAX];
	const struct nad_item *it;

	if (c->inf_nad == NULL || kube_key_make(ns, name, key, sizeof(key)) < 0)
		return -ENOENT;
	it = kube_store_get(kube_informer_store(c->inf_nad), key);
	if (it == NULL)
		return -ENOENT;
	*pool_ns = it->pool_ns;
	*pool_name = it->pool_name;
	return 0;
}

static int
view_nad_route(void *ud, const char *ns, const char *name, const char **route)
{
	struct ctrl *c = ud;
	char key[KIND_REF_MAX];
	const struct nad_item *it;

	if (c->inf_nad == NULL || kube_key_make(ns, name, key, sizeof(key)) < 0)
		return -ENOENT;
	it = kube_store_get(kube_informer_store(c->inf_nad), key);
	if (it == NULL)
		return -ENOENT;
	*route = it->route;
	return 0;
}

static const struct ippool *
view_pool(void *ud, const char *ns, const char *name)
{
	struct ctrl *c = ud;
	char key[KIND_REF_MAX];
	const struct pool_item *it;

	if (c->inf_pool == NULL || kube_key_make(ns, name, key, sizeof(key)) < 0)
		return NULL;
	it = kube_store_get(kube_informer_store(c->inf_pool), key);
	return it != NULL ? it->pool : NULL;
}

struct pool_visit {
	admit_pool_visit_fn fn;
	admit_cfg_visit_fn cfg_fn;
	void *ctx;
};

static int
pool_visit(void *userdata, const char *key, const void *item)
{
	const struct pool_visit *v = userdata;

	return v->fn(v->ctx, key, ((const struct pool_item *)item)->pool);
}

static int
view_each_pool_of_network(void *ud, const char *network, admit_pool_visit_fn fn, void *ctx)
{
	struct ctrl *c = ud;
	struct pool_visit v = {.fn = fn, .ctx = ctx};

	if (c->inf_pool == NULL)
		return 0;
	return kube_store_by_index(
	    kube_informer_store(c->inf_pool), "network", network, pool_visit, &v);
}

static int
cfg_visit(void *userdata, const char *key, const void *item)
{
	const struct pool_visit *v = userdata;

	return v->cfg_fn(v->ctx, key, ((const struct cfg_item *)item)->cfg);
}

static int
view_each_cfg_of_network(void *ud, const char *network, admit_cfg_visit_fn fn, void *ctx)
{
	struct ctrl *c = ud;
	struct pool_visit v = {.cfg_fn = fn, .ctx = ctx};

	if (c->inf_cfg == NULL)
		return 0;
	return kube_store_by_index(
	    kube_informer_store(c->inf_cfg), "network", network, cfg_visit, &v);
}

/* --- the service CIDR ------------------------------------------------------------------- */

struct cidr_find {
	const char *cidr;
};

static int
node_cidr_visit(void *userdata, const char *key, const void *item)
{
	const struct node_item *it = item;
	struct cidr_find *f = userdata;

	if (it->service_cidr == NULL)
		return 0;
	f->cidr = it->service_cidr;
	return 1;
}

static void
service_cidr(struct ctrl_admission *a, struct admit_opts *o)
{
	struct cidr_find f = {NULL};
	const char *use = ADMISSION_SERVICE_CIDR_DEFAULT, *from = "upstream's default";

	if (a->cidr_given) {
		o->service_net = a->cidr_net;
		o->service_prefix = a->cidr_prefix;
		return;
	}
	if (a->c->inf_node != NULL)
		kube_store_foreach(kube_informer_store(a->c->inf_node), node_cidr_visit, &f);
	if (f.cidr != NULL && ipv4_cidr_parse(f.cidr, &o->service_net, &o->service_prefix) == 0)
		use = f.cidr, from = "a Node's node-args annotation";
	else
		ipv4_cidr_parse(use, &o->service_net, &o->service_prefix);
	if (strcmp(a->cidr_seen, use) != 0) {
		snprintf(a->cidr_seen, sizeof(a->cidr_seen), "%s", use);
		log_info("admission: service CIDR %s (%s; --service-cidr sets it)", use, from);
	}
}

/* --- callbacks -------------------------------------------------------------------------- */

static void
on_admit(void *userdata, const struct admit_request *rq, struct admit_result *res)
{
	struct ctrl_admission *a = userdata;
	const struct admit_view view = {
	    .userdata = a->c,
	    .nad = view_nad,
	    .pool = view_pool,
	    .each_pool_of_network = view_each_pool_of_network,
	    .each_cfg_of_network = view_each_cfg_of_network,
	    .nad_route = view_nad_route,
	};
	struct admit_opts o = {.immutable = true};

	if (!ctrl_synced(a->c)) {
		/* the rules read the caches: an empty cache would refuse what is valid */
		memset(res, 0, sizeof(*res));
		res->code = 503;
		snprintf(res->message, sizeof(res->message),
		    "vm-dhcp admission is starting: its caches are not synced yet, retry");
		return;
	}
	service_cidr(a, &o);
	o.ippool_budget = ctrl_ippool_budget(a->c);
	admit_review(&view, &o, rq, res);
}

static void
on_cert(void *userdata, const char *cert_pem, const char *key_pem)
{
	struct ctrl_admission *a = userdata;
	int r = webhook_set_cert(a->server, cert_pem, key_pem);

	if (r < 0)
		log_error(
		    "admission: the certificate from the Secret does not load: %s", strerror(-r));
	else
		log_info("admission: serving with the certificate from the Secret");
}

/* --- life cycle ------------------------------------------------------------------------- */

int
ctrl_admission_new(struct ctrl *c, struct event_base *base, struct kube_client *client,
    struct metrics *metrics, const struct ctrl_admission_opts *opts, struct ctrl_admission **ret)
{
	struct ctrl_admission *a = calloc(1, sizeof(*a));
	struct webhook_opts wo = {0};
	struct webcert_opts co = {0};
	int r;

	if (a == NULL)
		return -ENOMEM;
	a->c = c;
	if (opts->service_cidr != NULL && opts->service_cidr[0] != '\0') {
		if (ipv4_cidr_parse(opts->service_cidr, &a->cidr_net, &a->cidr_prefix) < 0) {
			ctrl_admission_free(a);
			return -EINVAL;
		}
		a->cidr_given = true;
		log_info("admission: service CIDR %s (--service-cidr)", opts->service_cidr);
	}
	if ((r = name_list_parse(opts->cert_sans, &a->sans)) < 0 ||
	    (r = name_list_parse(opts->mutating, &a->mutating)) < 0 ||
	    (r = name_list_parse(opts->validating, &a->validating)) < 0)
		goto fail;
	wo.listen = opts->listen;
	wo.metrics = metrics;
	wo.admit = on_admit;
	wo.userdata = a;
	if ((r = webhook_new(base, &wo, &a->server)) < 0)
		goto fail;
	co.ns = opts->namespace;
	co.secret = opts->secret;
	co.service = opts->service;
	co.extra_sans = a->sans.v;
	co.n_extra_sans = a->sans.n;
	co.mutating = a->mutating.v;
	co.n_mutating = a->mutating.n;
	co.validating = a->validating.v;
	co.n_validating = a->validating.n;
	co.validity_s = opts->cert_validity_s;
	co.metrics = metrics;
	co.on_cert = on_cert;
	co.userdata = a;
	if ((r = webcert_new(base, client, &co, &a->certs)) < 0 ||
	    (r = webcert_start(a->certs)) < 0)
		goto fail;
	c->admission = a;
	*ret = a;
	return 0;
fail:
	ctrl_admission_free(a);
	return r;
}

struct ctrl_admission *
ctrl_admission_free(struct ctrl_admission *a)
{
	if (a == NULL)
		return NULL;
	if (a->c != NULL && a->c->admission == a)
		a->c->admission = NULL;
	webcert_free(a->certs);
	webhook_free(a->server);
	free(a->sans.buf);
	free(a->mutating.buf);
	free(a->validating.buf);
	free(a);
	return NULL;
}

bool
ctrl_admission_ready(struct ctrl_admission *a, char *reason, size_t len)
{
	char why[256] = "";

	if (!webhook_ready(a->server, reason, len))
		return false;
	if (!webcert_ready(a->certs, why, sizeof(why)))
		snprintf(reason, len, "admission: %s", why);
	return true;
}

void
ctrl_admission_stopping(struct ctrl_admission *a)
{
	if (a == NULL)
		return;
	webcert_stop(a->certs);
	webhook_drain(a->server);
}

void
ctrl_admission_stop_accepting(struct ctrl_admission *a)
{
	if (a != NULL)
		webhook_stop_accepting(a->server);
}

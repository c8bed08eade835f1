/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vm-dhcp-controller --uninstall (see uninstall.h): wait until no controller replica can act,
 * delete the agent Deployments, remove the controller's finalizers. Start-up style: each call
 * is started on the asynchronous client and waited for with kube_run_until.
 *
 * Every API call names its resource directly (&ctrl_res_ippools ...), also behind the
 * per-kind table below, so scripts/lint-charts.sh can derive the hook's RBAC from this file.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "controller/ctrl.h"
#include "controller/placement.h"
#include "controller/uninstall.h"
#include "crds/ippool.h"
#include "kube/kube.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/util.h"

#define DEFAULT_TIMEOUT_USEC (120 * USEC_PER_SEC)
/* kube/leader.c retries every 2 s: twice that and a second of slack */
#define DEFAULT_SETTLE_USEC (5 * USEC_PER_SEC)
#define DEFAULT_POLL_USEC USEC_PER_SEC
/* The client reports every call within its request timeout (30 s); this only guards that. */
#define CALL_GUARD_MS (5 * 60 * 1000L)
#define AGENT_SELECTOR PLACEMENT_LABEL_APP "=" PLACEMENT_LABEL_APP_VALUE
#define PAGE 100
/* IPPools may carry 65 000 status.ipv4.allocated entries each: small pages */
#define POOL_PAGE 10
#define MAX_CONFLICTS 5
#define MAX_RELISTS 3

struct uninstall {
	struct kube_client *client;
	struct event_base *base;
	const char *ns, *lease_ns, *lease;
	uint64_t timeout, settle, poll;
	uint64_t deadline;
	char *err;
	size_t err_len;
	struct kube_sync call;		    /* the one call in flight and its answer */
	unsigned n_agents, n_pools, n_cfgs; /* changed */
	unsigned n_failed;		    /* objects left as they were after an error */
	char first_failure[512];
};

/* --- one call at a time ---------------------------------------------------------------- */

static void
pause_usec(struct uninstall *u, uint64_t usec)
{
	bool never = false;

	(void)kube_run_until(u->base, &never, (long)(usec / USEC_PER_MSEC));
}

/* Fills u->err; returns r. */
static int __attribute__((format(printf, 3, 4)))
fail(struct uninstall *u, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(u->err, u->err_len, fmt, ap);
	va_end(ap);
	return r;
}

/* An object left as it was: logged now, the run fails at the end. */
static void __attribute__((format(printf, 2, 3)))
failed_object(struct uninstall *u, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log_error("%s", line);
	if (u->n_failed++ == 0)
		snprintf(u->first_failure, sizeof(u->first_failure), "%s", line);
}

/* --- 1. the Lease ------------------------------------------------------------------------- */

struct lease_view {
	bool exists;
	char rv[64];
	char holder[256];
	char renew[48];
	uint64_t duration; /* usec; 0 when the Lease gives none */
};

/* 0 and *v (exists false for 404), or negative errno (u->call.message). */
static int
lease_read(struct uninstall *u, struct lease_view *v)
{
	const json_t *spec;
	json_int_t secs;
	int r;

	memset(v, 0, sizeof(*v));
	kube_sync_reset(&u->call);
	r = kube_sync_wait(u->base, &u->call, CALL_GUARD_MS,
	    kube_get(u->client, &kube_res_leases, u->lease_ns, u->lease, kube_sync_done, &u->call,
		NULL));
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	spec = json_object_get(u->call.object, "spec");
	secs = json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
	v->exists = true;
	snprintf(v->rv, sizeof(v->rv), "%s", kube_obj_resource_version(u->call.object) ?: "");
	snprintf(v->holder, sizeof(v->holder), "%s",
	    json_string_value(json_object_get(spec, "holderIdentity")) ?: "");
	snprintf(v->renew, sizeof(v->renew), "%s",
	    json_string_value(json_object_get(spec, "renewTime")) ?: "never");
	v->duration = secs > 0 ? (uint64_t)secs * USEC_PER_SEC : 0;
	return 0;
}

static bool
lease_same(const struct lease_view *a, const struct lease_view *b)
{
	return a->exists == b->exists && strcmp(a->rv, b->rv) == 0;
}

/* No holder: nobody acts (a replica still running may take it, hence the settle period). */
static bool
lease_free(const struct lease_view *v)
{
	return !v->exists || v->holder[0] == '\0';
}

static void
lease_describe(const struct uninstall *u, const struct lease_view *v, char *out, size_t len)
{
	if (!v->exists)
		snprintf(out, len, "no Lease %s/%s", u->lease_ns, u->lease);
	else if (v->holder[0] == '\0')
		snprintf(out, len, "the Lease %s/%s is released", u->lease_ns, u->lease);
	else
		snprintf(out, len,
		    "the Lease %s/%s is held by %s (renewTime %s, leaseDurationSeconds %llu)",
		    u->lease_ns, u->lease, v->holder, v->renew,
		    (unsigned long long)(v->duration / USEC_PER_SEC));
}

/*
 * Step 1: returns 0 and the Lease as it was when judged free (*ret), -ETIMEDOUT once a live
 * Lease outlasts the deadline, or another negative errno (u->err filled).
 */
static int
wait_stopped(struct uninstall *u, struct lease_view *ret)
{
	struct lease_view seen = {0}, v;
	bool have = false;
	uint64_t seen_at = 0, now, need;
	char what[512], last_error[512] = "";
	int r;

	for (;;) {
		r = lease_read(u, &v);
		now = clock_now_usec();
		if (r == -EACCES || r == -EBADMSG || r == -EPROTO || r == -ENOMEM)
			return fail(u, r, "cannot read the Lease %s/%s: %s", u->lease_ns, u->lease,
			    u->call.message);
		if (r < 0) {
			/* transient (server, network): a later read with the same resourceVersion
			 * still proves that nothing was written in between */
			snprintf(last_error, sizeof(last_error), "%s", u->call.message);
			log_warn("cannot read the Lease %s/%s: %s (retrying)", u->lease_ns,
			    u->lease, u->call.message);
		} else {
			last_error[0] = '\0';
			if (!have || !lease_same(&v, &seen)) {
				bool news = !have || v.exists != seen.exists ||
					    strcmp(v.holder, seen.holder) != 0;

				lease_describe(u, &v, what, sizeof(what));
				if (news && lease_free(&v))
					log_info("%s: waiting %llu s for a controller that may "
						 "still take it",
					    what, (unsigned long long)(u->settle / USEC_PER_SEC));
				else if (news)
					log_info(
					    "%s: waiting until it is released or expires", what);
				else
					log_debug("%s", what);
				seen = v;
				seen_at = now;
				have = true;
			}
			need = lease_free(&seen) ? u->settle : MAX(u->settle, seen.duration);
			if (now - seen_at >= need) {
				*ret = seen;
				return 0;
			}
		}
		if (now >= u->deadline + (r == 0 && lease_free(&seen) ? u->settle : 0)) {
			if (last_error[0] != '\0')
				return fail(u, -ETIMEDOUT,
				    "timed out after %llu s: cannot read the Lease %s/%s: %s",
				    (unsigned long long)(u->timeout / USEC_PER_SEC), u->lease_ns,
				    u->lease, last_error);
			lease_describe(u, &seen, what, sizeof(what));
			return fail(u, -ETIMEDOUT,
			    "timed out after %llu s waiting for the controller to stop: %s; %s",
			    (unsigned long long)(u->timeout / USEC_PER_SEC), what,
			    u->n_agents + u->n_pools + u->n_cfgs == 0 ? "nothing was changed"
								      : "cleanup incomplete");
		}
		pause_usec(u, u->poll);
	}
}

/* --- 2. the agent Deployments ------------------------------------------------------------- */

static char *
continue_token(const json_t *list)
{
	const char *t =
	    json_string_value(json_object_get(json_object_get(list, "metadata"), "continue"));

	return t != NULL && t[0] != '\0' ? strdup(t) : NULL;
}

static int
delete_agents(struct uninstall *u)
{
	char *cont = NULL;
	json_t *page, *item;
	size_t i;
	int r;

	do {
		struct kube_list_opts lo = {
		    .label_selector = AGENT_SELECTOR, .limit = PAGE, .continue_token = cont};

		kube_sync_reset(&u->call);
		r = kube_sync_wait(u->base, &u->call, CALL_GUARD_MS,
		    kube_list(u->client, &ctrl_res_deployments, u->ns, &lo, kube_sync_done,
			&u->call, NULL));
		free(cont);
		cont = NULL;
		if (r < 0)
			return fail(u, r, "cannot list the agent Deployments of %s (%s): %s", u->ns,
			    AGENT_SELECTOR, u->call.message);
		page = kube_sync_take(&u->call);
		cont = continue_token(page);
		json_array_foreach(json_object_get(page, "items"), i, item)
		{
			const char *name = kube_obj_name(item);
			struct kube_delete_opts d = {.propagation = "Background"};

			if (name == NULL)
				continue;
			kube_sync_reset(&u->call);
			r = kube_sync_wait(u->base, &u->call, CALL_GUARD_MS,
			    kube_delete(u->client, &ctrl_res_deployments, u->ns, name, &d,
				kube_sync_done, &u->call, NULL));
			if (r == -ENOENT)
				continue; /* gone meanwhile */
			if (r < 0) {
				failed_object(u, "cannot delete the agent Deployment %s/%s: %s",
				    u->ns, name, u->call.message);
				continue;
			}
			log_info("deleted agent Deployment %s/%s", u->ns, name);
			u->n_agents++;
		}
		json_decref(page);
	} while (cont != NULL);
	return 0;
}

/* --- 3. the finalizers -------------------------------------------------------------------- */

/* The calls on one kind, each naming its resource (see the top of the file). */
struct fin_kind {
	const char *kind;
	const char *finalizer;
	unsigned page;
	int (*list)(struct uninstall *u, const struct kube_list_opts *lo);
	int (*get)(struct uninstall *u, const char *ns, const char *name);
	int (*patch)(struct uninstall *u, const char *ns, const char *name, const json_t *patch);
	bool metadata_only; /* list pages: items' metadata only (IPPools: no allocated map) */
	size_t count;	    /* offset of the counter in struct uninstall */
};

static int
pool_list(struct uninstall *u, const struct kube_list_opts *lo)
{
	return kube_list(u->client, &ctrl_res_ippools, NULL, lo, kube_sync_done, &u->call, NULL);
}

static int
pool_get(struct uninstall *u, const char *ns, const char *name)
{
	return kube_get(u->client, &ctrl_res_ippools, ns, name, kube_sync_done, &u->call, NULL);
}

static int
pool_patch(struct uninstall *u, const char *ns, const char *name, const json_t *patch)
{
	return kube_patch(u->client, &ctrl_res_ippools, ns, name, KUBE_PATCH_MERGE, patch, NULL,
	    kube_sync_done, &u->call, NULL);
}

static int
cfg_list(struct uninstall *u, const struct kube_list_opts *lo)
{
	return kube_list(u->client, &ctrl_res_vmnetcfgs, NULL, lo, kube_sync_done, &u->call, NULL);
}

static int
cfg_get(struct uninstall *u, const char *ns, const char *name)
{
	return kube_get(u->client, &ctrl_res_vmnetcfgs, ns, name, kube_sync_done, &u->call, NULL);
}

static int
cfg_patch(struct uninstall *u, const char *ns, const char *name, const json_t *patch)
{
	return kube_patch(u->client, &ctrl_res_vmnetcfgs, ns, name, KUBE_PATCH_MERGE, patch, NULL,
	    kube_sync_done, &u->call, NULL);
}

static const struct fin_kind fin_kinds[] = {
    {"IPPool", CTRL_FINALIZER_IPPOOL, POOL_PAGE, pool_list, pool_get, pool_patch, true,
	offsetof(struct uninstall, n_pools)},
    {"VirtualMachineNetworkConfig", CTRL_FINALIZER_VMNETCFG, PAGE, cfg_list, cfg_get, cfg_patch,
	false, offsetof(struct uninstall, n_cfgs)},
};

/*
 * {"metadata":{"resourceVersion":RV,"finalizers":[the object's, without fin]}}: the
 * resourceVersion makes it a precondition (409 Conflict when the object changed since it was
 * read), so a finalizer added meanwhile is never dropped. New reference; NULL without a
 * resourceVersion or memory.
 */
static json_t *
finalizer_patch(const json_t *obj, const char *fin)
{
	const char *rv = kube_obj_resource_version(obj);
	json_t *list, *patch;

	list = json_deep_copy(json_object_get(json_object_get(obj, "metadata"), "finalizers"));
	if (rv == NULL || !json_is_array(list)) {
		json_decref(list);
		return NULL;
	}
	patch = json_pack("{s:{s:s, s:o}}", "metadata", "resourceVersion", rv, "finalizers", list);
	if (patch != NULL)
		kube_obj_remove_finalizer(patch, fin);
	return patch;
}

/*
 * Removes k->finalizer from obj (borrowed, as listed). Returns 1 when removed, 0 when there
 * was nothing to do (the object or the finalizer gone meanwhile) or the object failed (logged,
 * counted).
 */
static int
unfinalize(struct uninstall *u, const struct fin_kind *k, json_t *listed)
{
	json_t *cur = json_incref(listed), *patch;
	char ns[256], name[256];
	bool deleting;
	int r = 0;

	snprintf(ns, sizeof(ns), "%s", kube_obj_namespace(listed) ?: "");
	snprintf(name, sizeof(name), "%s", kube_obj_name(listed) ?: "");
	for (unsigned attempt = 0;; attempt++) {
		if (!kube_obj_has_finalizer(cur, k->finalizer))
			break;
		if (attempt == MAX_CONFLICTS) {
			failed_object(u,
			    "cannot remove the finalizer %s from %s %s/%s: it changed "
			    "%u times while we wrote",
			    k->finalizer, k->kind, ns, name, MAX_CONFLICTS);
			break;
		}
		deleting = kube_obj_is_deleting(cur);
		patch = finalizer_patch(cur, k->finalizer);
		if (patch == NULL) {
			failed_object(u, "cannot remove the finalizer %s from %s %s/%s: %s",
			    k->finalizer, k->kind, ns, name,
			    kube_obj_resource_version(cur) == NULL ? "no resourceVersion"
								   : strerror(ENOMEM));
			break;
		}
		kube_sync_reset(&u->call);
		r = kube_sync_wait(u->base, &u->call, CALL_GUARD_MS, k->patch(u, ns, name, patch));
		json_decref(patch);
		if (r == 0) {
			log_info("removed the finalizer %s from %s %s/%s%s", k->finalizer, k->kind,
			    ns, name, deleting ? " (it was being deleted: it goes now)" : "");
			json_decref(cur);
			return 1;
		}
		if (r == -ENOENT)
			break;
		if (r != -ESTALE) {
			failed_object(u, "cannot remove the finalizer %s from %s %s/%s: %s",
			    k->finalizer, k->kind, ns, name, u->call.message);
			break;
		}
		/* Conflict: changed since it was read; read it again */
		kube_sync_reset(&u->call);
		r = kube_sync_wait(u->base, &u->call, CALL_GUARD_MS, k->get(u, ns, name));
		if (r == -ENOENT)
			break;
		if (r < 0) {
			failed_object(u, "cannot read %s %s/%s again after a conflict: %s", k->kind,
			    ns, name, u->call.message);
			break;
		}
		json_decref(cur);
		cur = kube_sync_take(&u->call);
	}
	json_decref(cur);
	return 0;
}

static int
sweep(struct uninstall *u, const struct fin_kind *k)
{
	unsigned *count = (unsigned *)((char *)u + k->count), relists = 0;
	char *cont = NULL;
	json_t *page, *item;
	size_t i;
	int r;

	for (;;) {
		struct kube_list_opts lo = {
		    .limit = k->page, .continue_token = cont, .metadata_only = k->metadata_only};

		kube_sync_reset(&u->call);
		r = kube_sync_wait(u->base, &u->call, CALL_GUARD_MS, k->list(u, &lo));
		free(cont);
		cont = NULL;
		if (r == -EKEYEXPIRED && relists < MAX_RELISTS) {
			/* the continue token expired: from the start (done objects are skipped) */
			log_debug(
			    "listing %ss: %s; from the start again", k->kind, u->call.message);
			relists++;
			continue;
		}
		if (r < 0)
			return fail(u, r, "cannot list %ss: %s", k->kind, u->call.message);
		page = kube_sync_take(&u->call);
		cont = continue_token(page);
		json_array_foreach(json_object_get(page, "items"), i, item)
		{
			if (kube_obj_has_finalizer(item, k->finalizer))
				*count += (unsigned)unfinalize(u, k, item);
		}
		json_decref(page);
		if (cont == NULL)
			return 0;
	}
}

/* --- the rounds --------------------------------------------------------------------------- */

int
ctrl_uninstall(
    struct kube_client *client, const struct ctrl_uninstall_opts *opts, char *err, size_t err_len)
{
	struct uninstall u = {
	    .client = client,
	    .base = kube_client_base(client),
	    .ns = opts->namespace,
	    .lease_ns =
		opts->lease_namespace != NULL ? opts->lease_namespace : CTRL_LEASE_NAMESPACE,
	    .lease = opts->lease_name != NULL ? opts->lease_name : CTRL_LEASE_NAME,
	    .timeout = opts->timeout_usec != 0 ? opts->timeout_usec : DEFAULT_TIMEOUT_USEC,
	    .settle = opts->settle_usec != 0 ? opts->settle_usec : DEFAULT_SETTLE_USEC,
	    .poll = opts->poll_usec != 0 ? opts->poll_usec : DEFAULT_POLL_USEC,
	    .err = err,
	    .err_len = err_len,
	};
	struct lease_view judged, again;
	char what[512];
	int r;

	if (u.ns == NULL || u.ns[0] == '\0')
		return fail(&u, -EINVAL, "no namespace");
	u.deadline = clock_now_usec() + u.timeout;
	for (unsigned round = 1;; round++) {
		if ((r = wait_stopped(&u, &judged)) < 0)
			goto out;
		lease_describe(&u, &judged, what, sizeof(what));
		log_info("no controller is running (%s): cleaning up%s", what,
		    round > 1 ? " again" : "");
		if ((r = delete_agents(&u)) < 0)
			goto out;
		for (size_t i = 0; i < ELEMENTSOF(fin_kinds); i++)
			if ((r = sweep(&u, &fin_kinds[i])) < 0)
				goto out;
		/* 4. a replica that took the Lease over meanwhile may have re-created agents */
		r = lease_read(&u, &again);
		if (r == 0 && lease_same(&again, &judged))
			break;
		if (r < 0)
			log_warn("cannot read the Lease %s/%s again: %s: checking again",
			    u.lease_ns, u.lease, u.call.message);
		else
			log_warn("the Lease %s/%s changed during the cleanup (held by %s): a "
				 "controller ran meanwhile; waiting and cleaning up again",
			    u.lease_ns, u.lease, again.holder[0] != '\0' ? again.holder : "nobody");
	}
	log_info("uninstall: %u agent Deployment(s) deleted, the finalizer removed from %u "
		 "IPPool(s) and %u VirtualMachineNetworkConfig(s)%s",
	    u.n_agents, u.n_pools, u.n_cfgs, u.n_failed > 0 ? "; some objects failed" : "");
	r = 0;
	if (u.n_failed > 0)
		r = fail(&u, -EIO, "%u object(s) left as they were (first: %s)", u.n_failed,
		    u.first_failure);
out:
	kube_sync_reset(&u.call);
	return r;
}

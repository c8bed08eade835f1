/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The webhook certificate Secret's next write (webcert-plan.h). Each case of the table in
 * controller/webcert.c's opening comment is a phase below: fill, the bundle without expired
 * older CAs, the CA rotation's first step, the serving certificate renewed (or the rotation's
 * second step), an expired CA dropped alone.
 */
#include "controller/webcert-plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SETTLE_MAX_S 30 /* caBundle trusted this long before the new CA serves */

/* The bundle kept: the older CAs still valid. */
struct kept {
	int issuer;	/* index in p->cas of the CA that signed the serving certificate; -1 */
	size_t dropped; /* expired older CAs left out */
	char gone[RFC3339_MAX]; /* notAfter of the last one left out */
};

static int
settle_s(uint64_t validity_s)
{
	int64_t s = (int64_t)(validity_s / 10);

	return (int)(s < 1 ? 1 : s > SETTLE_MAX_S ? SETTLE_MAX_S : s);
}

void
webcert_plan_clear(struct webcert_plan *p)
{
	X509_free(p->new_ca);
	EVP_PKEY_free(p->new_ca_key);
	free(p->leaf_pem);
	free(p->leaf_key_pem);
}

/* A time to look again; one already past is acted on now or waits for an event (the
 * configurations' check), not for a timer. */
static void
plan_next(struct webcert_plan *p, int64_t t)
{
	if (t > p->now && t < p->next)
		p->next = t;
}

json_t *
webcert_plan_data(const struct webcert_plan *p, const struct webcert_material *m)
{
	char *ca = webcert_certs_pem(p->cas, p->ncas);
	char *cak = p->new_ca_key != NULL   ? webcert_key_pem(p->new_ca_key)
		    : m->ca_key_pem != NULL ? strdup(m->ca_key_pem)
					    : NULL;
	const char *crt = p->leaf_pem != NULL ? p->leaf_pem : m->tls_crt;
	const char *key = p->leaf_key_pem != NULL ? p->leaf_key_pem : m->tls_key;
	char *v[4] = {NULL, NULL, NULL, NULL};
	json_t *data = NULL;

	if (ca != NULL && cak != NULL && crt != NULL && key != NULL) {
		v[0] = webcert_b64_encode(ca, strlen(ca));
		v[1] = webcert_b64_encode(cak, strlen(cak));
		v[2] = webcert_b64_encode(crt, strlen(crt));
		v[3] = webcert_b64_encode(key, strlen(key));
	}
	if (v[0] != NULL && v[1] != NULL && v[2] != NULL && v[3] != NULL)
		data = json_pack("{s:s, s:s, s:s, s:s}", "ca.crt", v[0], "ca.key", v[1], "tls.crt",
		    v[2], "tls.key", v[3]);
	for (int i = 0; i < 4; i++)
		free(v[i]);
	free(ca);
	free(cak);
	return data;
}

/* ca.crt/ca.key unusable: a new CA and serving certificate. */
static int
plan_fill(const struct webcert_plan_in *in, const struct webcert_material *m, int64_t now,
    struct webcert_plan *p)
{
	char t1[RFC3339_MAX], t2[RFC3339_MAX];
	int r;

	if ((r = webcert_new_ca(
		 in->validity_s, in->ca_validity_s, now, &p->new_ca, &p->new_ca_key)) < 0 ||
	    (r = webcert_new_leaf(in->names, in->validity_s, now, p->new_ca, p->new_ca_key,
		 &p->leaf_pem, &p->leaf_key_pem, &p->leaf_not_after)) < 0)
		return r;
	p->cas[p->ncas++] = p->new_ca;
	webcert_fmt_time(webcert_not_after(p->new_ca), t1);
	webcert_fmt_time(p->leaf_not_after, t2);
	snprintf(p->what, sizeof(p->what),
	    "filled Secret %s/%s (%s): new CA (notAfter %s) and serving certificate for %s "
	    "(notAfter %s)",
	    in->ns, in->secret, m->why, t1, in->names->san_conf, t2);
	return 1;
}

/* The bundle without expired older CAs into p->cas; which of them signed the serving
 * certificate. */
static void
plan_keep_cas(const struct webcert_material *m, int64_t now, struct webcert_plan *p, struct kept *k)
{
	k->issuer = -1;
	k->dropped = 0;
	k->gone[0] = '\0';
	for (size_t i = 0; i < m->ncas; i++) {
		if (i > 0 && webcert_not_after(m->cas[i]) <= now) {
			k->dropped++;
			webcert_fmt_time(webcert_not_after(m->cas[i]), k->gone);
			continue;
		}
		if (i > 0)
			plan_next(p, webcert_not_after(m->cas[i]));
		if (m->leaf_ok && k->issuer < 0 && webcert_issued_by(m->cas[i], m->leaf))
			k->issuer = (int)p->ncas;
		p->cas[p->ncas++] = m->cas[i];
	}
}

/* CA rotation, step 1: the new CA joins the bundle and signs from now on; the serving
 * certificate waits until the configurations trust the new CA. */
static int
plan_new_ca(
    const struct webcert_plan_in *in, int64_t now, const char *old_na, struct webcert_plan *p)
{
	char t2[RFC3339_MAX];
	int r;

	if (p->ncas > WEBCERT_MAX_CAS - 1)
		p->ncas = WEBCERT_MAX_CAS - 1; /* the oldest go */
	memmove(&p->cas[1], &p->cas[0], p->ncas * sizeof(p->cas[0]));
	if ((r = webcert_new_ca(
		 in->validity_s, in->ca_validity_s, now, &p->new_ca, &p->new_ca_key)) < 0)
		return r;
	p->cas[0] = p->new_ca;
	p->ncas++;
	webcert_fmt_time(webcert_not_after(p->new_ca), t2);
	snprintf(p->what, sizeof(p->what),
	    "CA rotation: new CA (notAfter %s) added to the bundle of Secret %s/%s before "
	    "the CA (notAfter %s); the serving certificate follows once the webhook "
	    "configurations trust it",
	    t2, in->ns, in->secret, old_na);
	return 1;
}

/* Nothing but expired CAs to drop: 1 (p->what says so) when there are, else 0. */
static int
plan_drop(const struct webcert_plan_in *in, const struct kept *k, struct webcert_plan *p)
{
	if (k->dropped == 0)
		return 0;
	snprintf(p->what, sizeof(p->what),
	    "expired CA (notAfter %s) dropped from the bundle of Secret %s/%s", k->gone, in->ns,
	    in->secret);
	return 1;
}

/* A serving certificate signed by ca: its notAfter (and any CA dropped) end p->what. */
static int
plan_new_leaf(const struct webcert_plan_in *in, X509 *ca, EVP_PKEY *ca_key, int64_t now,
    const char *ca_na, const struct kept *k, struct webcert_plan *p)
{
	char t2[RFC3339_MAX];
	size_t l;
	int r;

	if ((r = webcert_new_leaf(in->names, in->validity_s, now, ca, ca_key, &p->leaf_pem,
		 &p->leaf_key_pem, &p->leaf_not_after)) < 0)
		return r;
	webcert_fmt_time(p->leaf_not_after, t2);
	l = strlen(p->what);
	snprintf(p->what + l, sizeof(p->what) - l, ": notAfter %s, CA notAfter %s%s%s%s", t2, ca_na,
	    k->dropped > 0 ? "; expired CA (notAfter " : "", k->gone,
	    k->dropped > 0 ? ") dropped" : "");
	return 1;
}

int
webcert_plan(const struct webcert_plan_in *in, const struct webcert_material *m, int64_t now,
    struct webcert_plan *p)
{
	char ca_na[RFC3339_MAX];
	struct kept k;
	bool leaf_broken, leaf_due, ca_due;

	memset(p, 0, sizeof(*p));
	p->now = now;
	p->next = now + WEBCERT_MAX_RECHECK_S;
	if (!m->ca_ok)
		return plan_fill(in, m, now, p);
	plan_keep_cas(m, now, p, &k);
	leaf_broken = !m->leaf_ok || k.issuer < 0 || webcert_not_after(m->leaf) <= now;
	ca_due = now >= webcert_renew_at(m->cas[0]);
	leaf_due = leaf_broken || now >= webcert_renew_at(m->leaf) || k.issuer != 0 ||
		   !webcert_has_names(in->names, m->leaf);
	plan_next(p, webcert_renew_at(m->cas[0]));
	if (!leaf_broken)
		plan_next(p, webcert_renew_at(m->leaf));
	webcert_fmt_time(webcert_not_after(m->cas[0]), ca_na);
	if (leaf_broken) {
		snprintf(p->what, sizeof(p->what),
		    "serving certificate of Secret %s/%s replaced (%s)", in->ns, in->secret,
		    !m->leaf_ok	   ? m->why
		    : k.issuer < 0 ? "not signed by a CA of the bundle"
				   : "expired");
	} else if (ca_due && k.issuer == 0) {
		return plan_new_ca(in, now, ca_na, p);
	} else if (leaf_due && k.issuer == 0) {
		snprintf(p->what, sizeof(p->what),
		    "serving certificate of Secret %s/%s renewed (%s)", in->ns, in->secret,
		    !webcert_has_names(in->names, m->leaf) ? "names changed"
							   : "2/3 of its validity passed");
	} else if (leaf_due) {
		/* CA rotation, step 2: only once every configuration trusts the new CA */
		int64_t at = in->bundle_ok_since + settle_s(in->validity_s);

		if (in->bundle_ok_since == 0 || now < at) {
			if (in->bundle_ok_since != 0)
				plan_next(p, at);
			return plan_drop(in, &k, p);
		}
		snprintf(p->what, sizeof(p->what),
		    "CA rotation: serving certificate of Secret %s/%s now signed by the new CA "
		    "(notAfter %s), which the webhook configurations trust",
		    in->ns, in->secret, ca_na);
	} else {
		return plan_drop(in, &k, p);
	}
	return plan_new_leaf(in, m->cas[0], m->ca_key, now, ca_na, &k, p);
}

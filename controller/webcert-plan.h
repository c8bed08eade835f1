/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_WEBCERT_PLAN_H
#define VMDHCP_CONTROLLER_WEBCERT_PLAN_H

/*
 * The webhook certificate Secret's next write, decided from its content and the time alone
 * (the table of cases is in controller/webcert.c's opening comment): fill, renew the serving
 * certificate, the two steps of a CA rotation, drop an expired CA. No I/O, no clock: the
 * caller gives the time and whether the webhook configurations trust the bundle yet.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "controller/webcert-x509.h"

#define WEBCERT_MAX_RECHECK_S 3600 /* re-evaluate at least hourly */

/* What the plan is made for. */
struct webcert_plan_in {
	const char *ns, *secret;	   /* the Secret's, for the log line */
	const struct webcert_names *names; /* the serving certificate's */
	uint64_t validity_s;		   /* serving certificate validity */
	uint64_t ca_validity_s;		   /* a new CA's */
	/* wall clock when every webhook configuration trusted the bundle in use; 0: not yet */
	int64_t bundle_ok_since;
};

struct webcert_plan {
	/* the new content (NULL: unchanged) */
	X509 *cas[WEBCERT_MAX_CAS + 1];
	size_t ncas;
	X509 *new_ca;
	EVP_PKEY *new_ca_key;
	char *leaf_pem, *leaf_key_pem;
	int64_t leaf_not_after;
	char what[512];
	int64_t now;
	int64_t next; /* wall clock of the next look */
};

/*
 * What to write, if anything: 1 and p filled (p->what says what for the log), 0 for nothing
 * (p->next: when to look again), negative errno. p is cleared with webcert_plan_clear in
 * every case.
 */
int webcert_plan(const struct webcert_plan_in *in, const struct webcert_material *m, int64_t now,
    struct webcert_plan *p);
void webcert_plan_clear(struct webcert_plan *p);
/* The Secret's data for the plan: ca.crt from p->cas, the rest new or kept from m. A new
 * object, or NULL (ENOMEM). */
json_t *webcert_plan_data(const struct webcert_plan *p, const struct webcert_material *m);

#endif

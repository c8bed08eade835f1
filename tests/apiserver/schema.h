/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_APISERVER_SCHEMA_H
#define VMDHCP_APISERVER_SCHEMA_H

#include <jansson.h>

/*
 * A custom resource written through the test API server as the real one stores it: pruned
 * and defaulted by its CRD's structural schema (openAPIV3Schema, borrowed). obj is borrowed
 * and never modified (its subtrees may be shared with stored versions); returns a new
 * reference: obj itself when nothing changed, else a copy of the changed path.
 */
json_t *schema_apply(json_t *schema, json_t *obj);

#endif

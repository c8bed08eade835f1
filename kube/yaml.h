/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_KUBE_YAML_H
#define VMDHCP_KUBE_YAML_H

/*
 * YAML (libyaml) -> jansson, for kubeconfig files and for manifests users would
 * `kubectl apply` (local mode of the agent, examples/ checks).
 *
 * Scalars follow the YAML 1.2 core schema as Kubernetes reads it: plain null/~/empty ->
 * null, true/false -> boolean, decimal integers -> integer, floats -> real, everything else
 * (and every quoted scalar) -> string. Anchors/aliases are refused (-ENOTSUP), as are
 * non-scalar mapping keys. Documents are separated by `---`; empty documents are skipped.
 */

#include <stddef.h>

#include <jansson.h>

struct yaml_error {
	unsigned line;	 /* 1-based line of the problem (0 when unknown) */
	unsigned column; /* 1-based */
	char message[256];
};

/*
 * Parses every document of text[0..len). On success returns the number of documents and
 * *ret_docs is a new array of new references (free each with json_decref, then free the
 * array); *ret_lines (optional) gets a new array with each document's first line.
 * On failure returns -EINVAL (syntax; err filled), -ENOTSUP (aliases), -ENOMEM.
 */
int yaml_parse_documents(
    const char *text, size_t len, json_t ***ret_docs, unsigned **ret_lines, struct yaml_error *err);

/* Convenience: exactly one document (kubeconfig). Returns a new reference in *ret. */
int yaml_parse_one(const char *text, size_t len, json_t **ret, struct yaml_error *err);

#endif

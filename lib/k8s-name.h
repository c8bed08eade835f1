/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_K8S_NAME_H
#define VMDHCP_LIB_K8S_NAME_H

/*
 * Kubernetes names as the API server validates them (apimachinery's validation package):
 * object names (DNS-1123 subdomains), label keys and values, qualified names. The one
 * implementation; the CRD schemas' own patterns are in crds/crds-internal.h.
 */

#include <stdbool.h>
#include <stddef.h>

#define K8S_DNS_SUBDOMAIN_MAX 253
#define K8S_LABEL_NAME_MAX 63

/* A DNS-1123 subdomain of n bytes: at most 253, dot-separated labels
 * [a-z0-9]([-a-z0-9]*[a-z0-9])? (object names, label key prefixes). */
bool k8s_is_dns_subdomain(const char *s, size_t n);
/* The name part of a qualified name, or a non-empty label value, of n bytes: at most 63,
 * ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]. */
bool k8s_is_label_name(const char *s, size_t n);
/* [prefix/]name: a label key, toleration key, extended resource name. */
bool k8s_is_qualified_name(const char *s);
/* A label value: empty, or as k8s_is_label_name. */
bool k8s_is_label_value(const char *s);

#endif

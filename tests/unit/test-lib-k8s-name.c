/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/k8s-name.c: object names, label keys and values, qualified names accepted and refused
 * as the API server's validation does (the cases of apimachinery's validation tests).
 */
#include <string.h>

#include "lib/k8s-name.h"
#include "tests/runner.h"

static bool
subdomain(const char *s)
{
	return k8s_is_dns_subdomain(s, strlen(s));
}

static void
test_dns_subdomain(void)
{
	char long_name[K8S_DNS_SUBDOMAIN_MAX + 2];

	CU_ASSERT_TRUE(subdomain("a"));
	CU_ASSERT_TRUE(subdomain("vm-dhcp"));
	CU_ASSERT_TRUE(subdomain("network.harvesterhci.io"));
	CU_ASSERT_TRUE(subdomain("0-9.a"));
	CU_ASSERT_FALSE(subdomain(""));
	CU_ASSERT_FALSE(subdomain("A"));
	CU_ASSERT_FALSE(subdomain("-a"));
	CU_ASSERT_FALSE(subdomain("a-"));
	CU_ASSERT_FALSE(subdomain("a..b"));
	CU_ASSERT_FALSE(subdomain(".a"));
	CU_ASSERT_FALSE(subdomain("a."));
	CU_ASSERT_FALSE(subdomain("a_b"));
	memset(long_name, 'a', sizeof(long_name));
	long_name[K8S_DNS_SUBDOMAIN_MAX] = '\0';
	CU_ASSERT_TRUE(subdomain(long_name));
	long_name[K8S_DNS_SUBDOMAIN_MAX] = 'a';
	long_name[K8S_DNS_SUBDOMAIN_MAX + 1] = '\0';
	CU_ASSERT_FALSE(subdomain(long_name));
}

static void
test_label_key_value(void)
{
	char v[K8S_LABEL_NAME_MAX + 2];

	CU_ASSERT_TRUE(k8s_is_qualified_name("app"));
	CU_ASSERT_TRUE(k8s_is_qualified_name("App_1.x-Y"));
	CU_ASSERT_TRUE(k8s_is_qualified_name("network.harvesterhci.io/ippoolname"));
	CU_ASSERT_TRUE(k8s_is_qualified_name("kubernetes.io/hostname"));
	CU_ASSERT_FALSE(k8s_is_qualified_name(""));
	CU_ASSERT_FALSE(k8s_is_qualified_name("/name"));
	CU_ASSERT_FALSE(k8s_is_qualified_name("prefix/"));
	CU_ASSERT_FALSE(k8s_is_qualified_name("Prefix.io/name"));
	CU_ASSERT_FALSE(k8s_is_qualified_name("a/b/c"));
	CU_ASSERT_FALSE(k8s_is_qualified_name("_name"));
	CU_ASSERT_FALSE(k8s_is_qualified_name("name-"));
	CU_ASSERT_TRUE(k8s_is_label_value(""));
	CU_ASSERT_TRUE(k8s_is_label_value("v1.2_3-A"));
	CU_ASSERT_FALSE(k8s_is_label_value("-v"));
	CU_ASSERT_FALSE(k8s_is_label_value("a b"));
	CU_ASSERT_FALSE(k8s_is_label_value("a/b"));
	memset(v, 'x', sizeof(v));
	v[K8S_LABEL_NAME_MAX] = '\0';
	CU_ASSERT_TRUE(k8s_is_label_value(v));
	v[K8S_LABEL_NAME_MAX] = 'x';
	v[K8S_LABEL_NAME_MAX + 1] = '\0';
	CU_ASSERT_FALSE(k8s_is_label_value(v));
}

static const struct test_case tests[] = {
    {"DNS-1123 subdomains (object names, label key prefixes)", test_dns_subdomain},
    {"label keys (qualified names) and label values", test_label_key_value},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "lib-k8s-name", .tests = tests},
    {.name = NULL},
};

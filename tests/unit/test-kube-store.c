/* SPDX-License-Identifier: Apache-2.0 */
/* kube store: typed items, replace/delete ownership, named indexes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube.h"
#include "tests/runner.h"

struct pod {
	char ns[32];
	char node[32];
	char labels[2][32]; /* app values: up to two */
	int version;
};

static int destroyed;

static void
pod_destroy(void *item)
{
	destroyed++;
	free(item);
}

static struct pod *
pod_new(const char *ns, const char *node, const char *app1, const char *app2, int version)
{
	struct pod *p = calloc(1, sizeof(*p));

	snprintf(p->ns, sizeof(p->ns), "%s", ns);
	snprintf(p->node, sizeof(p->node), "%s", node);
	if (app1)
		snprintf(p->labels[0], sizeof(p->labels[0]), "%s", app1);
	if (app2)
		snprintf(p->labels[1], sizeof(p->labels[1]), "%s", app2);
	p->version = version;
	return p;
}

static void
by_node(const void *item, kube_index_emit_fn emit, void *ctx)
{
	const struct pod *p = item;

	if (p->node[0])
		emit(ctx, p->node);
}

static void
by_app(const void *item, kube_index_emit_fn emit, void *ctx)
{
	const struct pod *p = item;

	for (int i = 0; i < 2; i++)
		if (p->labels[i][0])
			emit(ctx, p->labels[i]);
}

static int
count_visit(void *userdata, const char *key, const void *item)
{
	(*(int *)userdata)++;
	return 0;
}

static void
test_put_get_delete(void)
{
	struct kube_store *s = NULL;
	void *old = NULL;
	const struct pod *p;

	destroyed = 0;
	CU_ASSERT_EQUAL_FATAL(kube_store_new(pod_destroy, &s), 0);
	CU_ASSERT_EQUAL(
	    kube_store_put(s, "ns/a", "1", pod_new("ns", "n1", "web", NULL, 1), NULL), 0);
	CU_ASSERT_EQUAL(kube_store_len(s), 1);
	p = kube_store_get(s, "ns/a");
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL(p->version, 1);
	CU_ASSERT_STRING_EQUAL(kube_store_resource_version(s, "ns/a"), "1");

	/* replace hands back the old item */
	CU_ASSERT_EQUAL(
	    kube_store_put(s, "ns/a", "2", pod_new("ns", "n1", "web", NULL, 2), &old), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(old);
	CU_ASSERT_EQUAL(((struct pod *)old)->version, 1);
	kube_store_destroy_item(s, old);
	CU_ASSERT_EQUAL(destroyed, 1);
	CU_ASSERT_STRING_EQUAL(kube_store_resource_version(s, "ns/a"), "2");
	/* replace without ret_old destroys it */
	kube_store_put(s, "ns/a", "3", pod_new("ns", "n1", "web", NULL, 3), NULL);
	CU_ASSERT_EQUAL(destroyed, 2);

	CU_ASSERT_EQUAL(kube_store_delete(s, "ns/zzz", NULL), -ENOENT);
	CU_ASSERT_EQUAL(kube_store_delete(s, "ns/a", &old), 0);
	CU_ASSERT_EQUAL(((struct pod *)old)->version, 3);
	kube_store_destroy_item(s, old);
	CU_ASSERT_PTR_NULL(kube_store_get(s, "ns/a"));
	CU_ASSERT_EQUAL(kube_store_len(s), 0);
	kube_store_free(s);
	CU_ASSERT_EQUAL(destroyed, 3);
}

static void
test_indexes(void)
{
	struct kube_store *s = NULL;
	int n;

	CU_ASSERT_EQUAL_FATAL(kube_store_new(pod_destroy, &s), 0);
	kube_store_put(s, "a/p1", "1", pod_new("a", "n1", "web", "db", 1), NULL);
	kube_store_put(s, "a/p2", "1", pod_new("a", "n2", "web", NULL, 1), NULL);
	/* index added after items exist re-indexes them */
	CU_ASSERT_EQUAL(kube_store_add_index(s, "node", by_node), 0);
	CU_ASSERT_EQUAL(kube_store_add_index(s, "node", by_node), -EEXIST);
	CU_ASSERT_EQUAL(kube_store_add_index(s, "app", by_app), 0);
	kube_store_put(s, "b/p3", "1", pod_new("b", "n1", "db", "db", 1), NULL);

	CU_ASSERT_EQUAL(kube_store_index_count(s, "node", "n1"), 2);
	CU_ASSERT_EQUAL(kube_store_index_count(s, "node", "n2"), 1);
	CU_ASSERT_EQUAL(kube_store_index_count(s, "app", "web"), 2);
	CU_ASSERT_EQUAL(kube_store_index_count(s, "app", "db"), 2); /* p3 emits db twice */
	CU_ASSERT_EQUAL(kube_store_index_count(s, "nope", "x"), 0);
	n = 0;
	CU_ASSERT_EQUAL(kube_store_by_index(s, "app", "db", count_visit, &n), 0);
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_EQUAL(kube_store_by_index(s, "nope", "db", count_visit, &n), -ENOENT);

	/* moving p1 to n2 and dropping its db label updates both indexes */
	kube_store_put(s, "a/p1", "2", pod_new("a", "n2", "web", NULL, 2), NULL);
	CU_ASSERT_EQUAL(kube_store_index_count(s, "node", "n1"), 1);
	CU_ASSERT_EQUAL(kube_store_index_count(s, "node", "n2"), 2);
	CU_ASSERT_EQUAL(kube_store_index_count(s, "app", "db"), 1);

	kube_store_delete(s, "a/p2", NULL);
	CU_ASSERT_EQUAL(kube_store_index_count(s, "node", "n2"), 1);
	CU_ASSERT_EQUAL(kube_store_index_count(s, "app", "web"), 1);
	n = 0;
	kube_store_foreach(s, count_visit, &n);
	CU_ASSERT_EQUAL(n, 2);
	kube_store_free(s);
}

static void
test_many(void)
{
	struct kube_store *s = NULL;
	char key[32], node[16];
	int n = 0;

	destroyed = 0;
	CU_ASSERT_EQUAL_FATAL(kube_store_new(pod_destroy, &s), 0);
	CU_ASSERT_EQUAL(kube_store_add_index(s, "node", by_node), 0);
	for (int i = 0; i < 20000; i++) {
		snprintf(key, sizeof(key), "ns/p%d", i);
		snprintf(node, sizeof(node), "n%d", i % 10);
		kube_store_put(s, key, "1", pod_new("ns", node, NULL, NULL, i), NULL);
	}
	CU_ASSERT_EQUAL(kube_store_len(s), 20000);
	CU_ASSERT_EQUAL(kube_store_index_count(s, "node", "n3"), 2000);
	for (int i = 0; i < 20000; i += 2) {
		snprintf(key, sizeof(key), "ns/p%d", i);
		kube_store_delete(s, key, NULL);
	}
	CU_ASSERT_EQUAL(kube_store_len(s), 10000);
	CU_ASSERT_EQUAL(kube_store_index_count(s, "node", "n3"), 2000); /* odd keys stay */
	CU_ASSERT_EQUAL(kube_store_index_count(s, "node", "n4"), 0);
	CU_ASSERT_EQUAL(((const struct pod *)kube_store_get(s, "ns/p12345"))->version, 12345);
	kube_store_foreach(s, count_visit, &n);
	CU_ASSERT_EQUAL(n, 10000);
	kube_store_free(s);
	CU_ASSERT_EQUAL(destroyed, 20000);
}

static void
test_json_default(void)
{
	struct kube_store *s = NULL;
	json_t *o = json_pack("{s:i}", "x", 1);

	/* without a destroy function the store holds json_t references */
	CU_ASSERT_EQUAL_FATAL(kube_store_new(NULL, &s), 0);
	json_incref(o);
	kube_store_put(s, "k", NULL, o, NULL);
	CU_ASSERT_EQUAL(o->refcount, 2);
	CU_ASSERT_PTR_NULL(kube_store_resource_version(s, "k"));
	kube_store_free(s);
	CU_ASSERT_EQUAL(o->refcount, 1);
	json_decref(o);
}

static const struct test_case store_tests[] = {
    {"put get delete", test_put_get_delete},
    {"named indexes", test_indexes},
    {"20000 items", test_many},
    {"json items by default", test_json_default},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "kube-store", .tests = store_tests},
    {.name = NULL},
};

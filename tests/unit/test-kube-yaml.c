/* SPDX-License-Identifier: Apache-2.0 */
/* kube/yaml: libyaml -> jansson, core-schema typing, errors. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/yaml.h"
#include "tests/runner.h"

static void
free_docs(json_t **docs, int n)
{
	for (int i = 0; i < n; i++)
		json_decref(docs[i]);
	free(docs);
}

static void
test_multi_document(void)
{
	static const char text[] = "# leading comment\n"
				   "---\n"
				   "kind: IPPool\n"
				   "metadata:\n"
				   "  name: a\n"
				   "---\n"
				   "# empty document\n"
				   "---\n"
				   "kind: VirtualMachineNetworkConfig\n"
				   "metadata: {name: b}\n"
				   "...\n"
				   "---\n"
				   "- 1\n";
	json_t **docs = NULL;
	unsigned *lines = NULL;
	struct yaml_error err;
	int n;

	n = yaml_parse_documents(text, strlen(text), &docs, &lines, &err);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(docs[0], "kind")), "IPPool");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_object_get(docs[1], "metadata"), "name")), "b");
	CU_ASSERT_TRUE(json_is_array(docs[2]));
	CU_ASSERT_EQUAL(lines[0], 3);
	CU_ASSERT_EQUAL(lines[1], 9);
	CU_ASSERT_EQUAL(lines[2], 13);
	free(lines);
	free_docs(docs, n);

	/* Nothing but comments: zero documents, not an error. */
	n = yaml_parse_documents("# nothing\n", 10, &docs, NULL, &err);
	CU_ASSERT_EQUAL(n, 0);
	free(docs);
}

static void
test_scalar_typing(void)
{
	static const char text[] = "n1: ~\n"
				   "n2: null\n"
				   "n3:\n"
				   "b1: true\n"
				   "b2: False\n"
				   "yes: yes\n"
				   "i1: 42\n"
				   "i2: -7\n"
				   "i3: 0x1F\n"
				   "i4: 0o17\n"
				   "f1: 1.5\n"
				   "f2: 6.02e23\n"
				   "big: 123456789012345678901234\n"
				   "s1: hello world\n"
				   "s2: 10.0.0.1\n"
				   "s3: aa:bb:cc:dd:ee:ff\n"
				   "s4: .inf\n"
				   "s5: 1.2.3\n";
	json_t *root = NULL;
	struct yaml_error err;

	CU_ASSERT_EQUAL_FATAL(yaml_parse_one(text, strlen(text), &root, &err), 0);
	CU_ASSERT_TRUE(json_is_null(json_object_get(root, "n1")));
	CU_ASSERT_TRUE(json_is_null(json_object_get(root, "n2")));
	CU_ASSERT_TRUE(json_is_null(json_object_get(root, "n3")));
	CU_ASSERT_TRUE(json_is_true(json_object_get(root, "b1")));
	CU_ASSERT_TRUE(json_is_false(json_object_get(root, "b2")));
	/* YAML 1.2: yes is a string, not a boolean. */
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "yes")), "yes");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(root, "i1")), 42);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(root, "i2")), -7);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(root, "i3")), 31);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(root, "i4")), 15);
	CU_ASSERT_TRUE(json_is_real(json_object_get(root, "f1")));
	CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(root, "f1")), 1.5, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(json_real_value(json_object_get(root, "f2")), 6.02e23, 1e10);
	CU_ASSERT_TRUE(json_is_real(json_object_get(root, "big")));
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "s1")), "hello world");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "s2")), "10.0.0.1");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "s3")), "aa:bb:cc:dd:ee:ff");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "s4")), ".inf");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "s5")), "1.2.3");
	json_decref(root);
}

static void
test_quoted_stay_strings(void)
{
	static const char text[] = "a: \"42\"\n"
				   "b: 'true'\n"
				   "c: \"null\"\n"
				   "d: !!str 12\n"
				   "e: \"\"\n"
				   "f: |\n"
				   "  line1\n"
				   "  line2\n"
				   "g: \"tab\\there\"\n";
	json_t *root = NULL;

	CU_ASSERT_EQUAL_FATAL(yaml_parse_one(text, strlen(text), &root, NULL), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "a")), "42");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "b")), "true");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "c")), "null");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "d")), "12");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "e")), "");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "f")), "line1\nline2\n");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(root, "g")), "tab\there");
	json_decref(root);
}

static void
test_nested(void)
{
	static const char text[] =
	    "apiVersion: v1\n"
	    "clusters:\n"
	    "- cluster:\n"
	    "    server: https://127.0.0.1:6443\n"
	    "    insecure-skip-tls-verify: true\n"
	    "  name: c1\n"
	    "- name: c2\n"
	    "  cluster: {server: 'https://x', extensions: [1, [2, 3], {k: v}]}\n"
	    "empty-list: []\n"
	    "empty-map: {}\n";
	json_t *root = NULL, *clusters, *c2, *ext;

	CU_ASSERT_EQUAL_FATAL(yaml_parse_one(text, strlen(text), &root, NULL), 0);
	clusters = json_object_get(root, "clusters");
	CU_ASSERT_EQUAL_FATAL(json_array_size(clusters), 2);
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(
		json_object_get(json_object_get(json_array_get(clusters, 0), "cluster"), "server")),
	    "https://127.0.0.1:6443");
	CU_ASSERT_TRUE(json_is_true(json_object_get(
	    json_object_get(json_array_get(clusters, 0), "cluster"), "insecure-skip-tls-verify")));
	c2 = json_object_get(json_array_get(clusters, 1), "cluster");
	ext = json_object_get(c2, "extensions");
	CU_ASSERT_EQUAL(json_array_size(ext), 3);
	CU_ASSERT_EQUAL(json_integer_value(json_array_get(json_array_get(ext, 1), 1)), 3);
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_array_get(ext, 2), "k")), "v");
	CU_ASSERT_TRUE(json_is_array(json_object_get(root, "empty-list")));
	CU_ASSERT_EQUAL(json_array_size(json_object_get(root, "empty-list")), 0);
	CU_ASSERT_TRUE(json_is_object(json_object_get(root, "empty-map")));
	json_decref(root);
}

static void
test_syntax_error_line(void)
{
	static const char text[] = "a: 1\n"
				   "b:\n"
				   "  - x\n"
				   "  c: [unclosed\n"
				   "d: 2\n";
	static const char text2[] = "a: 1\n"
				    "b: \"unterminated\n";
	json_t **docs = NULL;
	struct yaml_error err;
	json_t *root = NULL;

	CU_ASSERT_EQUAL(yaml_parse_documents(text, strlen(text), &docs, NULL, &err), -EINVAL);
	CU_ASSERT_EQUAL(err.line, 4);
	CU_ASSERT_TRUE(strlen(err.message) > 0);

	CU_ASSERT_EQUAL(yaml_parse_one(text2, strlen(text2), &root, &err), -EINVAL);
	CU_ASSERT_TRUE(err.line >= 2);
	CU_ASSERT_PTR_NULL(root);

	/* Duplicate keys are an error that names the key and line. */
	CU_ASSERT_EQUAL(yaml_parse_one("a: 1\nb: 2\na: 3\n", 15, &root, &err), -EINVAL);
	CU_ASSERT_EQUAL(err.line, 3);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "\"a\""));

	/* yaml_parse_one wants exactly one document. */
	CU_ASSERT_EQUAL(yaml_parse_one("a: 1\n---\nb: 2\n", 14, &root, &err), -EINVAL);
	CU_ASSERT_EQUAL(yaml_parse_one("", 0, &root, &err), -EINVAL);
}

static void
test_aliases_refused(void)
{
	static const char alias[] = "base: &b {x: 1}\n"
				    "copy: *b\n";
	static const char merge[] = "base: {x: 1}\n"
				    "copy:\n"
				    "  <<: {y: 2}\n";
	static const char laughs[] = "a: &a [\"lol\",\"lol\"]\n"
				     "b: [*a,*a,*a,*a]\n";
	static const char complex_key[] = "? [a, b]\n"
					  ": 1\n";
	json_t *root = NULL;
	struct yaml_error err;

	CU_ASSERT_EQUAL(yaml_parse_one(alias, strlen(alias), &root, &err), -ENOTSUP);
	CU_ASSERT_EQUAL(err.line, 1);
	CU_ASSERT_EQUAL(yaml_parse_one(laughs, strlen(laughs), &root, &err), -ENOTSUP);
	CU_ASSERT_EQUAL(yaml_parse_one(merge, strlen(merge), &root, &err), -ENOTSUP);
	CU_ASSERT_EQUAL(err.line, 3);
	CU_ASSERT_EQUAL(yaml_parse_one(complex_key, strlen(complex_key), &root, &err), -ENOTSUP);
	CU_ASSERT_PTR_NULL(root);
}

static void
test_deep_nesting_refused(void)
{
	char text[2048];
	json_t *root = NULL;
	struct yaml_error err;
	size_t n = 1000;

	memset(text, '[', n);
	memset(text + n, ']', n);
	text[2 * n] = '\0';
	CU_ASSERT_EQUAL(yaml_parse_one(text, 2 * n, &root, &err), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, "nesting"));
}

static const struct test_case yaml_tests[] = {
    {"multi-document", test_multi_document},
    {"scalar typing", test_scalar_typing},
    {"quoted stay strings", test_quoted_stay_strings},
    {"nested maps and lists", test_nested},
    {"syntax error line", test_syntax_error_line},
    {"aliases refused", test_aliases_refused},
    {"deep nesting refused", test_deep_nesting_refused},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "kube-yaml", .tests = yaml_tests},
    {.name = NULL},
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The encoders' output, byte for byte: every IPPool and VirtualMachineNetworkConfig the codec
 * reads in the fixtures (tests/data/crds-encode-input.json, the examples/ YAML, the crds fuzz
 * corpora) plus two zeroed structs is decoded, encoded and dumped compactly (key order kept),
 * and compared with tests/data/crds-encode-golden.txt, which holds what the hand-written
 * encoders wrote before the encoders were derived from the field tables. A line per object:
 * "<source>#<index>\t<json>". VMDHCP_WRITE_GOLDEN=1 rewrites the file instead.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "crds/ippool.h"
#include "crds/vmnetcfg.h"
#include "kube/yaml.h"
#include "lib/util.h"
#include "tests/runner.h"

struct out {
	char *buf;
	size_t len, cap;
	unsigned pools, cfgs;
};

static void
out_line(struct out *o, const char *name, size_t i, json_t *enc)
{
	char *s = enc ? json_dumps(enc, JSON_COMPACT) : NULL;
	char head[600];
	size_t hl, sl;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	hl = (size_t)snprintf(head, sizeof(head), "%s#%zu\t", name, i);
	sl = strlen(s);
	if (o->len + hl + sl + 2 > o->cap) {
		o->cap = (o->len + hl + sl + 2) * 2;
		o->buf = realloc(o->buf, o->cap);
		CU_ASSERT_PTR_NOT_NULL_FATAL(o->buf);
	}
	memcpy(o->buf + o->len, head, hl);
	memcpy(o->buf + o->len + hl, s, sl);
	o->len += hl + sl;
	o->buf[o->len++] = '\n';
	o->buf[o->len] = '\0';
	free(s);
	json_decref(enc);
}

/* One document: encoded when it is one of our kinds and decodes. */
static void
add_doc(struct out *o, const char *name, size_t i, const json_t *doc)
{
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	struct crd_error err;

	if (kind && strcmp(kind, IPPOOL_KIND) == 0) {
		struct ippool *p = NULL;

		if (ippool_decode(doc, &p, &err) == 0) {
			out_line(o, name, i, ippool_encode(p));
			/* the parts the controller writes on their own */
			out_line(o, name, i, ippool_spec_encode(&p->spec));
			out_line(o, name, i, ippool_status_encode(&p->status));
			o->pools++;
		}
		ippool_free(p);
	} else if (kind && strcmp(kind, VMNETCFG_KIND) == 0) {
		struct vmnetcfg *c = NULL;

		if (vmnetcfg_decode(doc, &c, &err) == 0) {
			out_line(o, name, i, vmnetcfg_encode(c));
			out_line(o, name, i, vmnetcfg_status_encode(&c->status));
			o->cfgs++;
		}
		vmnetcfg_free(c);
	}
}

/* A JSON text: one object, an array of them, a list ({"items"}) or a watch event. */
static void
add_json(struct out *o, const char *name, const json_t *j)
{
	const json_t *items = json_is_array(j) ? j : json_object_get(j, "items");
	const json_t *ev = json_object_get(j, "object");

	if (items) {
		for (size_t i = 0; i < json_array_size(items); i++)
			add_doc(o, name, i, json_array_get(items, i));
	} else {
		add_doc(o, name, 0, ev && json_is_object(ev) ? ev : j);
	}
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every file of dir ending in suffix, in name order. */
static void
add_dir(struct out *o, const char *dir, const char *label, const char *suffix, bool yaml)
{
	char *names[128], path[1024], name[512];
	size_t n = 0, sl = strlen(suffix);
	struct dirent *de;
	DIR *dp = opendir(dir);

	CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
	while ((de = readdir(dp)) && n < ELEMENTSOF(names)) {
		size_t l = strlen(de->d_name);

		if (l > sl && strcmp(de->d_name + l - sl, suffix) == 0)
			names[n++] = strdup(de->d_name);
	}
	closedir(dp);
	qsort(names, n, sizeof(names[0]), cmp_str);
	for (size_t f = 0; f < n; f++) {
		char *text = NULL;
		size_t len = 0;

		snprintf(path, sizeof(path), "%s/%s", dir, names[f]);
		snprintf(name, sizeof(name), "%s/%s", label, names[f]);
		CU_ASSERT_EQUAL_FATAL(read_file(path, 1 << 20, &text, &len), 0);
		if (yaml) {
			json_t **docs = NULL;
			unsigned *lines = NULL;
			struct yaml_error yerr;
			int nd = yaml_parse_documents(text, len, &docs, &lines, &yerr);

			for (int i = 0; i < nd; i++) {
				add_doc(o, name, (size_t)i, docs[i]);
				json_decref(docs[i]);
			}
			free(docs);
			free(lines);
		} else {
			json_t *j = json_loadb(text, len, 0, NULL);

			if (j)
				add_json(o, name, j);
			json_decref(j);
		}
		free(text);
		free(names[f]);
	}
}

static void
test_encode_golden(void)
{
	const char *data = test_data_dir();
	struct out o = {0};
	char path[1024], *golden = NULL;
	size_t glen = 0;
	struct ippool zero_pool = {0};
	struct vmnetcfg zero_cfg = {0};
	json_t *input;

	snprintf(path, sizeof(path), "%s/crds-encode-input.json", data);
	input = json_load_file(path, 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(input);
	add_json(&o, "crds-encode-input.json", input);
	json_decref(input);
	snprintf(path, sizeof(path), "%s/../../examples", data);
	add_dir(&o, path, "examples", ".yaml", true);
	snprintf(path, sizeof(path), "%s/../fuzz/corpus/fuzz-crds-ippool", data);
	add_dir(&o, path, "fuzz-crds-ippool", ".json", false);
	snprintf(path, sizeof(path), "%s/../fuzz/corpus/fuzz-crds-ippool-text", data);
	add_dir(&o, path, "fuzz-crds-ippool-text", ".json", false);
	snprintf(path, sizeof(path), "%s/../fuzz/corpus/fuzz-crds-vmnetcfg", data);
	add_dir(&o, path, "fuzz-crds-vmnetcfg", ".json", false);
	/* what is written whatever the struct holds */
	out_line(&o, "zero-ippool", 0, ippool_encode(&zero_pool));
	out_line(&o, "zero-vmnetcfg", 0, vmnetcfg_encode(&zero_cfg));
	CU_ASSERT(o.pools >= 15);
	CU_ASSERT(o.cfgs >= 12);

	snprintf(path, sizeof(path), "%s/crds-encode-golden.txt", data);
	if (getenv("VMDHCP_WRITE_GOLDEN")) {
		FILE *f = fopen(path, "w");

		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		fwrite(o.buf, 1, o.len, f);
		fclose(f);
	}
	CU_ASSERT_EQUAL_FATAL(read_file(path, 1 << 22, &golden, &glen), 0);
	CU_ASSERT_EQUAL(glen, o.len);
	if (glen != o.len || memcmp(golden, o.buf, glen) != 0) {
		/* the first line that differs */
		const char *a = golden, *b = o.buf;

		while (*a && *b) {
			size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");

			if (la != lb || memcmp(a, b, la) != 0) {
				printf(
				    "\n  golden:  %.*s\n  encoded: %.*s\n", (int)la, a, (int)lb, b);
				break;
			}
			a += la + (a[la] != '\0');
			b += lb + (b[lb] != '\0');
		}
		CU_FAIL("encoded output differs from tests/data/crds-encode-golden.txt");
	}
	free(golden);
	free(o.buf);
}

static const struct test_case encode_tests[] = {
    {"encoders write the golden bytes", test_encode_golden},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "crds-encode", .tests = encode_tests},
    {.name = NULL},
};

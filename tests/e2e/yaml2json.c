/* SPDX-License-Identifier: Apache-2.0 */
/*
 * yaml2json FILE... - print every YAML document of the files as one compact JSON line each
 * (kube/yaml.c, the parser the agent's local mode uses), so the end-to-end scripts can POST
 * the CRDs (crds/) and examples (examples/) without python or kubectl. Exit 1 with the file, line
 * and message on a parse error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kube/yaml.h"

static int
read_file(const char *path, char **ret, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL, *nbuf;
	size_t len = 0, cap = 0, n;

	if (f == NULL)
		return -errno;
	for (;;) {
		if (len + 4096 > cap) {
			cap = cap ? cap * 2 : 65536;
			if ((nbuf = realloc(buf, cap)) == NULL) {
				free(buf);
				fclose(f);
				return -ENOMEM;
			}
			buf = nbuf;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	*ret = buf;
	*ret_len = len;
	return 0;
}

int
main(int argc, char **argv)
{
	struct yaml_error err;
	json_t **docs = NULL;
	char *text = NULL, *line;
	size_t len = 0;
	int i, n, j, r, status = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: yaml2json FILE...\n");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		if ((r = read_file(argv[i], &text, &len)) < 0) {
			fprintf(stderr, "yaml2json: %s: %s\n", argv[i], strerror(-r));
			status = 1;
			continue;
		}
		memset(&err, 0, sizeof(err));
		n = yaml_parse_documents(text, len, &docs, NULL, &err);
		free(text);
		if (n < 0) {
			fprintf(stderr, "yaml2json: %s:%u:%u: %s\n", argv[i], err.line, err.column,
			    n == -EINVAL ? err.message : strerror(-n));
			status = 1;
			continue;
		}
		for (j = 0; j < n; j++) {
			line = json_dumps(docs[j], JSON_COMPACT);
			if (line == NULL) {
				status = 1;
			} else {
				puts(line);
				free(line);
			}
			json_decref(docs[j]);
		}
		free(docs);
	}
	return status;
}

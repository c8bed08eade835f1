/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libyaml event stream -> jansson values. A small recursive-descent reader over events:
 * each node is a scalar, a sequence or a mapping; aliases and anchors are refused so a
 * document is always a tree (no billion-laughs expansion, no shared nodes).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "kube/yaml.h"

#define YAML_MAX_DEPTH 128

struct reader {
	yaml_parser_t parser;
	struct yaml_error *err;
	unsigned depth;
};

static void __attribute__((format(printf, 3, 4)))
set_error(struct reader *r, const yaml_mark_t *mark, const char *fmt, ...)
{
	va_list ap;

	if (!r->err)
		return;
	r->err->line = mark ? (unsigned)mark->line + 1 : 0;
	r->err->column = mark ? (unsigned)mark->column + 1 : 0;
	va_start(ap, fmt);
	vsnprintf(r->err->message, sizeof(r->err->message), fmt, ap);
	va_end(ap);
}

/* Returns 0 with *ev filled, or -EINVAL (syntax error recorded) / -ENOMEM. */
static int
next_event(struct reader *r, yaml_event_t *ev)
{
	if (yaml_parser_parse(&r->parser, ev))
		return 0;
	if (r->parser.error == YAML_MEMORY_ERROR) {
		set_error(r, NULL, "out of memory");
		return -ENOMEM;
	}
	if (r->parser.context)
		set_error(r, &r->parser.problem_mark, "%s %s",
		    r->parser.problem ? r->parser.problem : "syntax error", r->parser.context);
	else
		set_error(r, &r->parser.problem_mark, "%s",
		    r->parser.problem ? r->parser.problem : "syntax error");
	return -EINVAL;
}

/* --- scalar typing (YAML 1.2 core schema) ------------------------------------------ */

static bool
is_one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

static const char *const null_words[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const true_words[] = {"true", "True", "TRUE", NULL};
static const char *const false_words[] = {"false", "False", "FALSE", NULL};

static bool
all_in(const char *s, const char *set)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr(set, *s))
			return false;
	return true;
}

/* [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+ */
static bool
parse_int(const char *s, json_int_t *ret, bool *overflow)
{
	const char *digits = s;
	int base = 10;
	char *end;
	long long v;

	*overflow = false;
	if (strncmp(s, "0o", 2) == 0) {
		base = 8;
		digits = s + 2;
		if (!all_in(digits, "01234567"))
			return false;
	} else if (strncmp(s, "0x", 2) == 0) {
		base = 16;
		digits = s + 2;
		if (!all_in(digits, "0123456789abcdefABCDEF"))
			return false;
	} else {
		if (*digits == '-' || *digits == '+')
			digits++;
		if (!all_in(digits, "0123456789"))
			return false;
		digits = s;
	}
	errno = 0;
	v = strtoll(digits, &end, base);
	if (errno == ERANGE)
		*overflow = true;
	*ret = (json_int_t)v;
	return true;
}

/* [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool
is_float(const char *s)
{
	const char *p = s;
	bool mant = false;

	if (*p == '-' || *p == '+')
		p++;
	while (*p >= '0' && *p <= '9') {
		p++;
		mant = true;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			p++;
			mant = true;
		}
	}
	if (!mant)
		return false;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '-' || *p == '+')
			p++;
		if (!(*p >= '0' && *p <= '9'))
			return false;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return *p == '\0';
}

static json_t *
plain_scalar(const char *s)
{
	json_int_t i;
	bool overflow;

	if (is_one_of(s, null_words))
		return json_null();
	if (is_one_of(s, true_words))
		return json_true();
	if (is_one_of(s, false_words))
		return json_false();
	if (parse_int(s, &i, &overflow)) {
		if (!overflow)
			return json_integer(i);
		return json_real(strtod(s, NULL));
	}
	if (is_float(s))
		return json_real(strtod(s, NULL));
	/* .inf/.nan stay strings: JSON cannot carry them. */
	return json_stringn(s, strlen(s));
}

static json_t *
scalar_value(const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	const char *tag = (const char *)ev->data.scalar.tag;

	if (tag && strcmp(tag, YAML_STR_TAG) == 0)
		return json_stringn(s, len);
	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return json_stringn(s, len);
	if (memchr(s, '\0', len))
		return json_stringn(s, len);
	return plain_scalar(s);
}

/* --- tree building ----------------------------------------------------------------- */

static int parse_node(struct reader *r, yaml_event_t *ev, json_t **ret);

static int
check_anchor(struct reader *r, const yaml_event_t *ev, const yaml_char_t *anchor)
{
	if (anchor) {
		set_error(r, &ev->start_mark, "anchors (&%s) are not supported", anchor);
		return -ENOTSUP;
	}
	return 0;
}

static int
parse_sequence(struct reader *r, json_t **ret)
{
	json_t *arr = json_array();
	yaml_event_t ev;
	int rc;

	if (!arr)
		return -ENOMEM;
	for (;;) {
		json_t *item = NULL;

		rc = next_event(r, &ev);
		if (rc < 0)
			goto fail;
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		rc = parse_node(r, &ev, &item);
		yaml_event_delete(&ev);
		if (rc < 0)
			goto fail;
		if (json_array_append_new(arr, item) < 0) {
			rc = -ENOMEM;
			goto fail;
		}
	}
	*ret = arr;
	return 0;
fail:
	json_decref(arr);
	return rc;
}

static int
parse_mapping(struct reader *r, json_t **ret)
{
	json_t *obj = json_object();
	yaml_event_t ev;
	int rc;

	if (!obj)
		return -ENOMEM;
	for (;;) {
		json_t *val = NULL;
		char *key;
		yaml_mark_t mark;

		rc = next_event(r, &ev);
		if (rc < 0)
			goto fail;
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type == YAML_ALIAS_EVENT) {
			set_error(r, &ev.start_mark, "aliases (*%s) are not supported",
			    ev.data.alias.anchor);
			yaml_event_delete(&ev);
			rc = -ENOTSUP;
			goto fail;
		}
		if (ev.type != YAML_SCALAR_EVENT) {
			set_error(r, &ev.start_mark, "mapping keys must be scalars");
			yaml_event_delete(&ev);
			rc = -ENOTSUP;
			goto fail;
		}
		rc = check_anchor(r, &ev, ev.data.scalar.anchor);
		if (rc < 0) {
			yaml_event_delete(&ev);
			goto fail;
		}
		mark = ev.start_mark;
		key = strndup((const char *)ev.data.scalar.value, ev.data.scalar.length);
		yaml_event_delete(&ev);
		if (!key) {
			rc = -ENOMEM;
			goto fail;
		}
		if (strcmp(key, "<<") == 0) {
			set_error(r, &mark, "merge keys (<<) are not supported");
			free(key);
			rc = -ENOTSUP;
			goto fail;
		}
		if (json_object_get(obj, key)) {
			set_error(r, &mark, "duplicate key \"%s\"", key);
			free(key);
			rc = -EINVAL;
			goto fail;
		}
		rc = next_event(r, &ev);
		if (rc < 0) {
			free(key);
			goto fail;
		}
		rc = parse_node(r, &ev, &val);
		yaml_event_delete(&ev);
		if (rc < 0) {
			free(key);
			goto fail;
		}
		rc = json_object_set_new(obj, key, val);
		free(key);
		if (rc < 0) {
			rc = -ENOMEM;
			goto fail;
		}
	}
	*ret = obj;
	return 0;
fail:
	json_decref(obj);
	return rc;
}

/* ev is borrowed (the caller deletes it). */
static int
parse_node(struct reader *r, yaml_event_t *ev, json_t **ret)
{
	int rc;

	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		rc = check_anchor(r, ev, ev->data.scalar.anchor);
		if (rc < 0)
			return rc;
		*ret = scalar_value(ev);
		return *ret ? 0 : -ENOMEM;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		rc = check_anchor(r, ev,
		    ev->type == YAML_SEQUENCE_START_EVENT ? ev->data.sequence_start.anchor
							  : ev->data.mapping_start.anchor);
		if (rc < 0)
			return rc;
		if (++r->depth > YAML_MAX_DEPTH) {
			set_error(r, &ev->start_mark, "nesting deeper than %d", YAML_MAX_DEPTH);
			return -EINVAL;
		}
		rc = ev->type == YAML_SEQUENCE_START_EVENT ? parse_sequence(r, ret)
							   : parse_mapping(r, ret);
		r->depth--;
		return rc;
	case YAML_ALIAS_EVENT:
		set_error(
		    r, &ev->start_mark, "aliases (*%s) are not supported", ev->data.alias.anchor);
		return -ENOTSUP;
	default:
		set_error(r, &ev->start_mark, "unexpected YAML event %d", ev->type);
		return -EINVAL;
	}
}

static bool
is_empty_document(const json_t *root, const yaml_event_t *ev)
{
	return json_is_null(root) && ev->type == YAML_SCALAR_EVENT && ev->data.scalar.length == 0 &&
	       ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

/* The documents parsed so far and the line of each. */
struct doc_list {
	json_t **docs;
	unsigned *lines;
	size_t n, cap;
};

/* Appends root (taken: freed on failure) at line; 0 or -ENOMEM. */
static int
doc_list_add(struct doc_list *d, json_t *root, unsigned line)
{
	if (d->n == d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 4;
		json_t **nd = realloc(d->docs, ncap * sizeof(*nd));
		unsigned *nl;

		if (!nd) {
			json_decref(root);
			return -ENOMEM;
		}
		d->docs = nd;
		nl = realloc(d->lines, ncap * sizeof(*nl));
		if (!nl) {
			json_decref(root);
			return -ENOMEM;
		}
		d->lines = nl;
		d->cap = ncap;
	}
	d->docs[d->n] = root;
	d->lines[d->n] = line;
	d->n++;
	return 0;
}

/*
 * After DOCUMENT_START: the document's node and its DOCUMENT_END. 0 with *ret_root (NULL for
 * an empty document) and *ret_line (where its content starts), or a negative errno.
 */
static int
parse_document(struct reader *r, json_t **ret_root, unsigned *ret_line)
{
	json_t *root = NULL;
	yaml_event_t ev;
	bool empty;
	int rc;

	rc = next_event(r, &ev);
	if (rc < 0)
		return rc;
	/* A document's line is where its content starts. */
	*ret_line = (unsigned)ev.start_mark.line + 1;
	rc = parse_node(r, &ev, &root);
	empty = rc == 0 && is_empty_document(root, &ev);
	yaml_event_delete(&ev);
	if (rc < 0)
		return rc;

	rc = next_event(r, &ev); /* DOCUMENT_END */
	if (rc < 0) {
		json_decref(root);
		return rc;
	}
	yaml_event_delete(&ev);
	if (empty) {
		json_decref(root);
		root = NULL;
	}
	*ret_root = root;
	return 0;
}

int
yaml_parse_documents(
    const char *text, size_t len, json_t ***ret_docs, unsigned **ret_lines, struct yaml_error *err)
{
	struct reader r = {.err = err};
	struct doc_list d = {0};
	yaml_event_t ev;
	int rc;

	if (err)
		memset(err, 0, sizeof(*err));
	if (!yaml_parser_initialize(&r.parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&r.parser, (const unsigned char *)text, len);

	for (;;) {
		json_t *root = NULL;
		unsigned line;

		rc = next_event(&r, &ev);
		if (rc < 0)
			goto fail;
		if (ev.type == YAML_STREAM_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		if (ev.type != YAML_DOCUMENT_START_EVENT) {
			/* STREAM_START */
			yaml_event_delete(&ev);
			continue;
		}
		yaml_event_delete(&ev);
		rc = parse_document(&r, &root, &line);
		if (rc < 0)
			goto fail;
		if (root && (rc = doc_list_add(&d, root, line)) < 0)
			goto fail;
	}
	yaml_parser_delete(&r.parser);
	if (d.n > INT_MAX) {
		rc = -E2BIG;
		goto fail_noparser;
	}
	*ret_docs = d.docs;
	if (ret_lines)
		*ret_lines = d.lines;
	else
		free(d.lines);
	return (int)d.n;

fail:
	yaml_parser_delete(&r.parser);
fail_noparser:
	for (size_t i = 0; i < d.n; i++)
		json_decref(d.docs[i]);
	free(d.docs);
	free(d.lines);
	return rc;
}

int
yaml_parse_one(const char *text, size_t len, json_t **ret, struct yaml_error *err)
{
	json_t **docs = NULL;
	int n;

	n = yaml_parse_documents(text, len, &docs, NULL, err);
	if (n < 0)
		return n;
	if (n != 1) {
		if (err) {
			err->line = 0;
			err->column = 0;
			snprintf(err->message, sizeof(err->message),
			    "expected exactly one YAML document, found %d", n);
		}
		for (int i = 0; i < n; i++)
			json_decref(docs[i]);
		free(docs);
		return -EINVAL;
	}
	*ret = docs[0];
	free(docs);
	return 0;
}

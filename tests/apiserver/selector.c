/* SPDX-License-Identifier: Apache-2.0 */
/* Label and field selectors, with the API server's grammar and matching rules. */
#include "tests/apiserver/selector.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum sel_op {
	OP_EQ,
	OP_NE,
	OP_IN,
	OP_NOTIN,
	OP_EXISTS,
	OP_NOT_EXISTS,
};

struct requirement {
	char *key;
	enum sel_op op;
	char **values;
	size_t nvalues;
};

struct selector {
	bool fields; /* field selector: key is a dotted path into the object */
	struct requirement *reqs;
	size_t nreqs;
};

static char *
strip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static bool
valid_key(const char *k)
{
	if (*k == '\0')
		return false;
	for (; *k != '\0'; k++)
		if (!(isalnum((unsigned char)*k) || strchr("-_./", *k) != NULL))
			return false;
	return true;
}

static bool
valid_value(const char *v)
{
	for (; *v != '\0'; v++)
		if (!(isalnum((unsigned char)*v) || strchr("-_.:/", *v) != NULL))
			return false;
	return true;
}

static void
add_value(struct requirement *r, const char *v)
{
	char **nv = realloc(r->values, (r->nvalues + 1) * sizeof(*nv));

	if (nv == NULL)
		abort();
	r->values = nv;
	r->values[r->nvalues++] = strdup(v);
}

static struct requirement *
add_req(struct selector *sel, const char *key, enum sel_op op)
{
	struct requirement *nr = realloc(sel->reqs, (sel->nreqs + 1) * sizeof(*nr));

	if (nr == NULL)
		abort();
	sel->reqs = nr;
	nr = &sel->reqs[sel->nreqs++];
	nr->key = strdup(key);
	nr->op = op;
	nr->values = NULL;
	nr->nvalues = 0;
	return nr;
}

/* One requirement (already split at top-level commas). */
static int
parse_req(struct selector *sel, char *s)
{
	char *p, *q;

	s = strip(s);
	if (*s == '\0')
		return -EINVAL;
	if (!sel->fields && *s == '!') {
		char *k = strip(s + 1);
		if (!valid_key(k))
			return -EINVAL;
		add_req(sel, k, OP_NOT_EXISTS);
		return 0;
	}
	if ((p = strstr(s, "!=")) != NULL) {
		*p = '\0';
		q = strip(p + 2);
		s = strip(s);
		if (!valid_key(s) || !valid_value(q))
			return -EINVAL;
		add_value(add_req(sel, s, OP_NE), q);
		return 0;
	}
	if ((p = strchr(s, '=')) != NULL) {
		*p = '\0';
		q = p + 1;
		if (*q == '=')
			q++;
		q = strip(q);
		s = strip(s);
		if (!valid_key(s) || !valid_value(q))
			return -EINVAL;
		add_value(add_req(sel, s, OP_EQ), q);
		return 0;
	}
	if (sel->fields)
		return -EINVAL;
	if ((p = strchr(s, '(')) != NULL) {
		/* key in (a,b) / key notin (a,b) */
		char *close = strrchr(p, ')');
		char *key, *op, *save = NULL;
		struct requirement *r;
		enum sel_op o;

		if (close == NULL || strip(close + 1)[0] != '\0')
			return -EINVAL;
		*p = '\0';
		*close = '\0';
		key = strtok_r(s, " \t", &save);
		op = strtok_r(NULL, " \t", &save);
		if (key == NULL || op == NULL || strtok_r(NULL, " \t", &save) != NULL ||
		    !valid_key(key))
			return -EINVAL;
		if (strcmp(op, "in") == 0)
			o = OP_IN;
		else if (strcmp(op, "notin") == 0)
			o = OP_NOTIN;
		else
			return -EINVAL;
		r = add_req(sel, key, o);
		for (char *v = strtok_r(p + 1, ",", &save); v != NULL;
		     v = strtok_r(NULL, ",", &save)) {
			v = strip(v);
			if (!valid_value(v))
				return -EINVAL;
			add_value(r, v);
		}
		if (r->nvalues == 0 && o == OP_IN)
			return -EINVAL;
		return 0;
	}
	if (!valid_key(s))
		return -EINVAL;
	add_req(sel, s, OP_EXISTS);
	return 0;
}

static int
parse(const char *str, bool fields, struct selector **ret)
{
	struct selector *sel = calloc(1, sizeof(*sel));
	char *copy, *start;
	int depth = 0, r = 0;

	if (sel == NULL)
		return -ENOMEM;
	sel->fields = fields;
	if (str == NULL || *str == '\0') {
		*ret = sel;
		return 0;
	}
	copy = strdup(str);
	start = copy;
	for (char *p = copy;; p++) {
		if (*p == '(')
			depth++;
		else if (*p == ')')
			depth--;
		if (*p == '\0' || (*p == ',' && depth == 0)) {
			bool end = *p == '\0';
			*p = '\0';
			r = parse_req(sel, start);
			if (r < 0 || end)
				break;
			start = p + 1;
		}
	}
	free(copy);
	if (r < 0 || depth != 0) {
		selector_free(sel);
		return -EINVAL;
	}
	*ret = sel;
	return 0;
}

int
label_selector_parse(const char *s, struct selector **ret)
{
	return parse(s, false, ret);
}

int
field_selector_parse(const char *s, struct selector **ret)
{
	return parse(s, true, ret);
}

struct selector *
selector_free(struct selector *sel)
{
	if (sel == NULL)
		return NULL;
	for (size_t i = 0; i < sel->nreqs; i++) {
		for (size_t j = 0; j < sel->reqs[i].nvalues; j++)
			free(sel->reqs[i].values[j]);
		free(sel->reqs[i].values);
		free(sel->reqs[i].key);
	}
	free(sel->reqs);
	free(sel);
	return NULL;
}

bool
selector_empty(const struct selector *sel)
{
	return sel == NULL || sel->nreqs == 0;
}

/* Field value at a dotted path, as text ("" when absent). */
static const char *
field_value(json_t *obj, const char *path, char *buf, size_t len)
{
	char tmp[256];
	json_t *v = obj;
	char *save = NULL;

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *k = strtok_r(tmp, ".", &save); k != NULL && v != NULL;
	     k = strtok_r(NULL, ".", &save))
		v = json_object_get(v, k);
	if (v == NULL)
		return "";
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_true(v))
		return "true";
	if (json_is_false(v))
		return "false";
	if (json_is_integer(v)) {
		snprintf(buf, len, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	return "";
}

static bool
has_value(const struct requirement *r, const char *v)
{
	for (size_t i = 0; i < r->nvalues; i++)
		if (strcmp(r->values[i], v) == 0)
			return true;
	return false;
}

bool
selector_match(const struct selector *sel, json_t *obj)
{
	json_t *labels;

	if (selector_empty(sel))
		return true;
	labels = json_object_get(json_object_get(obj, "metadata"), "labels");
	for (size_t i = 0; i < sel->nreqs; i++) {
		const struct requirement *r = &sel->reqs[i];
		char buf[32];
		const char *v;
		bool ok;

		if (sel->fields) {
			v = field_value(obj, r->key, buf, sizeof(buf));
		} else {
			json_t *lv = json_object_get(labels, r->key);
			v = json_is_string(lv) ? json_string_value(lv) : NULL;
		}
		switch (r->op) {
		case OP_EQ:
		case OP_IN:
			ok = v != NULL && has_value(r, v);
			break;
		case OP_NE:
		case OP_NOTIN:
			ok = v == NULL || !has_value(r, v);
			break;
		case OP_EXISTS:
			ok = v != NULL;
			break;
		case OP_NOT_EXISTS:
		default:
			ok = v == NULL;
			break;
		}
		if (!ok)
			return false;
	}
	return true;
}

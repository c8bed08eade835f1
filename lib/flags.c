// SPDX-License-Identifier: Apache-2.0
/* Command-line flags from one table (see flags.h). */
#include "lib/flags.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

#define HELP_COLUMN 30
#define OPT_HELP 0x10000
#define OPT_VERSION 0x10001

int
flags_error(const struct flags *f, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", f->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -EINVAL;
}

/* "  --name ARG" padded to the help column (one blank when wider). */
static void
flag_head(FILE *out, const char *name, const char *arg)
{
	int n = fprintf(out, "  --%s%s%s", name, arg != NULL ? " " : "", arg != NULL ? arg : "");

	fprintf(out, "%*s", n < HELP_COLUMN ? HELP_COLUMN - n : 1, "");
}

void
flags_usage(const struct flags *f, FILE *out)
{
	fputs(f->synopsis, out);
	for (const struct flag *fl = f->table; fl->name != NULL; fl++) {
		const char *h = fl->help != NULL ? fl->help : "";

		flag_head(out, fl->name, fl->arg);
		for (;;) {
			const char *nl = strchr(h, '\n');

			fprintf(out, "%.*s\n", (int)(nl != NULL ? nl - h : (long)strlen(h)), h);
			if (nl == NULL)
				break;
			h = nl + 1;
			fprintf(out, "%*s", HELP_COLUMN, "");
		}
		if (fl->env != NULL)
			fprintf(out, "%*s(environment: $%s)\n", HELP_COLUMN, "", fl->env);
		if (fl->alias != NULL) {
			flag_head(out, fl->alias, fl->arg);
			fprintf(out, "the same as --%s\n", fl->name);
		}
	}
	fprintf(out, "  --help%*s%s\n", HELP_COLUMN - 8, "", "print this help");
	if (f->version != NULL)
		fprintf(out, "  --version%*s%s\n", HELP_COLUMN - 11, "", "print the version");
	if (f->footer != NULL)
		fputs(f->footer, out);
}

/* usec as decimal seconds without trailing zeros: "0.3", "2", "0.001". */
static const char *
seconds(uint64_t usec, char out[32])
{
	int n = snprintf(out, 32, "%llu.%06llu", (unsigned long long)(usec / 1000000),
	    (unsigned long long)(usec % 1000000));

	while (n > 0 && out[n - 1] == '0')
		out[--n] = '\0';
	if (n > 0 && out[n - 1] == '.')
		out[--n] = '\0';
	return out;
}

/*
 * Sets fl from v; label names the source in errors: "--name" (the command line) or
 * "$NAME" (the environment).
 */
static int
set_value(const struct flags *f, const struct flag *fl, const char *label, const char *v)
{
	char err[256];
	uint64_t u;
	int r;

	switch (fl->type) {
	case FLAG_BOOL:
		*(bool *)fl->dst = true;
		return 0;
	case FLAG_STRING:
		*(const char **)fl->dst = v;
		return 0;
	case FLAG_UINT:
		if (parse_uint(v, fl->min, fl->max, &u) < 0)
			return flags_error(f, "%s: \"%s\" is not a number%s%s from %llu to %llu",
			    label, v, fl->unit != NULL ? " of " : "",
			    fl->unit != NULL ? fl->unit : "", (unsigned long long)fl->min,
			    (unsigned long long)fl->max);
		*(uint64_t *)fl->dst = u;
		return 0;
	case FLAG_SECONDS:
		if (parse_seconds_usec(v, 6, fl->max, &u) < 0 || u < fl->min) {
			char lo[32], hi[32];

			return flags_error(f, "%s: \"%s\" is not a number of seconds from %s to %s",
			    label, v, seconds(fl->min, lo), seconds(fl->max, hi));
		}
		*(uint64_t *)fl->dst = u;
		return 0;
	case FLAG_CHOICE:
		for (int i = 0; fl->choices[i] != NULL; i++) {
			if (strcmp(fl->choices[i], v) == 0) {
				*(int *)fl->dst = i;
				return 0;
			}
		}
		fprintf(stderr, "%s: %s: \"%s\" is not ", f->prog, label, v);
		for (int i = 0; fl->choices[i] != NULL; i++)
			fprintf(stderr, "%s%s",
			    i == 0			 ? ""
			    : fl->choices[i + 1] == NULL ? " or "
							 : ", ",
			    fl->choices[i]);
		fputc('\n', stderr);
		return -EINVAL;
	case FLAG_FUNC:
		err[0] = '\0';
		r = fl->parse(fl->dst, v, err, sizeof(err));
		if (r < 0)
			return flags_error(f, "%s: %s", label, err[0] != '\0' ? err : strerror(-r));
		return 0;
	}
	return -EINVAL;
}

/* Go's strconv.ParseBool: 1 / 0 for true / false, -EINVAL for anything else. */
static int
parse_bool(const char *v)
{
	static const char *const yes[] = {"1", "t", "T", "true", "TRUE", "True"};
	static const char *const no[] = {"0", "f", "F", "false", "FALSE", "False"};

	for (size_t i = 0; i < ELEMENTSOF(yes); i++) {
		if (strcmp(v, yes[i]) == 0)
			return 1;
		if (strcmp(v, no[i]) == 0)
			return 0;
	}
	return -EINVAL;
}

/* The flags' environment variables, before the command line (which overrides them). */
static int
apply_env(const struct flags *f)
{
	for (const struct flag *fl = f->table; fl->name != NULL; fl++) {
		const char *v = fl->env != NULL ? getenv(fl->env) : NULL;
		char label[128];
		int r;

		if (v == NULL || v[0] == '\0')
			continue;
		snprintf(label, sizeof(label), "$%s", fl->env);
		if (fl->type == FLAG_BOOL) {
			if ((r = parse_bool(v)) < 0)
				return flags_error(f, "%s: \"%s\" is not true or false", label, v);
			*(bool *)fl->dst = r == 1;
		} else if ((r = set_value(f, fl, label, v)) < 0) {
			return r;
		}
		if (fl->given != NULL)
			*fl->given = true;
	}
	return 0;
}

int
flags_parse(const struct flags *f, int argc, char **argv, int *ret_next)
{
	size_t n = 0, k = 0;
	struct option *opts;
	int c, li, r = 0;

	while (f->table[n].name != NULL)
		n++;
	/* each flag, its alias, --help, --version and the terminator */
	opts = calloc(2 * n + 3, sizeof(*opts));
	if (opts == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int has_arg = f->table[i].type == FLAG_BOOL ? no_argument : required_argument;

		opts[k++] = (struct option){f->table[i].name, has_arg, NULL, (int)i};
		if (f->table[i].alias != NULL)
			opts[k++] = (struct option){f->table[i].alias, has_arg, NULL, (int)i};
	}
	opts[k] = (struct option){"help", no_argument, NULL, OPT_HELP};
	if (f->version != NULL)
		opts[k + 1] = (struct option){"version", no_argument, NULL, OPT_VERSION};
	opterr = 0;
	optind = 1;
	/* --help and --version never fail on a bad environment: they are looked for first */
	for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0 ||
		    (f->version != NULL && strcmp(argv[i], "--version") == 0))
			goto parse;
	r = apply_env(f);
parse:
	while (r == 0 && (li = -1, c = getopt_long(argc, argv, ":h", opts, &li)) != -1) {
		if (c == 'h' || c == OPT_HELP) {
			flags_usage(f, stdout);
			r = 1;
		} else if (c == OPT_VERSION) {
			printf("%s %s\n", f->prog, f->version);
			r = 1;
		} else if (c == ':') {
			r = flags_error(f, "%s needs a value (try --help)", argv[optind - 1]);
		} else if (c == '?') {
			r = flags_error(f, "unknown flag %s (try --help)", argv[optind - 1]);
		} else {
			const struct flag *fl = &f->table[c];
			char label[128];

			if (fl->given != NULL)
				*fl->given = true;
			/* the name as written: an alias is reported as such */
			snprintf(label, sizeof(label), "--%s", li >= 0 ? opts[li].name : fl->name);
			r = set_value(f, fl, label, optarg);
		}
	}
	free(opts);
	if (r == 0)
		*ret_next = optind;
	return r;
}

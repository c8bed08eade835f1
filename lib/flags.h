/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_FLAGS_H
#define VMDHCP_LIB_FLAGS_H

/*
 * Command-line flags from one table: getopt_long, the --help text and the checks of numbers,
 * seconds and choices come from the same entries, so a flag cannot be parsed one way and
 * documented another. Every program exits the same way: 0 after --help or --version (printed
 * on stdout), FLAGS_EXIT_USAGE (2) after a bad flag, with one line on stderr naming it:
 *
 *	prog: --history: "x" is not a number from 0 to 100000000
 *
 * Long flags only ("--name VALUE" or "--name=VALUE"), plus -h for --help.
 *
 * A flag may have an alias (a second name, parsed alike and listed in the help) and an
 * environment variable that gives its value when the command line does not: the command
 * line wins over the environment, the environment over the default. An empty variable is
 * unset. FLAG_BOOL takes from its variable 1, t, T, true, TRUE, True (true) or 0, f, F,
 * false, FALSE, False (false), Go's strconv.ParseBool; any other value, like a bad value of
 * any type, is refused with one line naming the variable:
 *
 *	prog: $VM_DHCP_AGENT_DEBUG: "yes" is not true or false
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FLAGS_EXIT_USAGE 2

enum flag_type {
	FLAG_BOOL,    /* no value: *(bool *)dst = true */
	FLAG_STRING,  /* *(const char **)dst = the value (argv's own storage) */
	FLAG_UINT,    /* *(uint64_t *)dst, from min to max (in unit, when given) */
	FLAG_SECONDS, /* *(uint64_t *)dst in microseconds: up to 6 decimals, min..max usec */
	FLAG_CHOICE,  /* *(int *)dst = the value's index in choices (NULL-terminated) */
	FLAG_FUNC,    /* parse(dst, value, err, len): 0, or negative errno with err filled */
};

struct flag {
	const char *name; /* without the dashes; NULL ends a table */
	enum flag_type type;
	void *dst;
	const char *arg;  /* the value's name in the help ("FILE"); NULL for FLAG_BOOL */
	const char *help; /* '\n' starts a new line of the help text */
	uint64_t min, max;
	const char *unit; /* FLAG_UINT: what is counted, for the error ("seconds"); NULL: none */
	const char *const *choices;
	int (*parse)(void *dst, const char *value, char *err, size_t len);
	bool *given; /* set when the flag appears, or its env variable is set (NULL: not tracked) */
	const char *alias; /* another name ("image" for "agent-image"), or NULL */
	const char *env;   /* environment variable giving the value ("AGENT_IMAGE"), or NULL */
};

struct flags {
	const char *prog;	  /* "vm-dhcp-agent" */
	const char *synopsis;	  /* "usage: ..." lines, printed first */
	const char *footer;	  /* printed after the flags, or NULL */
	const char *version;	  /* --version prints "prog VERSION"; NULL: no --version */
	const struct flag *table; /* ends with an entry whose name is NULL */
};

/*
 * Parses argv against f->table. Returns 0 when the program goes on (*ret_next: the index of
 * the first operand); 1 when --help or --version was printed (exit 0); -EINVAL when a flag
 * was bad, unknown or missing its value, after one line on stderr (exit FLAGS_EXIT_USAGE);
 * -ENOMEM.
 */
int flags_parse(const struct flags *f, int argc, char **argv, int *ret_next);

/* The exit status for flags_parse()'s non-zero returns: 0 after help, 2 otherwise. */
static inline int
flags_exit_status(int r)
{
	return r > 0 ? 0 : FLAGS_EXIT_USAGE;
}

/* The --help text. */
void flags_usage(const struct flags *f, FILE *out);

/* "prog: message" and a newline on stderr; returns -EINVAL (for checks across flags). */
int flags_error(const struct flags *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif

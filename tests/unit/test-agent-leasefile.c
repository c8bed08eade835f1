/* SPDX-License-Identifier: Apache-2.0 */
/* agent/leasefile.c: round trip, journal appends, atomic rewrite, torn and corrupt files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "lib/util.h"
#include "tests/runner.h"

static char dir[64];
static char path[128];

static int
suite_init(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test-agent-leasefile.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/leases", dir);
	return 0;
}

static int
suite_cleanup(void)
{
	char tmp[160];

	unlink(path);
	snprintf(tmp, sizeof(tmp), "%s/other", dir);
	unlink(tmp);
	rmdir(dir);
	return 0;
}

static void
write_text(const char *p, const char *text)
{
	FILE *f = fopen(p, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static char *
slurp(const char *p)
{
	char *text = NULL;
	size_t len;

	if (read_file(p, 64 << 20, &text, &len) < 0)
		return NULL;
	return text;
}

static void
mac_n(uint8_t mac[6], unsigned n)
{
	static const uint8_t base[6] = {0x52, 0x54, 0x00, 0, 0, 0};

	memcpy(mac, base, 6);
	mac[3] = (uint8_t)(n >> 16);
	mac[4] = (uint8_t)(n >> 8);
	mac[5] = (uint8_t)n;
}

static void
test_round_trip(void)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "";
	uint8_t mac[6];
	uint32_t ip = 0;

	unlink(path);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(leasefile_count(lf), 0u);
	/* the file exists (created at open) */
	CU_ASSERT_EQUAL(access(path, F_OK), 0);
	for (unsigned i = 0; i < 1000; i++) {
		mac_n(mac, i);
		CU_ASSERT_EQUAL(leasefile_add(lf, mac, 0x0a000100u + i), 0);
	}
	/* update one: the later line wins */
	mac_n(mac, 7);
	CU_ASSERT_EQUAL(leasefile_add(lf, mac, 0x0a0009ffu), 0);
	CU_ASSERT_EQUAL(leasefile_flush(lf), 0);
	CU_ASSERT_EQUAL(leasefile_count(lf), 1000u);
	/* simulate kill -9: no compaction, the journal alone must carry everything */
	{
		struct leasefile *lf2 = NULL;
		CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf2, err, sizeof(err)), 0);
		CU_ASSERT_EQUAL(leasefile_loaded(lf2), 1000u);
		mac_n(mac, 999);
		CU_ASSERT_EQUAL(leasefile_lookup(lf2, mac, &ip), 0);
		CU_ASSERT_EQUAL(ip, 0x0a000100u + 999);
		mac_n(mac, 7);
		CU_ASSERT_EQUAL(leasefile_lookup(lf2, mac, &ip), 0);
		CU_ASSERT_EQUAL(ip, 0x0a0009ffu);
		mac_n(mac, 5000);
		CU_ASSERT_EQUAL(leasefile_lookup(lf2, mac, &ip), -ENOENT);
		leasefile_free(lf2);
	}
	leasefile_free(lf);
}

static void
test_compaction_is_atomic_rename(void)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "";
	struct stat before, after;
	uint8_t mac[6];
	char *text;

	unlink(path);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf, err, sizeof(err)), 0);
	mac_n(mac, 1);
	CU_ASSERT_EQUAL(leasefile_add(lf, mac, 0x0a000001u), 0);
	mac_n(mac, 2);
	CU_ASSERT_EQUAL(leasefile_add(lf, mac, 0x0a000002u), 0);
	CU_ASSERT_EQUAL(leasefile_flush(lf), 0);
	CU_ASSERT_EQUAL(leasefile_remove(lf, mac), 0);
	CU_ASSERT_EQUAL(leasefile_remove(lf, mac), -ENOENT);
	CU_ASSERT_EQUAL_FATAL(stat(path, &before), 0);
	CU_ASSERT_EQUAL(leasefile_compact(lf), 0);
	CU_ASSERT_EQUAL_FATAL(stat(path, &after), 0);
	/* a new inode replaced the old one: written beside and renamed, never in place */
	CU_ASSERT_NOT_EQUAL(before.st_ino, after.st_ino);
	text = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "52:54:00:00:00:01 10.0.0.1\n"));
	CU_ASSERT_PTR_NULL(strstr(text, "10.0.0.2"));
	free(text);
	/* the journal follows the new file */
	mac_n(mac, 3);
	CU_ASSERT_EQUAL(leasefile_add(lf, mac, 0x0a000003u), 0);
	CU_ASSERT_EQUAL(leasefile_flush(lf), 0);
	text = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "52:54:00:00:00:03 10.0.0.3\n"));
	free(text);
	leasefile_free(lf);
	/* no temp file left behind */
	{
		char tmp[200];
		snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
		CU_ASSERT_NOT_EQUAL(access(tmp, F_OK), 0);
	}
}

static void
test_torn_last_line_ignored(void)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "";
	uint8_t mac[6];
	uint32_t ip;

	write_text(path, "# header\n52:54:00:00:00:01 10.0.0.1\n\n52:54:00:00:00:02 10.0.");
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(leasefile_count(lf), 1u);
	mac_n(mac, 2);
	CU_ASSERT_EQUAL(leasefile_lookup(lf, mac, &ip), -ENOENT);
	leasefile_free(lf);
	/* and the rewrite at open removed the torn tail */
	{
		char *text = slurp(path);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		CU_ASSERT_PTR_NULL(strstr(text, "10.0.\n"));
		CU_ASSERT_PTR_NULL(strstr(text, ":02 "));
		free(text);
	}
}

static void
test_corrupt_file_errors(void)
{
	static const struct {
		const char *text;
		const char *want;
	} cases[] = {
	    {"52:54:00:00:00:01 10.0.0.1\nzz:54:00:00:00:01 10.0.0.2\n",
		"line 2: \"zz:54:00:00:00:01\" is not a MAC address"},
	    {"52:54:00:00:00:01 10.0.0.300\n", "line 1: \"10.0.0.300\" is not an IPv4 address"},
	    {"# c\n52:54:00:00:00:01\n", "line 2: expected \"MAC IP\""},
	    {"52:54:00:00:00:01 10.0.0.1 extra\n", "line 1: expected \"MAC IP\""},
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		struct leasefile *lf = NULL;
		char err[AGENT_ERR_MAX] = "";
		char *text;

		write_text(path, cases[i].text);
		CU_ASSERT_EQUAL(leasefile_open(path, &lf, err, sizeof(err)), -EINVAL);
		CU_ASSERT_PTR_NULL(lf);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, path));
		CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].want));
		if (strstr(err, cases[i].want) == NULL)
			fprintf(stderr, "case %zu: got \"%s\"\n", i, err);
		/* a corrupt file is left untouched for the operator */
		text = slurp(path);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		CU_ASSERT_STRING_EQUAL(text, cases[i].text);
		free(text);
	}
}

static void
test_journal_grows_and_survives(void)
{
	struct leasefile *lf = NULL, *lf2 = NULL;
	char err[AGENT_ERR_MAX] = "";
	uint8_t mac[6];
	uint32_t ip = 0;
	struct stat st;
	size_t data_len;
	char *text;

	unlink(path);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf, err, sizeof(err)), 0);
	/* 60 000 lines are ~1.8 MB: past the first reserved journal space */
	for (unsigned i = 0; i < 60000; i++) {
		mac_n(mac, i);
		CU_ASSERT_EQUAL_FATAL(leasefile_add(lf, mac, 0x0a000000u + i), 0);
	}
	/* while open, the file is text: its reserved tail is spaces, not NULs */
	CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
	text = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_EQUAL(strlen(text), (size_t)st.st_size);
	CU_ASSERT(text[st.st_size - 1] == ' ');
	free(text);
	/* no flush, no free: what a kill -9 leaves is what another process reads */
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf2, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(leasefile_loaded(lf2), 60000u);
	mac_n(mac, 59999);
	CU_ASSERT_EQUAL(leasefile_lookup(lf2, mac, &ip), 0);
	CU_ASSERT_EQUAL(ip, 0x0a000000u + 59999);
	leasefile_free(lf2);
	leasefile_free(lf);
	/* a clean close leaves no reserved space behind: the file ends with its last line */
	CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
	text = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	data_len = strlen(text);
	CU_ASSERT_EQUAL((size_t)st.st_size, data_len);
	CU_ASSERT(data_len > 0 && text[data_len - 1] == '\n');
	free(text);
}

static void
test_reserved_space_and_torn_line(void)
{
	static const char data[] = "52:54:00:00:00:01 10.0.0.1\n52:54:00:00:00:02 10.0";
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "";
	uint8_t mac[6];
	uint32_t ip;
	FILE *f = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fwrite(data, 1, sizeof(data) - 1, f);
	for (int i = 0; i < 5000; i++)
		fputc(0, f); /* the zeros of a reserved, never written journal tail */
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(leasefile_count(lf), 1u);
	mac_n(mac, 1);
	CU_ASSERT_EQUAL(leasefile_lookup(lf, mac, &ip), 0);
	CU_ASSERT_EQUAL(ip, 0x0a000001u);
	leasefile_free(lf);
}

static void
test_memory_only(void)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "";
	uint8_t mac[6];
	uint32_t ip;

	CU_ASSERT_EQUAL_FATAL(leasefile_open(NULL, &lf, err, sizeof(err)), 0);
	mac_n(mac, 9);
	CU_ASSERT_EQUAL(leasefile_add(lf, mac, 0x0a000009u), 0);
	CU_ASSERT_EQUAL(leasefile_flush(lf), 0);
	CU_ASSERT_EQUAL(leasefile_compact(lf), 0);
	CU_ASSERT_EQUAL(leasefile_lookup(lf, mac, &ip), 0);
	CU_ASSERT_EQUAL(ip, 0x0a000009u);
	CU_ASSERT_PTR_NULL(leasefile_free(lf));
	CU_ASSERT_PTR_NULL(leasefile_free(NULL));
}

static void
test_many_removals_keep_table_usable(void)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "";
	uint8_t mac[6];
	uint32_t ip;

	CU_ASSERT_EQUAL_FATAL(leasefile_open(NULL, &lf, err, sizeof(err)), 0);
	/* churn: tombstones must never fill the table */
	for (unsigned round = 0; round < 50; round++) {
		for (unsigned i = 0; i < 200; i++) {
			mac_n(mac, round * 1000 + i);
			CU_ASSERT_EQUAL(leasefile_add(lf, mac, i + 1), 0);
		}
		for (unsigned i = 0; i < 200; i++) {
			mac_n(mac, round * 1000 + i);
			CU_ASSERT_EQUAL(leasefile_remove(lf, mac), 0);
		}
	}
	CU_ASSERT_EQUAL(leasefile_count(lf), 0u);
	mac_n(mac, 1);
	CU_ASSERT_EQUAL(leasefile_lookup(lf, mac, &ip), -ENOENT);
	leasefile_free(lf);
}

static const struct test_case leasefile_tests[] = {
    {"round trip through the journal", test_round_trip},
    {"compaction writes a new file and renames it", test_compaction_is_atomic_rename},
    {"torn last line is ignored", test_torn_last_line_ignored},
    {"corrupt file names the line", test_corrupt_file_errors},
    {"journal grows past its reserve, readable after kill -9", test_journal_grows_and_survives},
    {"reserved NUL tail and a torn line", test_reserved_space_and_torn_line},
    {"memory only without a path", test_memory_only},
    {"churn with removals", test_many_removals_keep_table_usable},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "agent-leasefile",
	.init = suite_init,
	.cleanup = suite_cleanup,
	.tests = leasefile_tests},
    {.name = NULL},
};

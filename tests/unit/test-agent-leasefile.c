/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent/leasefile*.c: round trip, journal appends, atomic rewrite, torn files, bad lines moved to
 * the quarantine file, a full disk (a tmpfs in a private mount namespace; root); leases keyed by
 * client identifiers (id=, v2), v1 files, which later line wins.
 *
 * Size: about 1100 lines, one file on purpose: every case exercises one file format through
 * the same read/write fixtures.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/dynamic.h"
#include "agent/leasefile-internal.h"
#include "agent/leasefile.h"
#include "agent/pool-config.h"
#include "agent/source.h"
#include "lib/util.h"
#include "tests/runner.h"

static char dir[64];
static char path[128];
static char qpath[160]; /* path's quarantine file */

static int
suite_init(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test-agent-leasefile.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/leases", dir);
	snprintf(qpath, sizeof(qpath), "%s.quarantine", path);
	return 0;
}

static int
suite_cleanup(void)
{
	char tmp[160];

	unlink(path);
	unlink(qpath);
	snprintf(tmp, sizeof(tmp), "%s/other", dir);
	unlink(tmp);
	/* a full-disk test stopped by a fatal assertion leaves its tmpfs */
	snprintf(tmp, sizeof(tmp), "%s/small", dir);
	(void)umount2(tmp, MNT_DETACH);
	rmdir(tmp);
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

/* ---- bad lines: quarantined, never fatal ------------------------------------------------- */

/* A lease file under construction: its text, the bytes that must be quarantined, good leases. */
struct sample {
	char text[16384];
	size_t len;
	char bad[16384];
	size_t bad_len, bad_lines;
	unsigned good[32];
	size_t n_good;
};

static void
sample_raw(struct sample *s, const void *p, size_t n)
{
	CU_ASSERT_FATAL(s->len + n <= sizeof(s->text));
	memcpy(s->text + s->len, p, n);
	s->len += n;
}

/* a lease line 52:54:00:00:00:KK 10.0.0.K (eol "\n" or "\r\n") */
static void
sample_good(struct sample *s, unsigned k, const char *eol)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "52:54:00:00:00:%02x 10.0.0.%u%s", k, k, eol);

	sample_raw(s, line, (size_t)n);
	s->good[s->n_good++] = k;
}

/* n bad bytes: one bad line (ending with '\n', or the last bytes of the file) */
static void
sample_bad(struct sample *s, const void *p, size_t n)
{
	sample_raw(s, p, n);
	memcpy(s->bad + s->bad_len, p, n);
	s->bad_len += n;
	s->bad_lines++;
}

/*
 * Random binary lines: every byte but '\n' (NULs included), each line's first byte >= 0x80
 * (never blank, never a comment). Deterministic (xorshift).
 */
static void
sample_garbage(struct sample *s, uint32_t seed, unsigned lines)
{
	char line[256];

	for (unsigned l = 0; l < lines; l++) {
		size_t n = 1 + (seed % 200);
		for (size_t i = 0; i < n; i++) {
			seed ^= seed << 13;
			seed ^= seed >> 17;
			seed ^= seed << 5;
			line[i] = (char)(seed & 0xff);
			if (line[i] == '\n')
				line[i] = '\0';
		}
		line[0] = (char)(line[0] | 0x80);
		line[n] = '\n';
		sample_bad(s, line, n + 1);
	}
}

static void
unlink_quarantine(void)
{
	unlink(qpath);
}

/*
 * Writes s as the lease file and opens it: opening succeeds, every good lease is there, the
 * quarantine file got exactly the bad bytes (appended to what it held), the rewritten file has
 * the good leases and no bad line.
 */
static void
check_sample(const char *name, const struct sample *s)
{
	struct leasefile *lf = NULL, *lf2 = NULL;
	char err[AGENT_ERR_MAX] = "", *before = NULL, *after = NULL;
	size_t before_len = 0, after_len = 0;
	uint8_t mac[6];
	uint32_t ip;
	FILE *f;

	fprintf(stderr, "  [%s]\n", name);
	(void)read_file(qpath, 1 << 20, &before, &before_len);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fwrite(s->text, 1, s->len, f), s->len);
	fclose(f);

	CU_ASSERT_EQUAL(leasefile_open(path, &lf, err, sizeof(err)), 0);
	if (lf == NULL) {
		fprintf(stderr, "%s: %s\n", name, err);
		free(before);
		return;
	}
	CU_ASSERT_EQUAL(leasefile_count(lf), s->n_good);
	CU_ASSERT_EQUAL(leasefile_rejected(lf), s->bad_lines);
	for (size_t i = 0; i < s->n_good; i++) {
		mac_n(mac, s->good[i]);
		CU_ASSERT_EQUAL(leasefile_lookup(lf, mac, &ip), 0);
		CU_ASSERT_EQUAL(ip, 0x0a000000u + s->good[i]);
	}
	leasefile_free(lf);

	if (s->bad_len == 0 && before == NULL) {
		CU_ASSERT_NOT_EQUAL(access(qpath, F_OK), 0); /* nothing bad: no side file */
	} else {
		CU_ASSERT_EQUAL_FATAL(read_file(qpath, 1 << 20, &after, &after_len), 0);
		CU_ASSERT_EQUAL(after_len, before_len + s->bad_len);
		if (after_len == before_len + s->bad_len) {
			CU_ASSERT(before_len == 0 || memcmp(after, before, before_len) == 0);
			CU_ASSERT(memcmp(after + before_len, s->bad, s->bad_len) == 0);
		}
		free(after);
	}
	free(before);

	/* the rewrite kept the good leases and nothing else */
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf2, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(leasefile_loaded(lf2), s->n_good);
	CU_ASSERT_EQUAL(leasefile_rejected(lf2), 0u);
	leasefile_free(lf2);
}

static void
test_nul_in_the_middle(void)
{
	static const char nul_in_ip[] = "52:54:00:00:00:02 10.0\0.0.2\n";
	/* sscanf would stop at the NUL and read a lease; the bytes after it say otherwise */
	static const char nul_after[] = "52:54:00:00:00:04 10.0.0.4\0"
					"5\n";
	static const char nuls[] = "\0\0\0\0\0\0\n";
	struct sample *s = calloc(1, sizeof(*s));

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	unlink_quarantine();
	sample_raw(s, "# header\n", 9);
	sample_good(s, 1, "\n");
	sample_bad(s, nul_in_ip, sizeof(nul_in_ip) - 1);
	sample_good(s, 3, "\n");
	sample_bad(s, nul_after, sizeof(nul_after) - 1);
	sample_bad(s, nuls, sizeof(nuls) - 1);
	sample_good(s, 6, "\n");
	sample_good(s, 7, "\n");
	check_sample("NUL in the middle", s);
	free(s);
}

static void
test_binary_garbage_between_good_lines(void)
{
	struct sample *s = calloc(1, sizeof(*s));

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	unlink_quarantine();
	sample_good(s, 1, "\n");
	sample_good(s, 2, "\n");
	sample_garbage(s, 0x12345678u, 20);
	sample_good(s, 3, "\n");
	sample_garbage(s, 0x9abcdef1u, 5);
	sample_good(s, 4, "\n");
	check_sample("binary garbage between good lines", s);
	free(s);
}

static void
test_overlong_line(void)
{
	struct sample *s = calloc(1, sizeof(*s));
	char line[1200];

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	unlink_quarantine();
	sample_good(s, 1, "\n");
	memset(line, 'a', 1000);
	line[1000] = '\n';
	sample_bad(s, line, 1001);
	/* a valid lease buried in a long line is still a bad line */
	memset(line, 'b', 200);
	memcpy(line + 200, " 52:54:00:00:00:09 10.0.0.9\n", 28);
	sample_bad(s, line, 228);
	/* spaces before a lease (a journal reserve that could not be cut) are no harm */
	memset(line, ' ', 1000);
	sample_raw(s, line, 1000);
	sample_good(s, 2, "\n");
	sample_good(s, 3, "\n");
	check_sample("over-long line", s);
	free(s);
}

static void
test_bad_mac(void)
{
	static const char zz[] = "zz:54:00:00:00:02 10.0.0.2\n",
			  five[] = "52:54:00:00:00 10.0.0.3\n", alone[] = "52:54:00:00:00:05\n";
	struct sample *s = calloc(1, sizeof(*s));

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	unlink_quarantine();
	sample_good(s, 1, "\n");
	sample_bad(s, zz, sizeof(zz) - 1);
	sample_bad(s, five, sizeof(five) - 1);
	sample_good(s, 4, "\n");
	sample_bad(s, alone, sizeof(alone) - 1);
	sample_good(s, 6, "\n");
	check_sample("bad MAC", s);
	/* the same bad lines again: appended to the quarantine file, which keeps the first */
	check_sample("bad MAC, again: the quarantine file is appended to", s);
	free(s);
}

static void
test_bad_ip(void)
{
	static const char big[] = "52:54:00:00:00:02 10.0.0.300\n",
			  zero[] = "52:54:00:00:00:03 10.00.0.3\n",
			  extra[] = "52:54:00:00:00:04 10.0.0.4 extra\n",
			  v6[] = "52:54:00:00:00:05 fe80::1\n";
	struct sample *s = calloc(1, sizeof(*s));

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	unlink_quarantine();
	sample_good(s, 1, "\n");
	sample_bad(s, big, sizeof(big) - 1);
	sample_bad(s, zero, sizeof(zero) - 1);
	sample_bad(s, extra, sizeof(extra) - 1);
	sample_bad(s, v6, sizeof(v6) - 1);
	sample_good(s, 6, "\n");
	check_sample("bad IP", s);
	free(s);
}

static void
test_torn_line_not_quarantined(void)
{
	static const char torn[] = "52:54:00:00:00:03 10.0.";
	struct sample *s = calloc(1, sizeof(*s));
	char spaces[600];

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	unlink_quarantine();
	sample_good(s, 1, "\n");
	sample_good(s, 2, "\n");
	sample_raw(s, torn, sizeof(torn) - 1); /* interrupted write: ignored as before */
	check_sample("torn last line", s);
	/* the same inside the journal's reserve (spaces) */
	memset(spaces, ' ', sizeof(spaces));
	sample_raw(s, spaces, sizeof(spaces));
	check_sample("torn last line in the reserve", s);
	free(s);
}

static void
test_crlf_accepted(void)
{
	struct sample *s = calloc(1, sizeof(*s));

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	unlink_quarantine();
	/* an editor's CRLF is no corruption: the lines are read as they are meant */
	sample_raw(s, "# edited on Windows\r\n", 21);
	sample_good(s, 1, "\r\n");
	sample_raw(s, "\r\n", 2);
	sample_good(s, 2, "\r\n");
	sample_good(s, 3, "\n");
	check_sample("CRLF", s);
	free(s);
}

static void
test_entirely_garbage(void)
{
	static const char tail[] = "\xff\x01 not a lease";
	struct sample *s = calloc(1, sizeof(*s));

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	unlink_quarantine();
	sample_garbage(s, 0xdeadbeefu, 40);
	/* no newline at the end, and no lease's start: not a torn line, so it is kept too */
	sample_bad(s, tail, sizeof(tail) - 1);
	CU_ASSERT_EQUAL(s->len, s->bad_len);
	check_sample("entirely garbage", s);
	free(s);
}

/* ---- a full disk: a lease not in the file is not recorded -------------------------------- */

static char small[128];

/* A tmpfs of size on dir/small, in a mount namespace of this process only. 0, or skipped. */
static int
mount_small(const char *size)
{
	static bool unshared;
	char opts[64];

	if (geteuid() != 0) {
		test_skip("needs root (a mount namespace with a small tmpfs)");
		return -1;
	}
	if (!unshared) {
		/* private: the tmpfs is seen by this process only, and goes with it */
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount("none", "/", "none", MS_REC | MS_PRIVATE, "") < 0) {
			test_skip("no private mount namespace: %s", strerror(errno));
			return -1;
		}
		unshared = true;
	}
	snprintf(small, sizeof(small), "%s/small", dir);
	(void)mkdir(small, 0700);
	snprintf(opts, sizeof(opts), "size=%s,mode=0700", size);
	if (mount("tmpfs", small, "tmpfs", 0, opts) < 0) {
		test_skip("cannot mount a tmpfs: %s", strerror(errno));
		rmdir(small);
		return -1;
	}
	return 0;
}

static void
umount_small(void)
{
	CU_ASSERT_EQUAL(umount2(small, MNT_DETACH), 0);
	rmdir(small);
}

/* Fills the tmpfs with small/fill up to ENOSPC. */
static void
fill_disk(void)
{
	char fill[160], block[4096];
	int fd, e = 0;

	snprintf(fill, sizeof(fill), "%s/fill", small);
	memset(block, 'x', sizeof(block));
	fd = open(fill, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	for (;;) {
		if (write(fd, block, sizeof(block)) < 0) {
			e = errno;
			break;
		}
	}
	close(fd);
	CU_ASSERT_EQUAL(e, ENOSPC);
}

static void
free_disk(void)
{
	char fill[160];

	snprintf(fill, sizeof(fill), "%s/fill", small);
	CU_ASSERT_EQUAL(unlink(fill), 0);
}

/*
 * Adds leases 0, 1, ... to lf on a full disk until one fails: it fails with -ENOSPC and is not
 * kept; once there is room, the refused one is added; the file holds all of them, whole.
 */
static void
check_full_disk(const char *lpath, struct leasefile *lf)
{
	struct leasefile *lf2 = NULL;
	char err[AGENT_ERR_MAX] = "";
	unsigned i, ok;
	uint8_t mac[6];
	uint32_t ip;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int r = 0;

	fill_disk();
	for (i = 0; i < 200000; i++) {
		mac_n(mac, i);
		if ((r = leasefile_add(lf, mac, 0x0a000000u + i)) == 0)
			r = leasefile_flush(lf);
		if (r < 0)
			break;
	}
	ok = i;
	CU_ASSERT_EQUAL(r, -ENOSPC);
	CU_ASSERT_EQUAL(leasefile_append_errors(lf), 1u);
	/* not recorded: never answered, nothing to hand out twice after a restart */
	mac_n(mac, ok);
	CU_ASSERT_EQUAL(leasefile_lookup(lf, mac, &ip), -ENOENT);
	CU_ASSERT_EQUAL(leasefile_count(lf), ok);
	/* a second try while still full fails the same way */
	CU_ASSERT_EQUAL(leasefile_add(lf, mac, 0x0a000000u + ok), -ENOSPC);
	CU_ASSERT_EQUAL(leasefile_lookup(lf, mac, &ip), -ENOENT);

	/* room again: the next one is written (the disk is read as another process would) */
	free_disk();
	CU_ASSERT_EQUAL(leasefile_add(lf, mac, 0x0a000000u + ok), 0);
	CU_ASSERT_EQUAL(leasefile_lookup(lf, mac, &ip), 0);
	/* read a copy (opening rewrites, which needs room on the small disk) */
	CU_ASSERT_EQUAL_FATAL(read_file(lpath, 64 << 20, &text, &len), 0);
	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fwrite(text, 1, len, f), len);
	fclose(f);
	free(text);
	unlink_quarantine();
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf2, err, sizeof(err)), 0);
	/* every lease answered is in the file, whole: no piece of the refused line glued on */
	CU_ASSERT_EQUAL(leasefile_loaded(lf2), ok + 1);
	CU_ASSERT_EQUAL(leasefile_rejected(lf2), 0u);
	for (i = 0; i <= ok; i++) {
		mac_n(mac, i);
		if (leasefile_lookup(lf2, mac, &ip) != 0 || ip != 0x0a000000u + i) {
			CU_FAIL("a lease is missing from the file");
			break;
		}
	}
	leasefile_free(lf2);
	CU_ASSERT_NOT_EQUAL(access(qpath, F_OK), 0); /* no bad line */
}

static void
test_disk_full_write(void)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "", lpath[160];

	/* smaller than the journal's reserve: not mapped, one write() per lease */
	if (mount_small("64k") < 0)
		return;
	snprintf(lpath, sizeof(lpath), "%s/leases", small);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(lpath, &lf, err, sizeof(err)), 0);
	check_full_disk(lpath, lf);
	leasefile_free(lf);
	umount_small();
}

static void
test_disk_full_mapped(void)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "", lpath[160];
	struct stat st;

	/* room for the first reserve, not for the next: the window cannot slide */
	if (mount_small("320k") < 0)
		return;
	snprintf(lpath, sizeof(lpath), "%s/leases", small);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(lpath, &lf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(stat(lpath, &st), 0);
	CU_ASSERT(st.st_size >= 256 << 10); /* mapped: the reserve is there */
	check_full_disk(lpath, lf);
	leasefile_free(lf);
	umount_small();
}

#define DYN_POOL                                                                                   \
	"apiVersion: network.harvesterhci.io/v1alpha1\n"                                           \
	"kind: IPPool\n"                                                                           \
	"metadata:\n"                                                                              \
	"  name: net1\n"                                                                           \
	"  namespace: default\n"                                                                   \
	"spec:\n"                                                                                  \
	"  networkName: net1\n"                                                                    \
	"  ipv4Config:\n"                                                                          \
	"    serverIP: 10.0.0.2\n"                                                                 \
	"    cidr: 10.0.0.0/16\n"                                                                  \
	"    pool:\n"                                                                              \
	"      start: 10.0.1.0\n"                                                                  \
	"      end: 10.0.40.255\n"                                                                 \
	"    router: 10.0.0.1\n"

static void
test_disk_full_dynamic_undone(void)
{
	struct agent_config *c = NULL;
	struct leasefile *lf = NULL;
	struct agent_dynamic *d = NULL;
	char err[AGENT_ERR_MAX] = "", lpath[160];
	uint32_t ip = 0, last = 0;
	uint8_t mac[6];
	size_t avail;
	unsigned i;
	int r = 0;

	if (mount_small("64k") < 0)
		return;
	snprintf(lpath, sizeof(lpath), "%s/leases", small);
	CU_ASSERT_EQUAL_FATAL(
	    agent_config_parse("pool.yaml", DYN_POOL, strlen(DYN_POOL), NULL, &c, err, sizeof(err)),
	    0);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(lpath, &lf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(agent_dynamic_new(c, lf, &d), 0);
	fill_disk();
	for (i = 0; i < 5000; i++) {
		mac_n(mac, i);
		avail = agent_dynamic_available(d);
		if ((r = agent_dynamic_allocate(d, mac, &ip)) < 0)
			break;
		last = ip;
	}
	CU_ASSERT_EQUAL(r, -ENOSPC);
	CU_ASSERT(i > 0 && i < 5000);
	/* the address went back to the pool, the MAC got nothing */
	CU_ASSERT_EQUAL(agent_dynamic_available(d), avail);
	CU_ASSERT_EQUAL(leasefile_lookup(lf, mac, &ip), -ENOENT);
	free_disk();
	/* serving resumes: the same MAC gets the very address it was refused, the next free */
	CU_ASSERT_EQUAL(agent_dynamic_allocate(d, mac, &ip), 0);
	CU_ASSERT_EQUAL(ip, last + 1);
	CU_ASSERT_EQUAL(agent_dynamic_available(d), avail - 1);
	agent_dynamic_free(d);
	leasefile_free(lf);
	agent_config_free(c);
	umount_small();
}

/* ---- client identifiers (lease file v2) ----------------------------------------------- */

#define IPN(n) (0x0a000000u + (n))

/* The leases test_client_id_round_trip writes. */
struct id_sample {
	uint8_t duid[15], big[AGENT_ID_MAX], tiny[AGENT_ID_MIN], own[7];
	uint8_t m[7][6];
};

static void
id_sample_init(struct id_sample *x)
{
	static const uint8_t duid[15] = {0xff, 0, 0, 0, 1, 0, 3, 0, 1, 0x52, 0x54, 0, 0, 0, 1};

	memcpy(x->duid, duid, sizeof(duid));
	for (size_t i = 0; i < sizeof(x->big); i++)
		x->big[i] = (uint8_t)(i * 7 + 3);
	x->tiny[0] = 0;
	x->tiny[1] = 0x2a;
	for (unsigned i = 0; i < 7; i++)
		mac_n(x->m[i], i);
	x->own[0] = 1;
	memcpy(x->own + 1, x->m[4], 6);
}

struct id_count {
	size_t with, without;
};

static void
count_ids(void *userdata, const uint8_t *id, size_t id_len, const uint8_t mac[6], uint32_t ip)
{
	struct id_count *c = userdata;

	(void)mac;
	(void)ip;
	if (id != NULL) {
		CU_ASSERT(id_len >= AGENT_ID_MIN && id_len <= AGENT_ID_MAX);
		c->with++;
	} else {
		c->without++;
	}
}

/* Whether key (id, id_len) has the lease mac -> ip in lf. */
static bool
has_id_lease(
    const struct leasefile *lf, const uint8_t *id, size_t id_len, const uint8_t mac[6], uint32_t ip)
{
	static const uint8_t any[6] = {0x02, 0, 0, 0, 0, 0xee};
	uint8_t owner[6];
	uint32_t got;

	return leasefile_lookup_id(lf, id, id_len, any, owner, &got) == 0 &&
	       memcmp(owner, mac, 6) == 0 && got == ip;
}

static void
check_id_leases(const struct leasefile *lf, const struct id_sample *x)
{
	struct id_count c = {0};
	uint32_t ip = 0;

	CU_ASSERT_EQUAL(leasefile_count(lf), 5u);
	CU_ASSERT_TRUE(has_id_lease(lf, x->duid, sizeof(x->duid), x->m[6], IPN(1)));
	CU_ASSERT_TRUE(has_id_lease(lf, x->big, sizeof(x->big), x->m[2], IPN(2)));
	CU_ASSERT_TRUE(has_id_lease(lf, x->tiny, sizeof(x->tiny), x->m[3], IPN(3)));
	/* 0x01 + its own MAC is the MAC's key: either way of asking finds it */
	CU_ASSERT_TRUE(has_id_lease(lf, x->own, sizeof(x->own), x->m[4], IPN(4)));
	CU_ASSERT_EQUAL(leasefile_lookup(lf, x->m[4], &ip), 0);
	CU_ASSERT_EQUAL(ip, IPN(4));
	CU_ASSERT_EQUAL(leasefile_lookup(lf, x->m[5], &ip), 0);
	CU_ASSERT_EQUAL(ip, IPN(5));
	/* keyed by the identifier, not by the MAC it was first bound to, nor the one it is on */
	CU_ASSERT_EQUAL(leasefile_lookup(lf, x->m[1], &ip), -ENOENT);
	CU_ASSERT_EQUAL(leasefile_lookup(lf, x->m[6], &ip), -ENOENT);
	leasefile_foreach_id(lf, count_ids, &c);
	CU_ASSERT_EQUAL(c.with, 3u);
	CU_ASSERT_EQUAL(c.without, 2u);
}

/* The line format: exact text, and -1 (nothing promised of out) when it does not fit n bytes. */
static void
test_format_line(void)
{
	static const uint8_t mac[6] = {0x52, 0x54, 0x00, 0xab, 0xcd, 0xef};
	static const uint8_t id[3] = {0xff, 0x00, 0x1a};
	const char *want = "52:54:00:ab:cd:ef 10.0.0.11\n";
	const char *want_id = "52:54:00:ab:cd:ef 192.168.100.200 id=ff001a\n";
	char out[128];

	CU_ASSERT_EQUAL(
	    lf_format_line(out, sizeof(out), NULL, 0, mac, 0x0a00000bu), (int)strlen(want));
	CU_ASSERT_STRING_EQUAL(out, want);
	CU_ASSERT_EQUAL(
	    lf_format_line(out, strlen(want) + 1, NULL, 0, mac, 0x0a00000bu), (int)strlen(want));
	CU_ASSERT_STRING_EQUAL(out, want);
	CU_ASSERT_EQUAL(lf_format_line(out, strlen(want), NULL, 0, mac, 0x0a00000bu), -1);
	CU_ASSERT_EQUAL(lf_format_line(out, sizeof(out), id, sizeof(id), mac, 0xc0a864c8u),
	    (int)strlen(want_id));
	CU_ASSERT_STRING_EQUAL(out, want_id);
	CU_ASSERT_EQUAL(lf_format_line(out, strlen(want_id) + 1, id, sizeof(id), mac, 0xc0a864c8u),
	    (int)strlen(want_id));
	CU_ASSERT_STRING_EQUAL(out, want_id);
	CU_ASSERT_EQUAL(lf_format_line(out, strlen(want_id), id, sizeof(id), mac, 0xc0a864c8u), -1);
	CU_ASSERT_EQUAL(lf_format_line(out, 4, NULL, 0, mac, 0), -1);
}

static void
test_client_id_round_trip(void)
{
	struct leasefile *lf = NULL, *lf2 = NULL;
	char err[AGENT_ERR_MAX] = "";
	struct id_sample x;
	uint8_t too_long[AGENT_ID_MAX + 1] = {0};
	char *text;

	id_sample_init(&x);
	unlink(path);
	unlink_quarantine();
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(leasefile_add_id(lf, x.duid, sizeof(x.duid), x.m[1], IPN(1)), 0);
	CU_ASSERT_EQUAL(leasefile_add_id(lf, x.big, sizeof(x.big), x.m[2], IPN(2)), 0);
	CU_ASSERT_EQUAL(leasefile_add_id(lf, x.tiny, sizeof(x.tiny), x.m[3], IPN(3)), 0);
	CU_ASSERT_EQUAL(leasefile_add_id(lf, x.own, sizeof(x.own), x.m[4], IPN(4)), 0);
	CU_ASSERT_EQUAL(leasefile_add(lf, x.m[5], IPN(5)), 0);
	CU_ASSERT_EQUAL(leasefile_add_id(lf, too_long, sizeof(too_long), x.m[0], IPN(9)), -EINVAL);
	/* the identifier from a new MAC: the same lease, bound to the new MAC */
	CU_ASSERT_EQUAL(leasefile_add_id(lf, x.duid, sizeof(x.duid), x.m[6], IPN(1)), 0);
	check_id_leases(lf, &x);
	text = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "\n52:54:00:00:00:06 10.0.0.1 id=ff0000000100030001525400000001\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n52:54:00:00:00:03 10.0.0.3 id=002a\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n52:54:00:00:00:04 10.0.0.4\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n52:54:00:00:00:05 10.0.0.5\n"));
	free(text);
	/* kill -9: the journal alone */
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf2, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(leasefile_rejected(lf2), 0u);
	check_id_leases(lf2, &x);
	leasefile_free(lf2);
	/* the rewrite (compaction) */
	CU_ASSERT_EQUAL(leasefile_compact(lf), 0);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf2, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(leasefile_rejected(lf2), 0u);
	check_id_leases(lf2, &x);
	CU_ASSERT_EQUAL(leasefile_remove_id(lf2, x.duid, sizeof(x.duid), x.m[0]), 0);
	CU_ASSERT_EQUAL(leasefile_remove_id(lf2, x.duid, sizeof(x.duid), x.m[0]), -ENOENT);
	CU_ASSERT_EQUAL(leasefile_count(lf2), 4u);
	leasefile_free(lf2);
	leasefile_free(lf);
	CU_ASSERT_NOT_EQUAL(access(qpath, F_OK), 0);
}

static void
test_v1_file_read(void)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "";
	uint8_t m1[6], m2[6], own[7] = {1};
	uint32_t ip = 0;
	char *text;

	unlink_quarantine();
	write_text(path, "# vm-dhcp-agent leases v1: MAC IP, one per line, later lines win\n"
			 "52:54:00:00:00:01 10.0.0.1\n"
			 "52:54:00:00:00:02 10.0.0.2\n"
			 "52:54:00:00:00:01 10.0.0.3\n");
	mac_n(m1, 1);
	mac_n(m2, 2);
	memcpy(own + 1, m1, 6);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(leasefile_count(lf), 2u);
	CU_ASSERT_EQUAL(leasefile_rejected(lf), 0u);
	CU_ASSERT_EQUAL(leasefile_lookup(lf, m1, &ip), 0);
	CU_ASSERT_EQUAL(ip, IPN(3));
	CU_ASSERT_EQUAL(leasefile_lookup(lf, m2, &ip), 0);
	CU_ASSERT_EQUAL(ip, IPN(2));
	/* MAC-keyed: what a client sending 0x01 + its MAC as identifier finds */
	CU_ASSERT_TRUE(has_id_lease(lf, own, sizeof(own), m1, IPN(3)));
	leasefile_free(lf);
	/* rewritten as v2, the lines as they were */
	text = slurp(path);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT(strncmp(text, "# vm-dhcp-agent leases v2", 25) == 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n52:54:00:00:00:01 10.0.0.3\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n52:54:00:00:00:02 10.0.0.2\n"));
	CU_ASSERT_PTR_NULL(strstr(text, " id="));
	free(text);
	CU_ASSERT_NOT_EQUAL(access(qpath, F_OK), 0);
}

/* Opens text as the lease file; checks it holds want leases. */
static struct leasefile *
open_text(const char *text, size_t want)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "";

	write_text(path, text);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(leasefile_count(lf), want);
	CU_ASSERT_EQUAL(leasefile_rejected(lf), 0u);
	return lf;
}

static void
test_later_line_supersedes(void)
{
	static const uint8_t k1[2] = {0xff, 1}, k2[2] = {0xff, 2}, k3[2] = {0xff, 3},
			     k4[2] = {0xff, 4}, k5[2] = {0xff, 5};
	struct leasefile *lf;
	uint8_t m[7][6];
	uint32_t ip = 0;

	unlink_quarantine();
	for (unsigned i = 0; i < 7; i++)
		mac_n(m[i], i);
	lf = open_text("52:54:00:00:00:01 10.0.0.1 id=ff01\n"
		       /* the same MAC and address under a new key: a rekey */
		       "52:54:00:00:00:01 10.0.0.1 id=ff02\n"
		       "52:54:00:00:00:02 10.0.0.2\n"
		       /* the address expired and went to another MAC before a compaction */
		       "52:54:00:00:00:03 10.0.0.2\n"
		       "52:54:00:00:00:04 10.0.0.4 id=ff03\n"
		       /* the same MAC, another key and address */
		       "52:54:00:00:00:04 10.0.0.5 id=ff04\n"
		       "52:54:00:00:00:05 10.0.0.6 id=ff05\n"
		       /* the key moved to another MAC */
		       "52:54:00:00:00:06 10.0.0.6 id=ff05\n",
	    4);
	CU_ASSERT_TRUE(has_id_lease(lf, k2, 2, m[1], IPN(1)));
	CU_ASSERT_FALSE(has_id_lease(lf, k1, 2, m[1], IPN(1)));
	CU_ASSERT_EQUAL(leasefile_lookup(lf, m[3], &ip), 0);
	CU_ASSERT_EQUAL(ip, IPN(2));
	CU_ASSERT_EQUAL(leasefile_lookup(lf, m[2], &ip), -ENOENT);
	CU_ASSERT_TRUE(has_id_lease(lf, k4, 2, m[4], IPN(5)));
	CU_ASSERT_FALSE(has_id_lease(lf, k3, 2, m[4], IPN(4)));
	CU_ASSERT_TRUE(has_id_lease(lf, k5, 2, m[6], IPN(6)));
	leasefile_free(lf);
	/* the order of the lines decides, nothing else */
	lf = open_text("52:54:00:00:00:01 10.0.0.1 id=ff02\n"
		       "52:54:00:00:00:03 10.0.0.2\n"
		       "52:54:00:00:00:04 10.0.0.5 id=ff04\n"
		       "52:54:00:00:00:01 10.0.0.1 id=ff01\n"
		       "52:54:00:00:00:02 10.0.0.2\n"
		       "52:54:00:00:00:04 10.0.0.4 id=ff03\n",
	    3);
	CU_ASSERT_TRUE(has_id_lease(lf, k1, 2, m[1], IPN(1)));
	CU_ASSERT_EQUAL(leasefile_lookup(lf, m[2], &ip), 0);
	CU_ASSERT_EQUAL(ip, IPN(2));
	CU_ASSERT_TRUE(has_id_lease(lf, k3, 2, m[4], IPN(4)));
	leasefile_free(lf);
	CU_ASSERT_NOT_EQUAL(access(qpath, F_OK), 0);
}

static void
test_bad_client_id(void)
{
	static const char *const bad[] = {
	    "52:54:00:00:00:02 10.0.0.2 id=zz\n",     /* not hex */
	    "52:54:00:00:00:03 10.0.0.3 id=01\n",     /* one byte: RFC 2132's minimum is 2 */
	    "52:54:00:00:00:04 10.0.0.4 id=abc\n",    /* half a byte */
	    "52:54:00:00:00:05 10.0.0.5 ID=0102\n",   /* not id= */
	    "52:54:00:00:00:06 10.0.0.6 id=0102 x\n", /* a fourth field */
	    "52:54:00:00:00:07 10.0.0.7 id=\n",	      /* empty */
	};
	struct sample *s = calloc(1, sizeof(*s));
	char line[600];
	int n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	unlink_quarantine();
	sample_good(s, 1, "\n");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		sample_bad(s, bad[i], strlen(bad[i]));
	/* 256 bytes: one more than option 61 can carry */
	n = snprintf(line, sizeof(line), "52:54:00:00:00:08 10.0.0.8 id=");
	for (int i = 0; i < 256; i++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, "ab");
	line[n++] = '\n';
	sample_bad(s, line, (size_t)n);
	sample_good(s, 9, "\n");
	/* an interrupted write of an id= line: torn, ignored, not quarantined */
	sample_raw(s, "52:54:00:00:00:0a 10.0.0.10 id=ff00", 35);
	check_sample("bad client identifiers", s);
	free(s);
}

static const struct test_case leasefile_tests[] = {
    {"round trip through the journal", test_round_trip},
    {"compaction writes a new file and renames it", test_compaction_is_atomic_rename},
    {"torn last line is ignored", test_torn_last_line_ignored},
    {"journal grows past its reserve, readable after kill -9", test_journal_grows_and_survives},
    {"reserved NUL tail and a torn line", test_reserved_space_and_torn_line},
    {"memory only without a path", test_memory_only},
    {"churn with removals", test_many_removals_keep_table_usable},
    {"NUL in the middle: quarantined, the leases after it kept", test_nul_in_the_middle},
    {"binary garbage between good lines", test_binary_garbage_between_good_lines},
    {"over-long line", test_overlong_line},
    {"bad MAC", test_bad_mac},
    {"bad IP", test_bad_ip},
    {"torn last line ignored, not quarantined", test_torn_line_not_quarantined},
    {"CRLF line endings accepted", test_crlf_accepted},
    {"a file that is entirely garbage", test_entirely_garbage},
    {"full disk, write(): the lease is refused, not kept", test_disk_full_write},
    {"full disk, mapped window cannot slide: refused, not kept", test_disk_full_mapped},
    {"full disk: the dynamic allocation is undone, resumes with room",
	test_disk_full_dynamic_undone},
    {"the line format, and a buffer one byte short", test_format_line},
    {"client identifiers: id= lines round trip (journal, compaction)", test_client_id_round_trip},
    {"a v1 file (MAC IP) is read as MAC-keyed leases, rewritten as v2", test_v1_file_read},
    {"a later line wins by key, then address, then MAC", test_later_line_supersedes},
    {"bad client identifiers are quarantined", test_bad_client_id},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "agent-leasefile",
	.init = suite_init,
	.cleanup = suite_cleanup,
	.tests = leasefile_tests},
    {.name = NULL},
};

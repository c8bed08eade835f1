/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent/leasefile*.c under a changing file system: the lease file deleted or replaced while in
 * use (leasefile_check writes the leases in memory to the path again), a read-only directory
 * (serving without persistence, then persistence resumed; a read-only tmpfs in a private mount
 * namespace as root, a 0555 directory otherwise), and a 400 000-line file loaded line by line
 * (its content, and the peak RSS it costs: VmHWM, reset through /proc/self/clear_refs).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/leasefile.h"
#include "agent/pool-config.h"
#include "lib/util.h"
#include "tests/helpers/proc.h"
#include "tests/runner.h"

static char dir[64];
static char path[128];
static char rodir[128];

static int
suite_init(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test-agent-leasefile-watch.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/leases", dir);
	snprintf(rodir, sizeof(rodir), "%s/ro", dir);
	return 0;
}

static int
suite_cleanup(void)
{
	char tmp[192];

	unlink(path);
	snprintf(tmp, sizeof(tmp), "%s/other", dir);
	unlink(tmp);
	snprintf(tmp, sizeof(tmp), "%s/leases", rodir);
	(void)umount2(rodir, MNT_DETACH);
	(void)chmod(rodir, 0700);
	unlink(tmp);
	rmdir(rodir);
	rmdir(dir);
	return 0;
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

/*
 * Checks the file at p holds leases 0..n-1 exactly: a copy of it opened as a restarted agent
 * would (opening rewrites its file: the original is left alone).
 */
static void
check_file_holds(const char *p, unsigned n)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "", copy[192], *text = NULL;
	size_t len = 0;
	uint8_t mac[6];
	uint32_t ip;

	snprintf(copy, sizeof(copy), "%s/copy", dir);
	CU_ASSERT_EQUAL_FATAL(read_file(p, 64 << 20, &text, &len), 0);
	CU_ASSERT_EQUAL_FATAL(write_file_atomic(copy, text, len, 0600), 0);
	free(text);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(copy, &lf, err, sizeof(err)), 0);
	unlink(copy);
	CU_ASSERT_EQUAL(leasefile_count(lf), n);
	for (unsigned i = 0; i < n; i++) {
		mac_n(mac, i);
		if (leasefile_lookup(lf, mac, &ip) != 0 || ip != 0x0a000000u + i) {
			CU_FAIL("a lease is missing from the file at the path");
			break;
		}
	}
	leasefile_free(lf);
}

static void
add(struct leasefile *lf, unsigned i)
{
	uint8_t mac[6];

	mac_n(mac, i);
	CU_ASSERT_EQUAL(leasefile_add(lf, mac, 0x0a000000u + i), 0);
}

/* The file deleted under a running agent: the next check writes every lease to the path. */
static void
test_deleted(void)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "";

	unlink(path);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(leasefile_check(lf), 0); /* nothing changed yet */
	add(lf, 0);
	add(lf, 1);
	CU_ASSERT_EQUAL(unlink(path), 0);
	add(lf, 2); /* to the unlinked inode, but in memory */
	CU_ASSERT_EQUAL(leasefile_check(lf), 1);
	CU_ASSERT(leasefile_persistent(lf));
	CU_ASSERT_EQUAL(access(path, F_OK), 0);
	/* the journal follows the new file */
	add(lf, 3);
	check_file_holds(path, 4);
	CU_ASSERT_EQUAL(leasefile_check(lf), 0);
	leasefile_free(lf);
}

/* The file replaced (rename over it) under a running agent: the leases in memory win. */
static void
test_replaced(void)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "", other[192];
	FILE *f;

	unlink(path);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf, err, sizeof(err)), 0);
	add(lf, 0);
	snprintf(other, sizeof(other), "%s/other", dir);
	f = fopen(other, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("# an old copy\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(rename(other, path), 0);
	add(lf, 1); /* to the old inode, but in memory */
	CU_ASSERT_EQUAL(leasefile_check(lf), 1);
	add(lf, 2);
	check_file_holds(path, 3);
	leasefile_free(lf);
}

/*
 * Makes rodir read-only: as root, a tmpfs in a private mount namespace remounted read-only
 * (root ignores the mode bits); else the mode bits. 0, or skipped.
 */
static bool use_mount;

static int
make_readonly(void)
{
	static bool unshared;

	(void)mkdir(rodir, 0700);
	if (geteuid() != 0) {
		use_mount = false;
		return chmod(rodir, 0555);
	}
	use_mount = true;
	if (!unshared) {
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount("none", "/", "none", MS_REC | MS_PRIVATE, "") < 0) {
			test_skip("no private mount namespace: %s", strerror(errno));
			return -1;
		}
		unshared = true;
	}
	if (mount("tmpfs", rodir, "tmpfs", 0, "size=4m,mode=0700") < 0 ||
	    mount("none", rodir, "tmpfs", MS_REMOUNT | MS_RDONLY, NULL) < 0) {
		test_skip("cannot mount a read-only tmpfs: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int
make_writable(void)
{
	if (!use_mount)
		return chmod(rodir, 0700);
	return mount("none", rodir, "tmpfs", MS_REMOUNT, NULL);
}

/*
 * A read-only lease directory: the open succeeds without persistence, leases are handed out
 * from memory; once the directory is writable, the next check writes them all.
 */
static void
test_readonly_dir(void)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "", lpath[192];

	if (make_readonly() < 0)
		return;
	snprintf(lpath, sizeof(lpath), "%s/leases", rodir);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(lpath, &lf, err, sizeof(err)), 0);
	CU_ASSERT_FALSE(leasefile_persistent(lf));
	add(lf, 0);
	add(lf, 1);
	CU_ASSERT_EQUAL(leasefile_count(lf), 2u);
	CU_ASSERT_EQUAL(leasefile_append_errors(lf), 0u);
	/* still read-only: nothing to do, no error, still in memory */
	CU_ASSERT_EQUAL(leasefile_check(lf), 0);
	CU_ASSERT_EQUAL(leasefile_compact(lf), 0);
	CU_ASSERT_FALSE(leasefile_persistent(lf));
	CU_ASSERT_NOT_EQUAL(access(lpath, F_OK), 0);

	CU_ASSERT_EQUAL_FATAL(make_writable(), 0);
	CU_ASSERT_EQUAL(leasefile_check(lf), 1);
	CU_ASSERT(leasefile_persistent(lf));
	add(lf, 2); /* journaled again */
	check_file_holds(lpath, 3);
	leasefile_free(lf);
	unlink(lpath);
	if (use_mount)
		CU_ASSERT_EQUAL(umount2(rodir, MNT_DETACH), 0);
}

/* A missing directory is a wrong path, not a read-only one: the open fails. */
static void
test_missing_dir_fails(void)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "", lpath[192];

	snprintf(lpath, sizeof(lpath), "%s/no-such-dir/leases", dir);
	CU_ASSERT_EQUAL(leasefile_open(lpath, &lf, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NULL(lf);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot write lease file"));
}

/* A FIFO at the path is refused at once (it would hang the start). */
static void
test_fifo_refused(void)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "", fifo[192];

	snprintf(fifo, sizeof(fifo), "%s/other", dir);
	unlink(fifo);
	CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
	CU_ASSERT_EQUAL(leasefile_open(fifo, &lf, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a regular file"));
	unlink(fifo);
}

#define BIG_ID 64u /* bytes of each lease's client identifier */

/* 400 000 lines; a tenth of that under valgrind or ASan, where the memory bound is not
 * asserted (their own memory is in the figures) and the content checks are the same. */
static bool
instrumented(void)
{
#ifdef __SANITIZE_ADDRESS__
	return true;
#else
	return getenv("VALGRIND") != NULL;
#endif
}

/* Lease n's client identifier: n in its first 4 bytes, then 0xa5. */
static void
big_id(uint8_t id[BIG_ID], unsigned n)
{
	memset(id, 0xa5, BIG_ID);
	id[0] = (uint8_t)(n >> 24), id[1] = (uint8_t)(n >> 16), id[2] = (uint8_t)(n >> 8);
	id[3] = (uint8_t)n;
}

/*
 * A 400 000-line file (65 MB: every lease keyed by a 64-byte client identifier, the last tenth
 * of the lines rewriting earlier leases) loads whole, and what the load costs beyond what it
 * keeps (peak RSS - RSS after) stays under half the file's size: the file is read line by
 * line and rewritten through a small buffer, never held whole (it was: ~60 MB more).
 */
static void
test_big_file_streamed(void)
{
	struct leasefile *lf = NULL;
	char err[AGENT_ERR_MAX] = "", m[MAC_STRLEN], a[IPV4_STRLEN];
	long base, hwm, after;
	uint8_t mac[6], id[BIG_ID];
	struct stat st;
	uint32_t ip;
	int fd;
	FILE *f;
	/* leases: lines big_keep.. rewrite the first ones */
	const unsigned big_lines = instrumented() ? 40000u : 400000u, big_keep = big_lines / 10 * 9;

	f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("# vm-dhcp-agent leases v2\n", f);
	for (unsigned i = 0; i < big_lines; i++) {
		unsigned n = i % big_keep;

		mac_n(mac, n);
		mac_format(mac, m);
		ipv4_format(0x0a000000u + n + (i >= big_keep ? 0x100000u : 0), a);
		big_id(id, n);
		fprintf(f, "%s %s id=", m, a);
		for (unsigned k = 0; k < BIG_ID; k++)
			fprintf(f, "%02x", id[k]);
		fputc('\n', f);
	}
	fclose(f);
	CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);

	/* peak RSS from here on */
	fd = open("/proc/self/clear_refs", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "5", 1) != 1)
			fd = -2;
		close(fd);
	}
	base = test_proc_status_kib(0, "VmRSS:");
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &lf, err, sizeof(err)), 0);
	hwm = test_proc_status_kib(0, "VmHWM:");
	after = test_proc_status_kib(0, "VmRSS:");
	CU_ASSERT_EQUAL(leasefile_loaded(lf), big_keep);
	CU_ASSERT_EQUAL(leasefile_count(lf), big_keep);
	CU_ASSERT_EQUAL(leasefile_rejected(lf), 0u);
	/* spot checks: a rewritten lease has its later address, the others theirs */
	mac_n(mac, 8);
	big_id(id, 8);
	CU_ASSERT_EQUAL(leasefile_lookup_id(lf, id, BIG_ID, mac, NULL, &ip), 0);
	CU_ASSERT_EQUAL(ip, 0x0a000000u + 8 + 0x100000u);
	for (unsigned n = big_lines / 10; n < big_keep; n += big_lines / 50 - 81) {
		mac_n(mac, n);
		big_id(id, n);
		CU_ASSERT_EQUAL(leasefile_lookup_id(lf, id, BIG_ID, mac, NULL, &ip), 0);
		CU_ASSERT_EQUAL(ip, 0x0a000000u + n);
	}
	printf("\n  %u-line lease file of %lld bytes: RSS %ld KiB before the open, peak %ld KiB, "
	       "%ld KiB after\n",
	    big_lines, (long long)st.st_size, base, hwm, after);
	if (fd != -1 && hwm > 0 && after > 0 && !instrumented())
		CU_ASSERT(hwm - after < (long)(st.st_size / 1024 / 2));
	leasefile_free(lf);
	unlink(path);
}

static const struct test_case watch_tests[] = {
    /* first: the peak RSS is measured from a process that did little yet */
    {"a 400 000-line file loads line by line", test_big_file_streamed},
    {"the file deleted while in use is written again", test_deleted},
    {"the file replaced while in use is written again", test_replaced},
    {"a read-only directory: served without persistence, then resumed", test_readonly_dir},
    {"a missing directory fails the open", test_missing_dir_fails},
    {"a FIFO at the path is refused", test_fifo_refused},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "agent-leasefile-watch",
	.init = suite_init,
	.cleanup = suite_cleanup,
	.tests = watch_tests},
    {.name = NULL},
};

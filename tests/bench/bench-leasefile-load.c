/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-leasefile-load: the peak memory of loading a large --dynamic lease file
 * (agent/leasefile*.c). Writes LINES lines (default 400 000, the last tenth rewriting earlier
 * leases; every lease keyed by a client identifier of ID_BYTES bytes, default 255, the
 * largest: the worst case, a 225 MB file) to DIR, then opens it as
 * the agent does at start (load, quarantine, rewrite) and prints the peak resident set
 * (VmHWM, reset through /proc/self/clear_refs before the open). `make bench-leasefile`.
 *
 * Usage: bench-leasefile-load [DIR [LINES [ID_BYTES]]] (ID_BYTES 0: MAC-keyed leases). The last
 * line is the parseable summary: bench-leasefile-load: lines=400000 leases=... bytes=...
 * open_ms=... peak_rss_kib=...
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/leasefile.h"
#include "agent/pool-config.h"
#include "lib/util.h"
#include "tests/helpers/proc.h"

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	unsigned lines = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 10) : 400000u;
	unsigned id_bytes = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 255u;
	unsigned keep = lines - lines / 10;
	char path[4096], err[AGENT_ERR_MAX] = "", m[MAC_STRLEN], a[IPV4_STRLEN];
	struct leasefile *lf = NULL;
	struct timespec t0, t1;
	long before, peak;
	struct stat st;
	uint8_t mac[6];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/bench-leasefile-load.%ld", dir, (long)getpid());
	if ((f = fopen(path, "w")) == NULL) {
		perror(path);
		return 1;
	}
	fputs("# vm-dhcp-agent leases v2\n", f);
	for (unsigned i = 0; i < lines; i++) {
		unsigned n = i % keep;

		mac[0] = 0x52, mac[1] = 0x54, mac[2] = 0;
		mac[3] = (uint8_t)(n >> 16), mac[4] = (uint8_t)(n >> 8), mac[5] = (uint8_t)n;
		mac_format(mac, m);
		ipv4_format(0x0a000000u + n + (i >= keep ? 0x100000u : 0), a);
		fprintf(f, "%s %s", m, a);
		if (id_bytes >= 4 && id_bytes <= 255) {
			/* the lease's number in the first 4 bytes, then a filler */
			fprintf(f, " id=%08x", n);
			for (unsigned k = 4; k < id_bytes; k++)
				fputs("a5", f);
		}
		fputc('\n', f);
	}
	fclose(f);
	(void)stat(path, &st);
	if ((fd = open("/proc/self/clear_refs", O_WRONLY)) >= 0) {
		if (write(fd, "5", 1) != 1)
			fprintf(stderr, "bench-leasefile-load: cannot reset VmHWM\n");
		close(fd);
	}
	before = test_proc_status_kib(0, "VmRSS:");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (leasefile_open(path, &lf, err, sizeof(err)) < 0) {
		fprintf(stderr, "bench-leasefile-load: %s\n", err);
		unlink(path);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	peak = test_proc_status_kib(0, "VmHWM:");
	printf("bench-leasefile-load: lines=%u id_bytes=%u leases=%zu bytes=%lld open_ms=%.0f "
	       "peak_rss_kib=%ld rss_before_kib=%ld rss_after_kib=%ld\n",
	    lines, id_bytes, leasefile_count(lf), (long long)st.st_size,
	    (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6, peak,
	    before, test_proc_status_kib(0, "VmRSS:"));
	leasefile_free(lf);
	unlink(path);
	return 0;
}

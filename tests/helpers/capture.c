/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/helpers/capture.h"

static int saved_stderr = -1;
static char capture_path[64];

int
test_capture_stderr(void)
{
	int fd, err;

	snprintf(capture_path, sizeof(capture_path), "/tmp/vmdhcp-test-stderr-XXXXXX");
	if ((fd = mkstemp(capture_path)) < 0)
		return -errno;
	fflush(stderr);
	if ((saved_stderr = dup(2)) < 0 || dup2(fd, 2) != 2) {
		err = -errno;
		if (saved_stderr >= 0)
			close(saved_stderr);
		saved_stderr = -1;
		close(fd);
		unlink(capture_path);
		return err;
	}
	close(fd);
	return 0;
}

char *
test_captured_stderr(size_t *len)
{
	char *text = NULL;
	long n;
	FILE *f;

	if (saved_stderr < 0)
		return NULL;
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	saved_stderr = -1;
	f = fopen(capture_path, "r");
	if (f != NULL && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0) {
		rewind(f);
		text = calloc(1, (size_t)n + 1);
		if (text != NULL && fread(text, 1, (size_t)n, f) != (size_t)n) {
			free(text);
			text = NULL;
		} else if (text != NULL && len != NULL) {
			*len = (size_t)n;
		}
	}
	if (f != NULL)
		fclose(f);
	unlink(capture_path);
	return text;
}

unsigned
test_count_in_fd(int fd, const char *needle)
{
	char buf[65536];
	unsigned n = 0;
	ssize_t len;

	lseek(fd, 0, SEEK_SET);
	len = read(fd, buf, sizeof(buf) - 1);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	for (char *p = buf; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

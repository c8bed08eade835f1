/* SPDX-License-Identifier: Apache-2.0 */
/* crds/ippool-boot.c: spec.ipv4Config.networkBoot decode, encode round trip, every refusal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "crds/ippool.h"
#include "lib/util.h"
#include "tests/runner.h"

#define SPEC_HEAD                                                                                  \
	"{\"networkName\": \"default/net\", \"ipv4Config\": {\"serverIP\": \"10.0.0.2\","          \
	" \"cidr\": \"10.0.0.0/24\", \"pool\": {\"start\": \"10.0.0.10\", \"end\": \"10.0.0.20\"}"

static const char full_spec[] = SPEC_HEAD
    ", \"networkBoot\": {\"nextServer\": \"10.0.0.5\", \"tftpServerName\": \"tftp.example\","
    "  \"bootFiles\": {\"bios\": \"undionly.kpxe\", \"uefi\": \"ipxe.efi\","
    "   \"uefiArm64\": \"ipxe-arm64.efi\", \"uefiHttp\": \"http://10.0.0.5/ipxe.efi\"},"
    "  \"ipxeScript\": \"http://10.0.0.5/boot.ipxe\"}}}";

static json_t *
load(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j) {
		fprintf(stderr, "bad test JSON: %s at %d\n", e.text, e.position);
		abort();
	}
	return j;
}

static void
test_decode_full(void)
{
	json_t *j = load(full_spec), *back;
	struct ippool_spec s;
	struct crd_error err;
	uint32_t a = 0;

	CU_ASSERT_FATAL(ippool_spec_decode(j, &s, &err) == 0);
	CU_ASSERT(s.has_boot);
	CU_ASSERT(ipv4_parse("10.0.0.5", &a) == 0 && s.boot.next_server == a);
	CU_ASSERT_STRING_EQUAL(s.boot.tftp_server_name, "tftp.example");
	CU_ASSERT_STRING_EQUAL(s.boot.files.bios, "undionly.kpxe");
	CU_ASSERT_STRING_EQUAL(s.boot.files.uefi, "ipxe.efi");
	CU_ASSERT_STRING_EQUAL(s.boot.files.uefi_arm64, "ipxe-arm64.efi");
	CU_ASSERT_STRING_EQUAL(s.boot.files.uefi_http, "http://10.0.0.5/ipxe.efi");
	CU_ASSERT_STRING_EQUAL(s.boot.ipxe_script, "http://10.0.0.5/boot.ipxe");
	/* written back as read */
	back = ippool_spec_encode(&s);
	CU_ASSERT_FATAL(back != NULL);
	CU_ASSERT(json_equal(back, j));
	json_decref(back);
	ippool_spec_clear(&s);
	json_decref(j);
}

/* Without networkBoot: nothing set, nothing written; an empty one is kept (and written). */
static void
test_absent_and_empty(void)
{
	json_t *j = load(SPEC_HEAD "}}"), *back;
	struct ippool_spec s;
	struct crd_error err;

	CU_ASSERT_FATAL(ippool_spec_decode(j, &s, &err) == 0);
	CU_ASSERT(!s.has_boot);
	CU_ASSERT_PTR_NULL(s.boot.files.bios);
	back = ippool_spec_encode(&s);
	CU_ASSERT(json_object_get(json_object_get(back, "ipv4Config"), "networkBoot") == NULL);
	json_decref(back);
	ippool_spec_clear(&s);
	json_decref(j);
	j = load(SPEC_HEAD ", \"networkBoot\": {\"bootFiles\": {\"uefi\": \"x.efi\"}}}}");
	CU_ASSERT_FATAL(ippool_spec_decode(j, &s, &err) == 0);
	CU_ASSERT(s.has_boot);
	CU_ASSERT_EQUAL(s.boot.next_server, 0);
	CU_ASSERT_PTR_NULL(s.boot.ipxe_script);
	back = ippool_spec_encode(&s);
	CU_ASSERT(json_equal(back, j));
	json_decref(back);
	ippool_spec_clear(&s);
	json_decref(j);
}

struct bad_case {
	const char *boot; /* the networkBoot object */
	const char *message;
};

static const struct bad_case bad_cases[] = {
    {"{\"nextServer\": \"10.0.0.300\"}",
	"spec.ipv4Config.networkBoot.nextServer: \"10.0.0.300\" is not an IPv4 address"},
    {"{\"nextServer\": \"tftp.example\"}",
	"spec.ipv4Config.networkBoot.nextServer: \"tftp.example\" is not an IPv4 address"},
    {"{\"bootFiles\": {\"bios\": \"\"}}",
	"spec.ipv4Config.networkBoot.bootFiles.bios: \"\" is not a file name, URL or host "
	"(printable, no spaces)"},
    {"{\"bootFiles\": {\"uefi\": \"my file.efi\"}}",
	"spec.ipv4Config.networkBoot.bootFiles.uefi: \"my file.efi\" is not a file name, URL or "
	"host (printable, no spaces)"},
    {"{\"bootFiles\": {\"uefiHttp\": \"tftp://10.0.0.5/ipxe.efi\"}}",
	"spec.ipv4Config.networkBoot.bootFiles.uefiHttp: \"tftp://10.0.0.5/ipxe.efi\" is not an "
	"http:// or https:// URL (printable, no spaces)"},
    {"{\"bootFiles\": {\"uefiHttp\": \"ipxe.efi\"}}",
	"spec.ipv4Config.networkBoot.bootFiles.uefiHttp: \"ipxe.efi\" is not an http:// or "
	"https:// URL (printable, no spaces)"},
    {"{\"bootFiles\": {\"arm32\": \"x\"}}",
	"spec.ipv4Config.networkBoot.bootFiles.arm32: unknown field"},
    {"{\"bootfile\": \"x\"}", "spec.ipv4Config.networkBoot.bootfile: unknown field"},
    {"{\"ipxeScript\": 7}", "spec.ipv4Config.networkBoot.ipxeScript: must be a string"},
    {"{\"tftpServerName\": \"a\\tb\"}",
	"spec.ipv4Config.networkBoot.tftpServerName: \"a\\x09b\" is not a file name, URL or host "
	"(printable, no spaces)"},
};

static void
test_refusals(void)
{
	char text[1024];
	struct ippool_spec s;
	struct crd_error err;

	for (size_t i = 0; i < ELEMENTSOF(bad_cases); i++) {
		json_t *j;
		int r;

		snprintf(
		    text, sizeof(text), SPEC_HEAD ", \"networkBoot\": %s}}", bad_cases[i].boot);
		j = load(text);
		r = ippool_spec_decode(j, &s, &err);
		CU_ASSERT_EQUAL(r, -EINVAL);
		if (r != -EINVAL || strcmp(err.message, bad_cases[i].message) != 0) {
			printf("\n  case %zu: r=%d\n    got:  %s\n    want: %s\n", i, r,
			    r < 0 ? err.message : "(accepted)", bad_cases[i].message);
			CU_FAIL("error differs");
		}
		if (r == 0)
			ippool_spec_clear(&s);
		json_decref(j);
	}
}

/* Lengths: 127 for a file (the BOOTP field with its NUL), 255 for URLs, script and server. */
static void
check_length(const char *key, const char *prefix, size_t ok_len)
{
	char value[300], text[1024];
	struct ippool_spec s;
	struct crd_error err;
	size_t p = strlen(prefix);
	const char *obj =
	    strcmp(key, "ipxeScript") == 0 || strcmp(key, "tftpServerName") == 0 ? "" : "bootFiles";

	for (size_t len = ok_len; len <= ok_len + 1; len++) {
		json_t *j;
		int r;

		memcpy(value, prefix, p);
		memset(value + p, 'a', len - p);
		value[len] = '\0';
		if (*obj)
			snprintf(text, sizeof(text),
			    SPEC_HEAD ", \"networkBoot\": {\"%s\": {\"%s\": \"%s\"}}}}", obj, key,
			    value);
		else
			snprintf(text, sizeof(text),
			    SPEC_HEAD ", \"networkBoot\": {\"%s\": \"%s\"}}}", key, value);
		j = load(text);
		r = ippool_spec_decode(j, &s, &err);
		if (len == ok_len) {
			CU_ASSERT_EQUAL(r, 0);
			if (r == 0)
				ippool_spec_clear(&s);
		} else {
			CU_ASSERT_EQUAL(r, -EINVAL);
			CU_ASSERT(r < 0 && strstr(err.message, "is longer than") != NULL);
		}
		json_decref(j);
	}
}

static void
test_lengths(void)
{
	check_length("bios", "", 127);
	check_length("uefi", "", 127);
	check_length("uefiArm64", "", 127);
	check_length("uefiHttp", "https://", 255);
	check_length("ipxeScript", "http://", 255);
	check_length("tftpServerName", "", 255);
}

static const struct test_case boot_tests[] = {
    {"decode and encode", test_decode_full},
    {"absent and empty", test_absent_and_empty},
    {"refusals", test_refusals},
    {"lengths", test_lengths},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "crds-ippool-boot", .tests = boot_tests},
    {.name = NULL},
};

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent/caps.c and agent/listen.c: capability names, raising the permitted set, dropping all
 * but the kept one (in a child process: a drop is for good), and where --listen may point.
 * The drop runs whatever the credentials: as root (every capability, CAP_SETPCAP: the
 * bounding set goes too) and unprivileged (nothing to drop: the result is still "none").
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/caps.h"
#include "agent/listen.h"
#include "agent/pool-config.h"
#include "tests/runner.h"

static void
test_format(void)
{
	char buf[128];

	CU_ASSERT_STRING_EQUAL(agent_caps_format(0, 4, buf, sizeof(buf)), "none");
	CU_ASSERT_STRING_EQUAL(
	    agent_caps_format(AGENT_CAP(CAP_NET_ADMIN), 4, buf, sizeof(buf)), "NET_ADMIN");
	CU_ASSERT_STRING_EQUAL(
	    agent_caps_format(
		AGENT_CAP(CAP_NET_RAW) | AGENT_CAP(CAP_NET_BIND_SERVICE) | AGENT_CAP(CAP_NET_ADMIN),
		4, buf, sizeof(buf)),
	    "NET_BIND_SERVICE, NET_ADMIN, NET_RAW");
	CU_ASSERT_STRING_EQUAL(
	    agent_caps_format(AGENT_CAP(CAP_CHOWN) | AGENT_CAP(CAP_KILL) | AGENT_CAP(CAP_BPF) |
				  AGENT_CAP(CAP_CHECKPOINT_RESTORE),
		2, buf, sizeof(buf)),
	    "CHOWN, KILL and 2 more");
	/* a capability newer than the table */
	CU_ASSERT_STRING_EQUAL(agent_caps_format(AGENT_CAP(50), 4, buf, sizeof(buf)), "CAP_50");
	/* every name fits or is cut, never overruns */
	agent_caps_format(UINT64_MAX, 64, buf, 16);
	CU_ASSERT_EQUAL(strlen(buf), 15);
}

/* Runs fn in a child (a capability drop is for good); returns its exit status. */
static int
in_child(int (*fn)(void))
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn());
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* 1 once no_new_privs is set (NoNewPrivs in /proc/self/status) */
static int
no_new_privs(void)
{
	return prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
}

static int
child_drop(void)
{
	struct agent_caps before, after, now;
	uint64_t admin = AGENT_CAP(CAP_NET_ADMIN);

	if (agent_caps_drop(admin, &before, &after) < 0)
		return 10;
	if (agent_caps_get(&now) < 0)
		return 11;
	/* what was permitted of NET_ADMIN stays; nothing else */
	if (now.permitted != (before.permitted & admin) || now.effective != now.permitted)
		return 12;
	if (now.inheritable != 0 || memcmp(&now, &after, sizeof(now)) != 0)
		return 13;
	if (no_new_privs() != 1)
		return 14;
	/* with CAP_SETPCAP (root), the bounding set holds NET_ADMIN at most */
	if ((before.effective & AGENT_CAP(CAP_SETPCAP)) && (now.bounding & ~admin) != 0)
		return 15;
	/* for good: nothing can be raised back */
	if (before.permitted & AGENT_CAP(CAP_NET_RAW)) {
		uint64_t raised;
		if (agent_caps_raise(&raised) < 0 || raised != 0)
			return 16;
		if (agent_caps_get(&now) < 0 || (now.effective & AGENT_CAP(CAP_NET_RAW)))
			return 17;
		/* a raw socket is refused now */
		if (socket(AF_PACKET, SOCK_RAW, 0) >= 0 || errno != EPERM)
			return 18;
	}
	/* a second drop keeping nothing leaves nothing */
	if (agent_caps_drop(0, NULL, NULL) < 0 || agent_caps_get(&now) < 0 || now.permitted != 0)
		return 19;
	return 0;
}

static void
test_drop(void)
{
	struct agent_caps c;

	CU_ASSERT_EQUAL(agent_caps_get(&c), 0);
	if (c.permitted == 0)
		printf("  (no capabilities: the drop leaves none, as it should)\n");
	CU_ASSERT_EQUAL(in_child(child_drop), 0);
}

/* File capabilities "+p": permitted, not effective; raised at start. */
static int
child_raise(void)
{
	struct agent_caps c, now;
	uint64_t raised;

	if (agent_caps_get(&c) < 0)
		return 10;
	/* lower the effective set as execve() of a "+p" binary leaves it */
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {
	    {0, (uint32_t)c.permitted, (uint32_t)c.inheritable},
	    {0, (uint32_t)(c.permitted >> 32), (uint32_t)(c.inheritable >> 32)},
	};
	if (syscall(SYS_capset, &h, d) < 0)
		return 11;
	if (agent_caps_raise(&raised) < 0)
		return 12;
	if (raised != c.permitted || agent_caps_get(&now) < 0 || now.effective != c.permitted)
		return 13;
	/* nothing more to raise */
	if (agent_caps_raise(&raised) < 0 || raised != 0)
		return 14;
	return 0;
}

static void
test_raise(void)
{
	CU_ASSERT_EQUAL(in_child(child_raise), 0);
}

/* ---- listen.c ----------------------------------------------------------------------------- */

static int
check(const char *listen, const char *ifname, bool kube, uint32_t server_ip, uint32_t *ip,
    char *msg, size_t len)
{
	uint32_t dummy;
	return agent_listen_check(
	    listen, ifname, kube, server_ip, ip != NULL ? ip : &dummy, msg, len);
}

static void
test_listen_wildcard(void)
{
	char msg[AGENT_ERR_MAX];
	static const char *const wild[] = {
	    ":8080", "0.0.0.0:8080", "[::]:8080", "[::ffff:0.0.0.0]:8080"};

	for (size_t i = 0; i < sizeof(wild) / sizeof(wild[0]); i++) {
		/* Kubernetes mode: refused, naming the interface and the pod IP */
		CU_ASSERT_EQUAL(check(wild[i], "eth1", true, 0, NULL, msg, sizeof(msg)), -EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(msg, "listens on every interface, eth1"));
		CU_ASSERT_PTR_NOT_NULL(strstr(msg, "--listen $(POD_IP):PORT"));
		/* local mode: allowed with a warning naming the interface */
		CU_ASSERT_EQUAL(check(wild[i], "br0", false, 0, NULL, msg, sizeof(msg)), 1);
		CU_ASSERT_PTR_NOT_NULL(strstr(msg, "VMs on br0 can reach"));
	}
}

static void
test_listen_server_ip(void)
{
	char msg[AGENT_ERR_MAX];
	uint32_t ip;

	/* the pool's serverIP: refused in both modes (the agent adds it to the interface) */
	CU_ASSERT_EQUAL(
	    check("10.66.0.1:8080", "vmdhcp-none0", false, 0x0a420001, &ip, msg, sizeof(msg)),
	    -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "10.66.0.1 is the pool's serverIP, an address of "
					   "vmdhcp-none0"));
	CU_ASSERT_EQUAL(ip, 0);
	CU_ASSERT_EQUAL(
	    check("10.66.0.1:8080", "eth1", true, 0x0a420001, &ip, msg, sizeof(msg)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(msg, "(the pod IP: --listen $(POD_IP):PORT)"));
	/* another address: fine, and returned for later pool versions */
	CU_ASSERT_EQUAL(
	    check("10.0.0.5:8080", "vmdhcp-none0", true, 0x0a420001, &ip, msg, sizeof(msg)), 0);
	CU_ASSERT_EQUAL(ip, 0x0a000005);
	CU_ASSERT_STRING_EQUAL(msg, "");
	/* Kubernetes mode before the first sync: the serverIP is not known yet */
	CU_ASSERT_EQUAL(check("10.66.0.1:8080", "vmdhcp-none0", true, 0, &ip, msg, sizeof(msg)), 0);
	CU_ASSERT_EQUAL(ip, 0x0a420001);
	/* IPv6: checked against the interface only; no IPv4 to compare later */
	CU_ASSERT_EQUAL(check("[fd00::1]:8080", "vmdhcp-none0", true, 1, &ip, msg, sizeof(msg)), 0);
	CU_ASSERT_EQUAL(ip, 0);
	/* what httpd_new() refuses is left to it */
	CU_ASSERT_EQUAL(check("8080", "eth1", true, 0, &ip, msg, sizeof(msg)), 0);
	CU_ASSERT_EQUAL(check("[::1", "eth1", true, 0, &ip, msg, sizeof(msg)), 0);
	CU_ASSERT_EQUAL(check("example.com:80", "eth1", true, 0, &ip, msg, sizeof(msg)), 0);
}

/* An address of the served interface: lo holds 127.0.0.1 (and ::1), so serve "lo". */
static void
test_listen_on_interface(void)
{
	struct ifaddrs *list, *ifa;
	bool v4 = false, v6 = false;
	char msg[AGENT_ERR_MAX];

	CU_ASSERT_EQUAL_FATAL(getifaddrs(&list), 0);
	for (ifa = list; ifa != NULL; ifa = ifa->ifa_next) {
		if (strcmp(ifa->ifa_name, "lo") != 0 || ifa->ifa_addr == NULL)
			continue;
		if (ifa->ifa_addr->sa_family == AF_INET)
			v4 = true;
		else if (ifa->ifa_addr->sa_family == AF_INET6)
			v6 = true;
	}
	freeifaddrs(list);
	if (!v4) {
		test_skip("lo has no 127.0.0.1 in this network namespace");
		return;
	}
	CU_ASSERT_EQUAL(check("127.0.0.1:8080", "lo", true, 0, NULL, msg, sizeof(msg)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(msg, "127.0.0.1 is an address of lo, the interface the VMs are on"));
	CU_ASSERT_EQUAL(check("localhost:8080", "lo", false, 0, NULL, msg, sizeof(msg)), -EINVAL);
	if (v6)
		CU_ASSERT_EQUAL(
		    check("[::1]:8080", "lo", true, 0, NULL, msg, sizeof(msg)), -EINVAL);
	/* the same address while another interface is served: fine */
	CU_ASSERT_EQUAL(
	    check("127.0.0.1:8080", "vmdhcp-none0", true, 0, NULL, msg, sizeof(msg)), 0);
	/* a name that only starts like it is another interface */
	CU_ASSERT_EQUAL(check("127.0.0.1:8080", "l", true, 0, NULL, msg, sizeof(msg)), 0);
}

static const struct test_case caps_tests[] = {
    {"capability names", test_format},
    {"drop keeps NET_ADMIN only, for good", test_drop},
    {"raise makes the permitted set effective", test_raise},
    {NULL, NULL},
};

static const struct test_case listen_tests[] = {
    {"wildcard: refused in Kubernetes mode, warned in local mode", test_listen_wildcard},
    {"the pool's serverIP is refused", test_listen_server_ip},
    {"an address of the served interface is refused", test_listen_on_interface},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "agent-caps", .tests = caps_tests},
    {.name = "agent-listen", .tests = listen_tests},
    {.name = NULL},
};

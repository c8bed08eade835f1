/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's capabilities, through capget/capset and prctl. No library: the agent only ever
 * makes its permitted set effective at start and later keeps at most one capability, which
 * these calls say directly (libcap-ng would add a shared object to map for the same result).
 *
 * In production the binary carries file capabilities (cap_net_raw, cap_net_bind_service,
 * cap_net_admin) and runs as a non-root uid. agent_caps_raise() makes the permitted set
 * effective, so file capabilities set as "+p" work as well as "+ep". agent_caps_drop() leaves
 * only the kept capabilities in the permitted and effective sets and none in the inheritable and
 * ambient ones, removes the others from the bounding set when the process may (CAP_SETPCAP,
 * e.g. uid 0), and sets no_new_privs: no later execve() can give any back, not even to uid 0.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/caps.h"
#include "lib/util.h"

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

/* Names as Kubernetes' securityContext.capabilities and capabilities(7) spell them. */
static const char *const cap_names[] = {
    [CAP_CHOWN] = "CHOWN",
    [CAP_DAC_OVERRIDE] = "DAC_OVERRIDE",
    [CAP_DAC_READ_SEARCH] = "DAC_READ_SEARCH",
    [CAP_FOWNER] = "FOWNER",
    [CAP_FSETID] = "FSETID",
    [CAP_KILL] = "KILL",
    [CAP_SETGID] = "SETGID",
    [CAP_SETUID] = "SETUID",
    [CAP_SETPCAP] = "SETPCAP",
    [CAP_LINUX_IMMUTABLE] = "LINUX_IMMUTABLE",
    [CAP_NET_BIND_SERVICE] = "NET_BIND_SERVICE",
    [CAP_NET_BROADCAST] = "NET_BROADCAST",
    [CAP_NET_ADMIN] = "NET_ADMIN",
    [CAP_NET_RAW] = "NET_RAW",
    [CAP_IPC_LOCK] = "IPC_LOCK",
    [CAP_IPC_OWNER] = "IPC_OWNER",
    [CAP_SYS_MODULE] = "SYS_MODULE",
    [CAP_SYS_RAWIO] = "SYS_RAWIO",
    [CAP_SYS_CHROOT] = "SYS_CHROOT",
    [CAP_SYS_PTRACE] = "SYS_PTRACE",
    [CAP_SYS_PACCT] = "SYS_PACCT",
    [CAP_SYS_ADMIN] = "SYS_ADMIN",
    [CAP_SYS_BOOT] = "SYS_BOOT",
    [CAP_SYS_NICE] = "SYS_NICE",
    [CAP_SYS_RESOURCE] = "SYS_RESOURCE",
    [CAP_SYS_TIME] = "SYS_TIME",
    [CAP_SYS_TTY_CONFIG] = "SYS_TTY_CONFIG",
    [CAP_MKNOD] = "MKNOD",
    [CAP_LEASE] = "LEASE",
    [CAP_AUDIT_WRITE] = "AUDIT_WRITE",
    [CAP_AUDIT_CONTROL] = "AUDIT_CONTROL",
    [CAP_SETFCAP] = "SETFCAP",
    [CAP_MAC_OVERRIDE] = "MAC_OVERRIDE",
    [CAP_MAC_ADMIN] = "MAC_ADMIN",
    [CAP_SYSLOG] = "SYSLOG",
    [CAP_WAKE_ALARM] = "WAKE_ALARM",
    [CAP_BLOCK_SUSPEND] = "BLOCK_SUSPEND",
    [CAP_AUDIT_READ] = "AUDIT_READ",
    [CAP_PERFMON] = "PERFMON",
    [CAP_BPF] = "BPF",
    [CAP_CHECKPOINT_RESTORE] = "CHECKPOINT_RESTORE",
};

static int
caps_set(uint64_t effective, uint64_t permitted, uint64_t inheritable)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {
	    {(uint32_t)effective, (uint32_t)permitted, (uint32_t)inheritable},
	    {(uint32_t)(effective >> 32), (uint32_t)(permitted >> 32),
		(uint32_t)(inheritable >> 32)},
	};

	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

int
agent_caps_get(struct agent_caps *ret)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	/* zeroed: valgrind's capget wrapper marks only the first of the two words written */
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = {{0}};
	struct agent_caps c = {0};

	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	c.effective = d[0].effective | (uint64_t)d[1].effective << 32;
	c.permitted = d[0].permitted | (uint64_t)d[1].permitted << 32;
	c.inheritable = d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	/* the bounding set: PR_CAPBSET_READ answers EINVAL past the kernel's last capability */
	for (int cap = 0; cap < 64; cap++) {
		int r = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
		if (r < 0)
			break;
		if (r == 1)
			c.bounding |= AGENT_CAP(cap);
	}
	*ret = c;
	return 0;
}

int
agent_caps_raise(uint64_t *ret_raised)
{
	struct agent_caps c;
	int r;

	*ret_raised = 0;
	if ((r = agent_caps_get(&c)) < 0)
		return r;
	if ((c.permitted & ~c.effective) == 0)
		return 0;
	if ((r = caps_set(c.permitted, c.permitted, c.inheritable)) < 0)
		return r;
	*ret_raised = c.permitted & ~c.effective;
	return 0;
}

/* Threads of the process (Threads: in /proc/self/status), or 0 when unknown. */
static unsigned
n_threads(void)
{
	char line[128];
	unsigned n = 0;
	FILE *f = fopen("/proc/self/status", "re");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "Threads: %u", &n) == 1)
			break;
	fclose(f);
	return n;
}

int
agent_caps_drop(uint64_t keep, struct agent_caps *ret_before, struct agent_caps *ret_after)
{
	struct agent_caps before, after;
	int r;

	/* capset() changes the calling thread only: another thread would keep everything */
	if (n_threads() > 1)
		return -EBUSY;
	if ((r = agent_caps_get(&before)) < 0)
		return r;
	keep &= before.permitted;
	/* the bounding set first: dropping from it needs CAP_SETPCAP, about to go */
	if (before.effective & AGENT_CAP(CAP_SETPCAP))
		for (int cap = 0; cap < 64; cap++)
			if ((before.bounding & ~keep & AGENT_CAP(cap)) &&
			    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
				return -errno;
	/* EINVAL: a kernel before 4.3 has no ambient set */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	/* the agent never executes anything: nothing it could execute gains privileges */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if ((r = caps_set(keep, keep, 0)) < 0)
		return r;
	if ((r = agent_caps_get(&after)) < 0)
		return r;
	if (after.permitted != keep || after.effective != keep || after.inheritable != 0)
		return -EPERM;
	if (ret_before != NULL)
		*ret_before = before;
	if (ret_after != NULL)
		*ret_after = after;
	return 0;
}

const char *
agent_caps_format(uint64_t mask, unsigned max_names, char *buf, size_t len)
{
	size_t off = 0;
	unsigned n = 0, more = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (unsigned cap = 0; cap < 64; cap++) {
		char unknown[16];
		const char *name;

		if ((mask & AGENT_CAP(cap)) == 0)
			continue;
		if (n == max_names) {
			more++;
			continue;
		}
		name = cap < ELEMENTSOF(cap_names) ? cap_names[cap] : NULL;
		if (name == NULL) {
			snprintf(unknown, sizeof(unknown), "CAP_%u", cap);
			name = unknown;
		}
		off += (size_t)snprintf(
		    buf + off, off < len ? len - off : 0, "%s%s", n > 0 ? ", " : "", name);
		if (off >= len)
			off = len - 1;
		n++;
	}
	if (n == 0)
		snprintf(buf, len, "none");
	else if (more > 0)
		snprintf(buf + off, len - off, " and %u more", more);
	return buf;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where the HTTP endpoint may listen. /metrics names every bound MAC and address and /readyz
 * the pool: they are for the kubelet and Prometheus, never for the VMs. So --listen must not
 * be an address of the served interface, nor the pool's serverIP (the agent adds that one to
 * the served interface itself); in Kubernetes mode it must not be a wildcard either (it would
 * listen on eth1 too): the controller passes the pod IP (--listen $(POD_IP):8080).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "agent/listen.h"
#include "lib/util.h"

/*
 * listen's host as lib/httpd.c reads it ("HOST:PORT", ":PORT", "[V6]:PORT", numeric or
 * "localhost"): 0 and the address (AF_INET or AF_INET6) in *ret, or -EINVAL (httpd_new()
 * then refuses it with its own message).
 */
static int
listen_addr(const char *listen, struct sockaddr_storage *ret, char *host, size_t hostlen)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ret;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ret;
	const char *start = listen, *end;
	size_t n;

	memset(ret, 0, sizeof(*ret));
	if (listen[0] == '[') {
		start = listen + 1;
		end = strchr(listen, ']');
		if (end == NULL || end[1] != ':')
			return -EINVAL;
	} else if ((end = strrchr(listen, ':')) == NULL) {
		return -EINVAL;
	}
	n = (size_t)(end - start);
	if (n >= hostlen)
		return -EINVAL;
	memcpy(host, start, n);
	host[n] = '\0';
	if (n == 0 || strcmp(host, "localhost") == 0) {
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(n == 0 ? INADDR_ANY : INADDR_LOOPBACK);
	} else if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			struct in_addr v4;
			memcpy(&v4, &sin6->sin6_addr.s6_addr[12], 4);
			memset(ret, 0, sizeof(*ret));
			sin->sin_family = AF_INET;
			sin->sin_addr = v4;
		}
	} else {
		return -EINVAL;
	}
	return 0;
}

static bool
same_addr(const struct sockaddr_storage *a, const struct sockaddr *b)
{
	if (b == NULL || a->ss_family != b->sa_family)
		return false;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)(const void *)b)->sin_addr.s_addr;
	return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		   &((const struct sockaddr_in6 *)(const void *)b)->sin6_addr,
		   sizeof(struct in6_addr)) == 0;
}

/* Whether addr is configured on ifname (IPv4 labels "ifname:N" included). */
static int
on_interface(const struct sockaddr_storage *addr, const char *ifname, bool *ret)
{
	struct ifaddrs *list, *ifa;
	size_t len = strlen(ifname);

	*ret = false;
	if (getifaddrs(&list) < 0)
		return -errno;
	for (ifa = list; ifa != NULL; ifa = ifa->ifa_next) {
		if (strncmp(ifa->ifa_name, ifname, len) != 0 ||
		    (ifa->ifa_name[len] != '\0' && ifa->ifa_name[len] != ':'))
			continue;
		if (same_addr(addr, ifa->ifa_addr)) {
			*ret = true;
			break;
		}
	}
	freeifaddrs(list);
	return 0;
}

int
agent_listen_check(const char *listen, const char *ifname, bool kube, uint32_t server_ip,
    uint32_t *ret_ip, char *msg, size_t msglen)
{
	struct sockaddr_storage ss;
	char host[INET6_ADDRSTRLEN + 8];
	bool wildcard, on_if;
	uint32_t ip = 0;
	int r;

	*ret_ip = 0;
	msg[0] = '\0';
	if (listen_addr(listen, &ss, host, sizeof(host)) < 0)
		return 0; /* not an address httpd_new() takes: it says so */
	if (ss.ss_family == AF_INET) {
		ip = ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr);
		wildcard = ip == INADDR_ANY;
	} else {
		wildcard = IN6_IS_ADDR_UNSPECIFIED(&((struct sockaddr_in6 *)&ss)->sin6_addr);
	}
	if (wildcard) {
		if (kube) {
			snprintf(msg, msglen,
			    "--listen %s listens on every interface, %s (the VMs' network) "
			    "included, "
			    "and would show /metrics to every VM: bind the pod IP instead "
			    "(--listen $(POD_IP):PORT)",
			    listen, ifname);
			return -EINVAL;
		}
		snprintf(msg, msglen,
		    "--listen %s listens on every interface: VMs on %s can reach /healthz, /readyz "
		    "and /metrics; bind an address of another interface (e.g. 127.0.0.1:PORT)",
		    listen, ifname);
		return 1;
	}
	if (ip != 0 && ip == server_ip) {
		snprintf(msg, msglen,
		    "--listen %s: %s is the pool's serverIP, an address of %s (the VMs' network): "
		    "/metrics would be open to every VM; bind an address of another interface%s",
		    listen, host, ifname, kube ? " (the pod IP: --listen $(POD_IP):PORT)" : "");
		return -EINVAL;
	}
	if ((r = on_interface(&ss, ifname, &on_if)) < 0) {
		snprintf(msg, msglen, "--listen %s: cannot list the addresses of %s: %s", listen,
		    ifname, strerror(-r));
		return r;
	}
	if (on_if) {
		snprintf(msg, msglen,
		    "--listen %s: %s is an address of %s, the interface the VMs are on: /metrics "
		    "would be open to every VM; bind an address of another interface%s",
		    listen, host, ifname, kube ? " (the pod IP: --listen $(POD_IP):PORT)" : "");
		return -EINVAL;
	}
	*ret_ip = ip;
	return 0;
}

int
agent_listen_device(const char *listen, char *ifname, size_t len)
{
	struct sockaddr_storage ss;
	char host[INET6_ADDRSTRLEN + 8];
	struct ifaddrs *list, *ifa;
	int r = -ENOENT;

	if (listen_addr(listen, &ss, host, sizeof(host)) < 0)
		return -EINVAL;
	if (getifaddrs(&list) < 0)
		return -errno;
	for (ifa = list; ifa != NULL; ifa = ifa->ifa_next) {
		if (!same_addr(&ss, ifa->ifa_addr))
			continue;
		/* "eth0:1" (an IPv4 label) is device eth0 */
		if (snprintf(ifname, len, "%.*s", (int)strcspn(ifa->ifa_name, ":"), ifa->ifa_name) <
		    (int)len)
			r = 0;
		break;
	}
	freeifaddrs(list);
	return r;
}

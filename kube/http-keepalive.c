/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TCP keep-alive of the API server connections, for both transports (kube/http.c through
 * curl's socket-option callback, kube/http-mbedtls.c when it connects).
 *
 * A watch may rightly carry no byte for minutes: the API server's watch cache sends bookmarks
 * (about once a minute and 2 s before the watch's deadline) only once it has dispatched an event
 * of that resource since it started, so a Node, NAD or VirtualMachine watch on a cluster where
 * none changed stays silent until the server ends it at its timeoutSeconds. Silence is
 * therefore no sign of a dead peer; the kernel finds one instead: keep-alive probes after
 * KEEPIDLE s without traffic, every KEEPINTVL s, the connection dropped after KEEPCNT
 * unanswered (client-go's dialer uses a 30 s keep-alive too), and TCP_USER_TIMEOUT so that
 * data left unacknowledged (a request or an HTTP/2 frame sent into a dead path, when
 * keep-alive probes do not run) fails the connection after the same bound rather than after
 * the kernel's retransmission limit (15 minutes and more). A dead peer, a reboot behind a
 * load balancer or a dropped NAT entry then ends the watch with an error within about a
 * minute and the informer watches again; a live server that stopped sending on a live
 * connection is caught by the watch's deadline (kube/watch.c).
 */
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "kube/kube-internal.h"

int
kube_http_keepalive(int fd)
{
	int one = 1, idle = KUBE_TCP_KEEPIDLE_S, intvl = KUBE_TCP_KEEPINTVL_S,
	    cnt = KUBE_TCP_KEEPCNT;
	unsigned user_timeout_ms =
	    (unsigned)(KUBE_TCP_KEEPIDLE_S + KUBE_TCP_KEEPINTVL_S * KUBE_TCP_KEEPCNT) * 1000u;
	int r = 0;

	r |= setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	r |= setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	r |= setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	r |= setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	r |= setsockopt(
	    fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof(user_timeout_ms));
	return r ? -1 : 0;
}

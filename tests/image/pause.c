/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pause: the test-only sandbox ("pause") image of the real-cluster harness (tests/cluster/),
 * built statically by scripts/build-image.sh into docker.io/vm-dhcp/pause:VERSION.
 *
 * Holds the pod's namespaces: sleeps until SIGTERM or SIGINT, then exits 0. As PID 1 of a
 * PID namespace a signal without a handler is ignored, so both are blocked and taken with
 * sigwait(). It reaps nothing: every container of a pod has its own PID namespace here.
 */
#include <signal.h>
#include <stdio.h>

int
main(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0) {
		perror("pause: sigprocmask");
		return 1;
	}
	while (sigwait(&set, &sig) != 0)
		;
	return 0;
}

#!/bin/sh
# scripts/big-pool-status.sh N - the status of the benchmarks' big IPPool (10.70.0.0/16, range
# 10.70.0.10-10.70.255.250) with N bindings in status.ipv4.allocated (N <= 65527): 10.70.0.10
# upwards to 52:54:01:00:00:00 upwards, as JSON for a merge patch of the status subresource.
# Used by scripts/bench-e2e.sh and scripts/bench-failover.sh.
n=${1:?usage: big-pool-status.sh N}
awk -v n="$n" 'BEGIN {
    printf "{\"status\":{\"ipv4\":{\"used\":%d,\"available\":%d,\"allocated\":{", n, 65527 - n
    for (i = 0; i < n; i++) {
        a = i + 10
        printf "%s\"10.70.%d.%d\":\"52:54:01:%02x:%02x:%02x\"", (i ? "," : ""), int(a / 256), a % 256,
            int(i / 65536), int(i / 256) % 256, i % 256
    }
    printf "}}}}"
}'

#!/bin/bash
# scripts/proc-lib.sh - what /proc says of a process, for the bench scripts and the network
# namespace tests (sourced).

# proc_status PID FIELD: a field of /proc/PID/status without its unit: VmRSS, VmHWM, RssAnon,
# RssFile (KiB), CapEff, CapPrm, CapBnd, NoNewPrivs, Uid...; empty when the process is gone.
proc_status() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status" 2>/dev/null; }

#!/bin/bash
# scripts/abuse-http.sh - throws abuse at the /healthz /readyz /metrics endpoint (lib/httpd.c,
# lib/httpd-conns.c)
# of a tiny server that runs only that endpoint (built here from build/lib.a, the same code the
# agent and the controller run), on loopback, and prints the server's VmRSS/VmHWM and log line
# count around each phase:
#   1. a 1 GB header, streamed in 64 KiB writes, as 1 KiB header lines, then as one line that
#      never ends; each stops after ABUSE_HEADER_MIB (default 64) MiB sent or when the server
#      closes the connection;
#   2. ABUSE_CONNS (default 10 000) connections, ABUSE_BATCH (default 100) at a time: each sends
#      GET /healthz, waits for the answer and closes (bounded by a 10 s timeout per batch);
#      then as many kubelet probes (GET /readyz with Connection: close, as Kubernetes 1.20
#      sends it), each of which must get status line and body, then EOF from the server;
#   3. pipelined GETs on one connection whose replies are never read, until the server stops
#      taking them (a send blocked for 2 s) or ABUSE_HEADER_MIB MiB are sent;
#   4. descriptor exhaustion: the server's RLIMIT_NOFILE lowered (prlimit) to what it has open
#      plus 2, 200 connections opened and held for ABUSE_EMFILE_SECS (default 5) s; the log
#      lines and CPU time of the server over that window; then the limit is restored and one
#      GET must be answered.
# HTTPD_OBJ="<objects>" links another build of the endpoint (lib/httpd.c and lib/httpd-conns.c,
# or a previous version's lib/httpd.c) instead of the one in build/lib.a (to measure it). No root needed; everything started is stopped by its PID.
set -u
cd "$(dirname "$0")/.."
LIB=${BUILD:-build}/lib.a
[ -f "$LIB" ] || { echo "abuse-http: $LIB not built (make)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "abuse-http: python3 missing" >&2; exit 1; }
TMP=$(mktemp -d /tmp/vmdhcp-abuse-http.XXXXXX)
SRV_PID=
stop() { [ -n "$1" ] && kill "$1" 2>/dev/null && wait "$1" 2>/dev/null; return 0; }
trap 'stop "$SRV_PID"; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

cat >"$TMP/httpd-only.c" <<'EOF'
/* Only the health/metrics endpoint on its loop: abuse target for scripts/abuse-http.sh. */
#include <signal.h>
#include <stdio.h>
#include <event2/event.h>
#include "lib/httpd.h"
#include "lib/log.h"

static void
on_term(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

int
main(int argc, char **argv)
{
	struct event_base *base;
	struct event *term;
	struct httpd *h = NULL;

	log_init("httpd-only", LOG_LEVEL_INFO);
	base = event_base_new();
	if (base == NULL || httpd_new(base, argc > 1 ? argv[1] : "127.0.0.1:0", NULL, &h) < 0)
		return 1;
	term = evsignal_new(base, SIGTERM, on_term, base);
	event_add(term, NULL);
	printf("%d\n", httpd_port(h));
	fflush(stdout);
	event_base_dispatch(base);
	httpd_free(h);
	event_free(term);
	event_base_free(base);
	return 0;
}
EOF
# shellcheck disable=SC2086
cc -std=c11 -D_GNU_SOURCE -O2 -I. -o "$TMP/httpd-only" "$TMP/httpd-only.c" ${HTTPD_OBJ:-} "$LIB" \
	$(pkg-config --cflags --libs libevent) || exit 1

"$TMP/httpd-only" 127.0.0.1:0 >"$TMP/port" 2>"$TMP/server.log" &
SRV_PID=$!
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
PORT=$(cat "$TMP/port")
[ -n "$PORT" ] || { echo "abuse-http: server did not start" >&2; exit 1; }

ABUSE_PID=$SRV_PID ABUSE_PORT=$PORT ABUSE_LOG="$TMP/server.log" \
ABUSE_HEADER_MIB=${ABUSE_HEADER_MIB:-64} ABUSE_CONNS=${ABUSE_CONNS:-10000} \
ABUSE_BATCH=${ABUSE_BATCH:-100} ABUSE_EMFILE_SECS=${ABUSE_EMFILE_SECS:-5} \
timeout 600 python3 - <<'EOF'
import os, resource, selectors, socket, time

pid, port, logf = int(os.environ["ABUSE_PID"]), int(os.environ["ABUSE_PORT"]), os.environ["ABUSE_LOG"]
GET = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"

def status():
    d = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("VmRSS", "VmHWM"):
                d[k] = int(v.split()[0])
    return d

def fds():
    return len(os.listdir(f"/proc/{pid}/fd"))

def cpu():
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")

def loglines():
    with open(logf, "rb") as f:
        return sum(1 for _ in f)

def report(phase):
    s = status()
    print(f"{phase:<34} VmRSS {s['VmRSS']:>8} KiB  VmHWM {s['VmHWM']:>8} KiB  "
          f"log lines {loglines():>8}  fds {fds()}", flush=True)

def get_once(timeout=10):
    c = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    c.sendall(GET)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = c.recv(4096)
        if not chunk:
            break
        data += chunk
    c.close()
    return data.split(b"\r\n", 1)[0].decode(errors="replace")

report("start")
print("GET /healthz:", get_once(), flush=True)

# 1. one huge header: header lines, then one line without end
limit = int(os.environ["ABUSE_HEADER_MIB"]) << 20
def huge_header(what, start, chunk):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(start)
    sent, why, t0 = 0, "limit reached", time.monotonic()
    try:
        while sent < limit:
            s.sendall(chunk)
            sent += len(chunk)
    except socket.timeout:
        why = "server stopped reading (send timed out after 10 s)"
    except OSError as e:
        why = f"server closed ({e.strerror})"
    reply = b""
    try:
        s.settimeout(2)
        reply = s.recv(200)
    except OSError:
        pass
    s.close()
    status_line = reply.split(b"\r\n", 1)[0].decode(errors="replace") or "(none)"
    print(f"1 GB header, {what}: {sent >> 10} KiB sent in {time.monotonic() - t0:.2f} s, {why}; "
          f"reply: {status_line}", flush=True)
    report(f"after huge header ({what})")

huge_header("lines", b"GET /healthz HTTP/1.1\r\nHost: x\r\n",
            (b"X-Pad: " + b"a" * 1017 + b"\r\n") * 64)  # 64 KiB
huge_header("one line", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ", b"a" * 65536)

# 2. many connections, in batches: GET then the client closes; kubelet probes (server closes)
PROBE = (b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: kube-probe/1.20\r\n"
         b"Accept: */*\r\nConnection: close\r\nAccept-Encoding: gzip\r\n\r\n")

def complete(data):
    # a whole 200 reply, body "ok\n"
    head, sep, body = data.partition(b"\r\n\r\n")
    return sep != b"" and head.startswith(b"HTTP/1.1 200") and body == b"ok\n"

def batches(what, request, until_eof):
    total, batch = int(os.environ["ABUSE_CONNS"]), int(os.environ["ABUSE_BATCH"])
    ok = bad = 0
    t0 = time.monotonic()
    for start in range(0, total, batch):
        n = min(batch, total - start)
        sel = selectors.DefaultSelector()
        socks = []
        for _ in range(n):
            c = socket.socket()
            c.setblocking(False)
            c.connect_ex(("127.0.0.1", port))
            socks.append(c)
            sel.register(c, selectors.EVENT_WRITE, b"")
        pending, deadline = n, time.monotonic() + 10
        while pending and time.monotonic() < deadline:
            for key, ev in sel.select(timeout=0.5):
                c = key.fileobj
                if ev & selectors.EVENT_WRITE:
                    try:
                        c.send(request)
                    except OSError:
                        bad += 1; pending -= 1; sel.unregister(c); continue
                    sel.modify(c, selectors.EVENT_READ, b"")
                    continue
                try:
                    chunk = c.recv(4096)
                except OSError:
                    chunk = None
                data = key.data + (chunk or b"")
                if until_eof and chunk == b"":  # the server closed: done
                    ok += complete(data); bad += not complete(data)
                    pending -= 1; sel.unregister(c)
                elif not chunk:
                    bad += 1; pending -= 1; sel.unregister(c)
                elif not until_eof and complete(data):
                    ok += 1; pending -= 1; sel.unregister(c)
                    c.close()  # as a probe does: frees the server's slot at once
                else:
                    sel.modify(c, selectors.EVENT_READ, data)
        bad += pending
        for c in socks:
            c.close()
        sel.close()
    print(f"{total} connections in batches of {batch}, {what}: {ok} answered 200 in full, "
          f"{bad} not, {time.monotonic() - t0:.2f} s", flush=True)
    report(f"after connections ({'probes' if until_eof else 'GET'})")

batches("GET /healthz, client closes", GET, False)
batches("kubelet probe with Connection: close, server closes", PROBE, True)

# 3. pipelined requests whose replies are never read
s = socket.create_connection(("127.0.0.1", port), timeout=2)
many = GET * 1024
sent, why, t0 = 0, "limit reached", time.monotonic()
try:
    while sent < limit:
        s.sendall(many)
        sent += len(many)
except socket.timeout:
    why = "server stopped reading (send blocked for 2 s)"
except OSError as e:
    why = f"server closed ({e.strerror})"
print(f"pipelined GETs, replies not read: {sent >> 10} KiB sent in {time.monotonic() - t0:.2f} s, "
      f"{why}", flush=True)
report("with pipelined requests waiting")
s.close()

# 4. descriptor exhaustion
old = resource.prlimit(pid, resource.RLIMIT_NOFILE)
resource.prlimit(pid, resource.RLIMIT_NOFILE, (fds() + 2, old[1]))
lines0, cpu0 = loglines(), cpu()
held = []
for _ in range(200):
    try:
        c = socket.socket()
        c.setblocking(False)
        c.connect_ex(("127.0.0.1", port))
        held.append(c)
    except OSError:
        break
secs = float(os.environ["ABUSE_EMFILE_SECS"])
time.sleep(secs)
lines, cpus = loglines() - lines0, cpu() - cpu0
print(f"EMFILE for {secs:.0f} s with {len(held)} connections waiting: {lines} log lines, "
      f"server CPU {cpus:.2f} s ({100 * cpus / secs:.0f} %)", flush=True)
report("during fd exhaustion")
for c in held:
    c.close()
resource.prlimit(pid, resource.RLIMIT_NOFILE, old)
t0 = time.monotonic()
print(f"limit restored: GET /healthz: {get_once()} ({time.monotonic() - t0:.2f} s)", flush=True)
report("end")
EOF
rc=$?
echo "--- server log (first 5 lines) ---"
head -n 5 "$TMP/server.log"
exit $rc

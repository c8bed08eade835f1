#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# tests/netns/dhcp-big-discover.py IFACE MAC SIZE [TIMEOUT_S]
#   Sends a DHCPDISCOVER of SIZE DHCP bytes (its options padded with PAD) as a raw broadcast
#   Ethernet frame on IFACE, from MAC, every second until an OFFER for it comes back; prints
#   "offer YIADDR" and exits 0, or exits 1 after TIMEOUT_S (default 5). For
#   test-agent-mtu.sh: a request larger than a 1500-byte link's frame.
import os
import select
import socket
import struct
import sys
import time


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def discover(mac, xid, size):
    fixed = struct.pack("!BBBBIHH4s4s4s4s", 1, 1, 6, 0, xid, 0, 0x8000, bytes(4), bytes(4),
                        bytes(4), bytes(4))
    fixed += mac + bytes(10) + bytes(192)
    opts = struct.pack("!I", 0x63825363) + bytes([53, 1, 1, 55, 3, 1, 3, 6])
    pad = size - len(fixed) - len(opts) - 1
    if pad < 0:
        sys.exit("size too small")
    return fixed + opts + bytes(pad) + bytes([255])


def frame(mac, payload):
    src, dst = bytes(4), b"\xff\xff\xff\xff"
    udp_len = 8 + len(payload)
    pseudo = src + dst + struct.pack("!BBH", 0, 17, udp_len)
    udp = struct.pack("!HHHH", 68, 67, udp_len, 0) + payload
    uc = csum(pseudo + udp) or 0xFFFF
    udp = udp[:6] + struct.pack("!H", uc) + udp[8:]
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, 0, 0, 64, 17, 0, src, dst)
    ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
    return b"\xff" * 6 + mac + b"\x08\x00" + ip + udp


def main():
    ifname, mac = sys.argv[1], bytes.fromhex(sys.argv[2].replace(":", ""))
    size = int(sys.argv[3])
    timeout = float(sys.argv[4]) if len(sys.argv) > 4 else 5.0
    xid = (os.getpid() * 2654435761) & 0xFFFFFFFF
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0800))
    s.bind((ifname, 0))
    f = frame(mac, discover(mac, xid, size))
    end = time.monotonic() + timeout
    next_send = 0.0
    while time.monotonic() < end:
        now = time.monotonic()
        if now >= next_send:
            s.send(f)
            next_send = now + 1.0
        r, _, _ = select.select([s], [], [], min(next_send, end) - now)
        if not r:
            continue
        pkt = s.recv(65535)
        if len(pkt) < 14 + 20 + 8 + 240 or pkt[23] != 17:
            continue
        ihl = (pkt[14] & 15) * 4
        udp = 14 + ihl
        if struct.unpack("!H", pkt[udp + 2:udp + 4])[0] != 68:
            continue
        d = pkt[udp + 8:]
        if d[0] != 2 or struct.unpack("!I", d[4:8])[0] != xid:
            continue
        print("offer %s" % socket.inet_ntoa(d[16:20]))
        return 0
    return 1


sys.exit(main())

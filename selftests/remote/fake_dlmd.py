#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fake_dlmd.py - a test double of dlmd for the kernel's daemon channel.

Speaks the generic netlink family "dlm" (uapi/linux/dlmem_nl.h) with raw
sockets, maps the frame pool and keeps stored DLM pages in a dict.  Modes
make it misbehave on purpose, to test that the kernel never trusts it:

  normal     serve every request
  silent     register, then never answer (the kernel must time out)
  garbage    before each real completion, send completions for unknown
             ids, bad statuses, missing attributes (all must be refused)
  fail-fetch answer FETCH with -EIO (a lost memory server)
  crash-after:N  serve N requests, then exit abruptly (os._exit)
  stall-after:N  serve N requests, then stay registered but silent
  stall-fetch  serve every request but FETCH, which it never answers
  keep       keep a page's copy at FETCH and say so (DLM_NL_F_KEPT);
             honour DROP of a kept page, refuse any other with -ESTALE
  keep-refuse  say KEPT but release the copy anyway and refuse every
             DROP: the kernel must STORE those pages, or lose them
  batch      serve every request but hold the completions until 8 are
             held or no request came for 30 ms, and count the most held
             at once (held_max in the stats file): how many transfers the
             kernel had in flight

Usage: fake_dlmd.py [--mode MODE] [--pool-mb N] [--ready-file F]
Writes F when registered and mapped; exits on SIGTERM.
"""
import argparse
import errno
import mmap
import os
import signal
import socket
import struct
import sys

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
NLMSG_ERROR = 2
NLM_F_REQUEST = 1
NLM_F_ACK = 4

CMD_REGISTER, CMD_UNREGISTER, CMD_REQUEST, CMD_COMPLETE = 1, 2, 3, 4
A_VERSION, A_POOL_SIZE, A_REQ_ID, A_OP, A_SPACE, A_DPN, A_POOL_OFF, \
    A_LEN, A_STATUS, A_PAGE_SIZE, A_TOTAL_SIZE, A_CPU_PAGE_SIZE, A_PAD, \
    A_BUDGET, A_FLAGS = range(1, 16)
OP_SPACE_NEW, OP_SPACE_DEL, OP_FETCH, OP_STORE, OP_DROP = 1, 2, 3, 4, 5
F_KEPT = 1


def attr(t, payload):
    a = struct.pack('=HH', 4 + len(payload), t) + payload
    return a + b'\0' * (-len(a) % 4)


def parse_attrs(buf):
    out = {}
    while len(buf) >= 4:
        ln, t = struct.unpack_from('=HH', buf)
        if ln < 4:
            break
        out[t & 0x3fff] = buf[4:ln]
        buf = buf[(ln + 3) & ~3:]
    return out


class Genl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                               NETLINK_GENERIC)
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.s.bind((0, 0))
        self.seq = 0
        self.errors = []

    def send(self, family, cmd, attrs, flags=NLM_F_REQUEST):
        self.seq += 1
        body = struct.pack('=BBH', cmd, 1, 0) + b''.join(attrs)
        hdr = struct.pack('=IHHII', 16 + len(body), family, flags, self.seq, 0)
        self.s.send(hdr + body)

    def recv(self):
        """Yield (type, cmd, attrs) or ('error', errno, None)."""
        data = self.s.recv(1 << 20)
        while len(data) >= 16:
            ln, typ, _, _, _ = struct.unpack_from('=IHHII', data)
            msg = data[16:ln]
            if typ == NLMSG_ERROR:
                err = struct.unpack_from('=i', msg)[0]
                yield ('error', -err, None)
            else:
                yield (typ, msg[0], parse_attrs(msg[4:]))
            data = data[(ln + 3) & ~3:]

    def family(self, name):
        self.send(GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                  [attr(CTRL_ATTR_FAMILY_NAME, name.encode() + b'\0')])
        for typ, cmd, a in self.recv():
            if typ == 'error':
                raise OSError(cmd, f'family {name}: {os.strerror(cmd)}')
            return struct.unpack('=H', a[CTRL_ATTR_FAMILY_ID][:2])[0]


def u32(v):
    return struct.pack('=I', v)


def u64(v):
    return struct.pack('=Q', v)


def s32(v):
    return struct.pack('=i', v)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--mode', default='normal')
    ap.add_argument('--pool-mb', type=int, default=64)
    ap.add_argument('--ready-file')
    args = ap.parse_args()

    g = Genl()
    try:
        fam = g.family('dlm')
    except OSError as e:
        print(f'fake_dlmd: {e} (load dlmem.ko)', file=sys.stderr)
        return 1
    g.send(fam, CMD_REGISTER, [attr(A_VERSION, u32(1)),
                               attr(A_POOL_SIZE, u64(args.pool_mb << 20))])
    for typ, cmd, a in g.recv():
        if typ == 'error':
            print(f'fake_dlmd: REGISTER: {os.strerror(cmd)}', file=sys.stderr)
            return 1
        pool_size = struct.unpack('=Q', a[A_POOL_SIZE])[0]
    fd = os.open('/dev/dlm', os.O_RDWR)
    pool = mmap.mmap(fd, pool_size, mmap.MAP_SHARED,
                     mmap.PROT_READ | mmap.PROT_WRITE, offset=0)
    if args.ready_file:
        with open(args.ready_file, 'w') as f:
            f.write(f'{os.getpid()} {pool_size}\n')
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))

    store = {}
    kept = set()
    drops = 0
    served = 0
    crash_after = (int(args.mode.split(':')[1])
                   if args.mode.startswith('crash-after:') else -1)
    stall_after = (int(args.mode.split(':')[1])
                   if args.mode.startswith('stall-after:') else -1)
    refused = 0
    held = []
    held_max = 0

    def complete(rid, status, extra=()):
        g.send(fam, CMD_COMPLETE, [attr(A_REQ_ID, u64(rid)),
                                   attr(A_STATUS, s32(status)), *extra])

    while True:
        if args.mode == 'batch':
            g.s.settimeout(0.03 if held else None)
        try:
            msgs = list(g.recv())
        except socket.timeout:
            msgs = []
        for typ, cmd, a in msgs:
            if typ == 'error':
                if cmd:
                    refused += 1
                continue
            if cmd != CMD_REQUEST:
                continue
            rid = struct.unpack('=Q', a[A_REQ_ID])[0]
            op = struct.unpack('=I', a[A_OP])[0]
            space = struct.unpack('=I', a[A_SPACE])[0]
            dpn = struct.unpack('=Q', a[A_DPN])[0]
            off = struct.unpack('=Q', a[A_POOL_OFF])[0]
            ln = struct.unpack('=I', a[A_LEN])[0]
            if args.mode == 'silent':
                continue
            if served == crash_after:
                os._exit(3)
            if served == stall_after:
                continue
            if args.mode == 'stall-fetch' and op == OP_FETCH:
                continue
            served += 1
            if args.mode == 'garbage':
                complete(rid + 1000000, 0)           # unknown id
                complete(rid, 5)                     # positive status
                complete(rid, -100000)               # not an errno
                g.send(fam, CMD_COMPLETE, [attr(A_REQ_ID, u64(rid))])
                g.send(fam, CMD_REQUEST, [attr(A_REQ_ID, u64(rid))])
                complete(1 << 40, 0)                 # id beyond 32 bits
                complete(rid, 0, [attr(A_FLAGS, u32(2))])  # unknown flag
            status = 0
            extra = []
            key = (space, dpn)
            if op == OP_STORE:
                store[key] = bytes(pool[off:off + ln])
                kept.discard(key)
            elif op == OP_FETCH:
                data = store.get(key)
                if args.mode == 'fail-fetch' or data is None:
                    status = -errno.EIO
                else:
                    pool[off:off + ln] = data
                    if args.mode == 'keep':
                        kept.add(key)
                    else:
                        del store[key]
                    if args.mode.startswith('keep'):
                        extra = [attr(A_FLAGS, u32(F_KEPT))]
            elif op == OP_DROP:
                if key in kept:
                    kept.discard(key)
                    drops += 1
                else:
                    status = -errno.ESTALE
            elif op == OP_SPACE_DEL:
                for k in [k for k in store if k[0] == space]:
                    del store[k]
                    kept.discard(k)
            if args.mode == 'batch':
                held.append((rid, status, extra))
                held_max = max(held_max, len(held))
            else:
                complete(rid, status, extra)
        if held and (not msgs or len(held) >= 8):
            for h in held:
                complete(*h)
            held = []
        if args.ready_file:
            with open(args.ready_file + '.stats', 'w') as f:
                f.write(f'served={served} refused={refused} '
                        f'stored={len(store)} drops={drops} '
                        f'held_max={held_max}\n')


if __name__ == '__main__':
    sys.exit(main())

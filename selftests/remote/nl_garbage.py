#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""nl_garbage.py - feed the generic netlink family "dlm" garbage.

Every malformed, out-of-order or unprivileged message must be refused
with a specific errno and change nothing.  Prints TAP.  Needs root, and
no daemon registered; the unprivileged case runs in a child as nobody.
"""
import errno
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_dlmd as f  # noqa: E402


def ask(g, fam, cmd, attrs):
    """Send with NLM_F_ACK; return the errno of the answer (0 = accepted)."""
    g.send(fam, cmd, attrs, flags=f.NLM_F_REQUEST | f.NLM_F_ACK)
    while True:
        for typ, code, _ in g.recv():
            if typ == 'error':
                return code


def main():
    g = f.Genl()
    fam = g.family('dlm')
    v1 = f.attr(f.A_VERSION, f.u32(1))
    cases = [
        ('REGISTER without attributes', f.CMD_REGISTER, [], errno.EINVAL),
        ('REGISTER without POOL_SIZE', f.CMD_REGISTER, [v1], errno.EINVAL),
        ('REGISTER with version 2', f.CMD_REGISTER,
         [f.attr(f.A_VERSION, f.u32(2)), f.attr(f.A_POOL_SIZE, f.u64(1 << 20))],
         errno.EPROTONOSUPPORT),
        ('REGISTER with a pool of 0 bytes', f.CMD_REGISTER,
         [v1, f.attr(f.A_POOL_SIZE, f.u64(0))], errno.EINVAL),
        ('REGISTER with a pool of 2^60 bytes', f.CMD_REGISTER,
         [v1, f.attr(f.A_POOL_SIZE, f.u64(1 << 60))], errno.EINVAL),
        ('REGISTER with a 2-byte VERSION', f.CMD_REGISTER,
         [f.attr(f.A_VERSION, struct.pack('=H', 1)),
          f.attr(f.A_POOL_SIZE, f.u64(1 << 20))], errno.ERANGE),
        ('REGISTER with an unknown attribute', f.CMD_REGISTER,
         [v1, f.attr(f.A_POOL_SIZE, f.u64(1 << 20)), f.attr(200, f.u32(0))],
         errno.EINVAL),
        ('COMPLETE from a socket that is not the daemon', f.CMD_COMPLETE,
         [f.attr(f.A_REQ_ID, f.u64(1)), f.attr(f.A_STATUS, f.s32(0))],
         errno.EPERM),
        ('UNREGISTER from a socket that is not the daemon',
         f.CMD_UNREGISTER, [], errno.EPERM),
        ('REQUEST sent to the kernel', f.CMD_REQUEST,
         [f.attr(f.A_REQ_ID, f.u64(1))], errno.EOPNOTSUPP),
        ('unknown command 99', 99, [], errno.EOPNOTSUPP),
    ]
    print('TAP version 13')
    print(f'1..{len(cases) + 2}')
    n = fail = 0
    for desc, cmd, attrs, want in cases:
        got = ask(g, fam, cmd, attrs)
        n += 1
        # A wrong-length attribute is EINVAL on some kernels, ERANGE on others.
        ok = got == want or (want == errno.ERANGE and got == errno.EINVAL)
        fail |= not ok
        print(f'{"ok" if ok else "not ok"} {n} - {desc}: '
              f'{errno.errorcode.get(got, got)} (want {errno.errorcode[want]})')

    with open('/sys/class/misc/dlm/daemon') as d:
        port = d.read().strip()
    n += 1
    fail |= port != '0'
    print(f'{"ok" if port == "0" else "not ok"} {n} - no daemon registered '
          f'after all that (port {port})')

    # Without CAP_SYS_ADMIN: as nobody, in a child that asks directly.
    sys.stdout.flush()
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            u = f.Genl()
            code = ask(u, u.family('dlm'), f.CMD_REGISTER,
                       [f.attr(f.A_VERSION, f.u32(1)),
                        f.attr(f.A_POOL_SIZE, f.u64(1 << 20))])
            os.write(wfd, str(code).encode())
        finally:
            os._exit(0)
    os.close(wfd)
    out = os.read(rfd, 100).decode().strip()
    os.waitpid(pid, 0)
    n += 1
    ok = out == str(errno.EPERM)
    fail |= not ok
    print(f'{"ok" if ok else "not ok"} {n} - REGISTER without CAP_SYS_ADMIN: '
          f'{out} (want EPERM={errno.EPERM})')
    return 1 if fail else 0


if __name__ == '__main__':
    sys.exit(main())

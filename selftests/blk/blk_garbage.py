#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""blk_garbage.py - feed DLM_IOC_BLK_ADD and DLM_IOC_BLK_DEL garbage.

Every bad field must be refused with its errno and create or remove
nothing (the set of /dev/dlmb* devices is compared before and after).
Needs root, dlmem.ko with CONFIG_DLMEM_BLK and a registered dlmd (so that
a valid request would succeed).  Prints one line per case, then a summary.
"""
import ctypes
import errno
import fcntl
import glob
import os
import struct
import sys

MAGIC = 0xDA
API = (3 << 30) | (16 << 16) | (MAGIC << 8) | 0x00        # _IOWR, 16 bytes
BLK_ADD = (3 << 30) | (48 << 16) | (MAGIC << 8) | 0x10    # _IOWR, 48 bytes
BLK_DEL = (1 << 30) | (24 << 16) | (MAGIC << 8) | 0x11    # _IOW, 24 bytes
FEATURE_BLK = 1 << 3
MB = 1 << 20


def add(flags=0, index=0, size=4 * MB, lbs=0, depth=0, queues=0, r0=0,
        r1=0, r2=0):
    return struct.pack('=IIQIIIIQQ', flags, index, size, lbs, depth, queues,
                       r0, r1, r2)


def delete(flags=0, index=0, r1=0, r2=0):
    return struct.pack('=IIQQ', flags, index, r1, r2)


def call(fd, req, buf):
    try:
        fcntl.ioctl(fd, req, bytearray(buf), True)
        return 0
    except OSError as e:
        return e.errno


def main():
    fd = os.open('/dev/dlm', os.O_RDONLY)
    before = sorted(glob.glob('/dev/dlmb*'))
    bad = 0
    n = 0

    def expect(desc, req, buf, want):
        nonlocal bad, n
        n += 1
        got = call(fd, req, buf)
        ok = got == want
        bad += not ok
        print('%s %s: %s (want %s)' % ('ok' if ok else 'FAIL', desc,
                                        errno.errorcode.get(got, got),
                                        errno.errorcode.get(want, want)))

    expect('BLK_ADD before the handshake', BLK_ADD, add(), errno.EPROTO)
    api = bytearray(struct.pack('=IIQ', 1, 0, FEATURE_BLK))
    fcntl.ioctl(fd, API, api, True)

    cases = [
        ('flags 1', add(flags=1), errno.EINVAL),
        ('flags 2^31', add(flags=1 << 31), errno.EINVAL),
        ('size 0', add(size=0), errno.EINVAL),
        ('size 4097', add(size=4097), errno.EINVAL),
        ('size 2^63', add(size=1 << 63), errno.EINVAL),
        ('logical block size 512', add(lbs=512), errno.EINVAL),
        ('logical block size 3', add(lbs=3), errno.EINVAL),
        ('queue depth 257', add(depth=257), errno.EINVAL),
        ('queue depth 2^32-1', add(depth=0xffffffff), errno.EINVAL),
        ('9 hardware queues', add(queues=9), errno.EINVAL),
        ('reserved0 set', add(r0=1), errno.EINVAL),
        ('reserved[0] set', add(r1=1), errno.EINVAL),
        ('reserved[1] set', add(r2=1 << 63), errno.EINVAL),
    ]
    for desc, buf, want in cases:
        expect('BLK_ADD ' + desc, BLK_ADD, buf, want)
    dcases = [
        ('flags 1', delete(flags=1), errno.EINVAL),
        ('reserved[0] set', delete(r1=1), errno.EINVAL),
        ('reserved[1] set', delete(r2=5), errno.EINVAL),
        ('a device that does not exist', delete(index=4000), errno.ENOENT),
        ('index 2^32-1', delete(index=0xffffffff), errno.ENOENT),
    ]
    for desc, buf, want in dcases:
        expect('BLK_DEL ' + desc, BLK_DEL, buf, want)

    # A bad user pointer: EFAULT, nothing created.
    n += 1
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
    rc = libc.ioctl(fd, BLK_ADD, ctypes.c_void_p(16))
    got = ctypes.get_errno() if rc else 0
    ok = rc == -1 and got == errno.EFAULT
    bad += not ok
    print('%s BLK_ADD with a bad pointer: %s' %
          ('ok' if ok else 'FAIL', errno.errorcode.get(got, got)))

    after = sorted(glob.glob('/dev/dlmb*'))
    n += 1
    if after != before:
        bad += 1
        print('FAIL devices changed: %s -> %s' % (before, after))
    else:
        print('ok devices unchanged: %s' % before)

    # Not root: EPERM, even with valid arguments.
    n += 1
    pid = os.fork()
    if pid == 0:
        os.setuid(65534)
        os._exit(call(fd, BLK_ADD, add()))
    _, status = os.waitpid(pid, 0)
    got = os.WEXITSTATUS(status)
    ok = got == errno.EPERM
    bad += not ok
    print('%s BLK_ADD as nobody: %s' % ('ok' if ok else 'FAIL',
                                        errno.errorcode.get(got, got)))
    print('%d cases, %d wrong' % (n, bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())

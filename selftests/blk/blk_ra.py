#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""blk_ra.py DEV CHECK - the read-ahead windows of /dev/dlmbN (kmod/blk_ra.c)
and the order of overlapping requests (kmod/blk_order.c).

Every 4 KB block written here holds (block number, generation) repeated, so
a read shows which write it returns.  All I/O is O_DIRECT, so every read
reaches the device.  CHECK is one of:

  seq    8 MB written, then read back in 32 KB reads: every block correct,
         and most reads were served by a window (ra_stat).
  write  a write, or a discard, into a window fetched ahead of the reader:
         the reads that follow return the new data (or zeroes), never the
         window's old copy.
  race   one thread rewrites random blocks while two threads read the
         region sequentially: every block a read returns is at least as
         new as the last write completed before the read was issued, and
         no newer than the last one issued before the read returned.
  overlap  one thread rewrites the same 16 KB while another reads it
         (kmod/blk_order.c): every block read is whole (one write's data,
         never torn between two) and fresh as in race, and some requests
         waited for an overlapping one (order_waits).

Prints one summary line; exit status 0 if the check passed, 1 if not.
"""
import fcntl
import mmap
import os
import random
import struct
import sys
import threading
import time

BS = 4096
CHUNK = 8			# blocks per read: a swap-in cluster (32 KB)
BLKDISCARD = 0x1277		# _IO(0x12, 119)


def ra_stat(dev):
    name = os.path.basename(os.path.realpath(dev))
    with open(f"/sys/block/{name}/dlmb/ra_stat") as f:
        v = [int(x) for x in f.read().split()]
    return dict(zip(("fetches", "hits", "waits", "invalidated", "unused"), v))


def delta(a, b):
    return {k: b[k] - a[k] for k in a}


def pattern(blk, gen):
    return struct.pack("<QQ", blk, gen) * (BS // 16)


class Dev:
    """An O_DIRECT descriptor with an aligned buffer of its own."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR | os.O_DIRECT)
        self.buf = mmap.mmap(-1, 1 << 20)
        self.view = memoryview(self.buf)

    def write(self, blk, gens):
        n = len(gens)
        for i, g in enumerate(gens):
            self.buf[i * BS:(i + 1) * BS] = pattern(blk + i, g)
        if os.pwrite(self.fd, self.view[:n * BS], blk * BS) != n * BS:
            raise OSError(f"short write at block {blk}")

    def read(self, blk, n):
        """The generation of each block read (0: zeroes); raises on junk."""
        if os.preadv(self.fd, [self.view[:n * BS]], blk * BS) != n * BS:
            raise OSError(f"short read at block {blk}")
        gens = []
        for i in range(n):
            data = self.buf[i * BS:(i + 1) * BS]
            b, g = struct.unpack_from("<QQ", data)
            if data == bytes(BS):
                gens.append(0)
            elif b == blk + i and data == pattern(b, g):
                gens.append(g)
            else:
                raise ValueError(f"block {blk + i}: holds block {b} gen {g}"
                                 " or is torn")
        return gens

    def discard(self, blk, n):
        fcntl.ioctl(self.fd, BLKDISCARD, struct.pack("QQ", blk * BS, n * BS))


def fill(d, first, n, gen):
    for b in range(first, first + n, 32):
        d.write(b, [gen] * min(32, first + n - b))


def check_seq(dev):
    d = Dev(dev)
    n = 2048
    fill(d, 0, n, 1)
    s0 = ra_stat(dev)
    reads = 0
    for b in range(0, n, CHUNK):
        if d.read(b, CHUNK) != [1] * CHUNK:
            return False, f"block {b}: wrong generation"
        reads += 1
    s = delta(s0, ra_stat(dev))
    served = s["hits"] + s["waits"]
    msg = (f"{reads} reads of 32 KB correct; windows: {s['fetches']} fetched,"
           f" {s['hits']} reads hit, {s['waits']} waited")
    return served >= reads * 3 // 4 and s["fetches"] >= n // 32 // 2, msg


def check_write(dev):
    d = Dev(dev)
    n = 4096
    fill(d, 0, n, 1)
    rng = random.Random(7)
    s0 = ra_stat(dev)
    gen = 1
    for k in range(60):
        base = rng.randrange(1, n // CHUNK - 6) * CHUNK
        d.read(base - CHUNK, CHUNK)		# a stream ...
        d.read(base, CHUNK)			# ... that fetches a window here
        target = base + CHUNK + rng.randrange(3 * CHUNK)
        gen += 1
        if k % 3 == 2:
            d.discard(target, 1)
            want = 0
        else:
            d.write(target, [gen])
            want = gen
        for b in range(base + CHUNK, base + 4 * CHUNK, CHUNK):
            got = d.read(b, CHUNK)
            if b <= target < b + CHUNK and got[target - b] != want:
                return False, (f"round {k}: block {target} read gen "
                               f"{got[target - b]} after writing {want}")
        d.write(target, [1])			# restore for later rounds
    s = delta(s0, ra_stat(dev))
    msg = (f"60 writes/discards into windows read back new; windows: "
           f"{s['fetches']} fetched, {s['invalidated']} invalidated, "
           f"{s['hits'] + s['waits']} reads served")
    return s["invalidated"] >= 60 and s["hits"] + s["waits"] > 0, msg


class Race:
    """Threads writing and reading blocks FIRST.. FIRST+N-1 of DEV, each
    filled with generation 1 first.  A read fails (the first error kept)
    unless every block it returns is whole, at least as new as the last
    write of it completed before the read was issued, and no newer than
    the last one issued before the read returned."""

    def __init__(self, dev, first, n):
        self.first = first
        self.issued = [1] * n		# last generation whose write was issued
        self.done = [1] * n		# ... whose write completed
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.errors = []
        self.writes = self.reads = 0
        fill(Dev(dev), first, n, 1)

    def write(self, w, blk, gen, k=1):
        """Write generation GEN to K blocks from FIRST+BLK through W."""
        with self.lock:
            self.issued[blk:blk + k] = [gen] * k
        w.write(self.first + blk, [gen] * k)
        with self.lock:
            self.done[blk:blk + k] = [gen] * k
            self.writes += 1

    def read(self, r, blk, k):
        """Read K blocks from FIRST+BLK through R; False if one is wrong."""
        with self.lock:
            lo = self.done[blk:blk + k]
        try:
            got = r.read(self.first + blk, k)
        except (OSError, ValueError) as e:
            self.errors.append(f"{e} (read {self.reads + 1})")
            return False
        with self.lock:
            hi = self.issued[blk:blk + k]
            self.reads += 1
        for i in range(k):
            if not lo[i] <= got[i] <= hi[i]:
                self.errors.append(f"block {self.first + blk + i}: read gen "
                                   f"{got[i]}, want {lo[i]}..{hi[i]}")
                return False
        return True

    def run(self, workers, seconds):
        """Run each (function, args) of WORKERS in a thread for SECONDS,
        or until a read fails; the first error, or None."""
        threads = [threading.Thread(target=f, args=a) for f, a in workers]
        for t in threads:
            t.start()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.errors:
            time.sleep(0.1)
        self.stop.set()
        for t in threads:
            t.join()
        return self.errors[0] if self.errors else None


def check_race(dev, seconds=10.0):
    n = 1024
    race = Race(dev, 0, n)
    s0 = ra_stat(dev)

    def writer():
        w = Dev(dev)
        rng = random.Random(11)
        gen = 1
        while not race.stop.is_set():
            gen += 1
            race.write(w, rng.randrange(n), gen)

    def reader(start):
        r = Dev(dev)
        b = start
        while not race.stop.is_set() and race.read(r, b, CHUNK):
            b = (b + CHUNK) % n

    err = race.run([(writer, ()), (reader, (0,)), (reader, (n // 2,))],
                   seconds)
    s = delta(s0, ra_stat(dev))
    if err:
        return False, err
    msg = (f"{race.reads} reads against {race.writes} writes in "
           f"{seconds:.0f} s all fresh; windows: {s['fetches']} fetched, "
           f"{s['invalidated']} invalidated, {s['hits'] + s['waits']} "
           f"reads served")
    return s["invalidated"] > 0 and s["hits"] + s["waits"] > 0, msg


def order_waits(dev):
    name = os.path.basename(os.path.realpath(dev))
    with open(f"/sys/block/{name}/dlmb/order_waits") as f:
        return int(f.read())


def check_overlap(dev, seconds=10.0):
    n = 4
    race = Race(dev, 4096, n)	# clear of the other checks' blocks
    w0 = order_waits(dev)

    def writer():
        w = Dev(dev)
        gen = 1
        while not race.stop.is_set():
            gen += 1
            race.write(w, 0, gen, n)

    def reader():
        r = Dev(dev)
        while not race.stop.is_set() and race.read(r, 0, n):
            pass

    err = race.run([(writer, ()), (reader, ())], seconds)
    if err:
        return False, err
    waits = order_waits(dev) - w0
    msg = (f"{race.reads} reads of 16 KB against {race.writes} writes of "
           f"them, every block whole and fresh; {waits} requests waited "
           f"for an overlapping one")
    return waits > 0, msg


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("seq", "write", "race",
                                                  "overlap"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    check = {"seq": check_seq, "write": check_write,
             "race": check_race, "overlap": check_overlap}[sys.argv[2]]
    try:
        passed, msg = check(sys.argv[1])
    except (OSError, ValueError) as e:
        passed, msg = False, str(e)
    print(msg)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())

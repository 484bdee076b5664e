#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""verbs_report.py CSV PNG TITLE - table, ratios and plot of verbs.sh.

Prints, from one run: the link's limit (perftest ib_read_bw and
ib_write_bw, 1 MB), dlmd's transports without the kernel (xfer_bench),
the triad through /dev/dlm per transport and local ratio with its time
relative to all-local memory, the ratios issue 5 asks for (verbs triad /
ib_read_bw, verbs against tcp and MPI) and the memory servers' CPU time
per swapped-in page.  Plots time relative to all-local memory against the
local-memory ratio, one line per transport (as the papers' figures).
"""
import csv
import sys

ORDER = ('verbs', 'tcp', 'openmpi', 'mpich')
MIB = 1048576 / 1e6     # perftest reports MiB/s; stream MB/s (10^6)


def main():
    path, png, title = sys.argv[1:4]
    rows = list(csv.DictReader(open(path)))

    def get(kind, tr, pct=100):
        for r in rows:
            if (r['kind'], r['transport'], int(r['local_pct'])) == \
                    (kind, tr, pct) and r['value']:
                return float(r['value']), r['extra']
        return None, ''

    print(title)
    print()
    print('Link limit (perftest, 1 MB messages, rxe0 -> rxe1)')
    rd, _ = get('perftest', 'ib_read_bw')
    wr, _ = get('perftest', 'ib_write_bw')
    for name, v in (('ib_read_bw', rd), ('ib_write_bw', wr)):
        print(f'  {name:12s} {v * MIB:8.1f} MB/s' if v else
              f'  {name:12s}    failed')
    print()
    print("dlmd's transport code alone (xfer_bench, 1 MB, 2 in flight)")
    for tr in ('verbs', 'tcp'):
        r, _ = get('xfer_read', tr)
        w, _ = get('xfer_write', tr)
        if r and w:
            extra = f'   read = {r / (rd * MIB):.2f} x ib_read_bw' \
                if tr == 'verbs' and rd else ''
            print(f'  {tr:6s} read {r:7.1f} MB/s  write {w:7.1f} MB/s{extra}')
        else:
            print(f'  {tr:6s} failed')
    print()

    local, _ = get('triad', 'local', 100)
    pcts = sorted({int(r['local_pct']) for r in rows
                   if r['kind'] == 'triad' and r['transport'] != 'local'},
                  reverse=True)
    trs = [t for t in ORDER if any(r['transport'] == t and r['kind'] == 'triad'
                                   for r in rows)]
    print('Triad through /dev/dlm (MB/s; time relative to all-local memory;'
          ' memory servers\' CPU per swapped-in page)')
    print(f'  all-local: {local:.1f} MB/s' if local else '  all-local: failed')
    print(f"  {'transport':9s} {'local%':>6s} {'MB/s':>8s} {'rel.time':>8s}"
          f" {'srv CPU ms/page':>15s}")
    curves = {}
    for tr in trs:
        for p in pcts:
            v, extra = get('triad', tr, p)
            if not v:
                print(f'  {tr:9s} {p:6d}   failed')
                continue
            kv = dict(x.split('=') for x in extra.split())
            sw = int(kv.get('swapins', 0))
            cpu = float(kv.get('server_cpu_ms', 0))
            per = f'{cpu / sw:15.3f}' if sw else f"{'-':>15s}"
            rel = local / v if local else float('nan')
            curves.setdefault(tr, []).append((p, rel))
            print(f'  {tr:9s} {p:6d} {v:8.1f} {rel:8.2f} {per}')
    print()
    print('Ratios (same run)')
    for p in pcts:
        v, _ = get('triad', 'verbs', p)
        if not v:
            continue
        if rd:
            mark = 'met' if v >= 0.5 * rd * MIB else 'NOT met'
            print(f'  {p}% local: verbs triad / ib_read_bw 1 MB = '
                  f'{v / (rd * MIB):.2f} (bar 0.50: {mark})')
        for other in trs:
            o, _ = get('triad', other, p)
            if other != 'verbs' and o:
                print(f'  {p}% local: verbs triad / {other} triad = {v / o:.2f}')
    print()

    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('(matplotlib missing: no plot)')
        return
    fig, ax = plt.subplots(figsize=(6, 4))
    for tr, pts in curves.items():
        pts.sort()
        ax.plot([p for p, _ in pts], [r for _, r in pts], marker='o', label=tr)
    ax.set_xlabel('local memory (% of the working set)')
    ax.set_ylabel('triad time relative to all-local')
    ax.set_title('DLM triad by transport', fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.text(0.5, 0.005, title, ha='center', fontsize=6)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(png, dpi=120)
    print(f'plot: {png}')


if __name__ == '__main__':
    main()

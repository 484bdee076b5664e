#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""stream_report.py CSV PNG TITLE [HIMENO_CSV] - tables, ratios and plot of stream.sh.

Prints triad and copy bandwidth per system and local ratio, each as a
ratio against all-local memory and against swap on nbd, the raw transport
rate, and issue 3's performance bar at the ratio nearest 10%; with
HIMENO_CSV also the Himeno-style benchmark's MFLOPS and run time relative
to all-local memory, with the same ratios between systems.  Plots the time
relative to all-local memory against the local-memory ratio (log scale),
as the papers' figures do: triad on the left, Himeno on the right.
"""
import csv
import sys


SYSTEMS = ('dlm', 'dlmb', 'nbd', 'zram')
RATIOS = [('dlm', 'nbd'), ('dlm', 'zram'), ('dlm', 'dlmb'), ('dlmb', 'nbd')]


def fmt(v, spec='%.1f'):
    return spec % v if v is not None else '-'


def rate_table(val, status, pcts, systems):
    """Rows of val(system, pct) (higher is faster) per local ratio, each
    with the time relative to all-local (val('local', 100)), then RATIOS."""
    local = val('local', 100)
    ratios = [(a, b) for a, b in RATIOS if a in systems and b in systems]
    print('%-7s' % 'local%' + ''.join('%20s' % s for s in systems) +
          ''.join('%11s' % f'{a}/{b}' for a, b in ratios))
    for p in pcts:
        cells = []
        for s in systems:
            v = val(s, p)
            rel = local / v if v and local else None
            cells.append('%20s' % (f'{fmt(v)} ({fmt(rel, "%.1fx")})'
                                   if v else status(s, p)))
        rs = ['%11s' % fmt(val(a, p) / val(b, p)
                           if val(a, p) and val(b, p) else None, '%.2f')
              for a, b in ratios]
        print('%-7d' % p + ''.join(cells) + ''.join(rs))


def himeno_table(path):
    """Print the Himeno table; return (relative time, ratios, systems)."""
    res = {(r['system'], int(r['local_pct'])): r for r in csv.DictReader(open(path))}

    def mflops(s, p):
        r = res.get((s, p))
        return float(r['mflops']) if r and r['status'] == 'ok' and r['mflops'] else None

    local = mflops('local', 100)
    pcts = sorted({p for s, p in res if s in SYSTEMS}, reverse=True)
    systems = [s for s in SYSTEMS if any(k[0] == s for k in res)]

    def rel(s, p):
        v = mflops(s, p)
        return local / v if v and local else None

    print('#')
    print(f'# himeno: all-local {fmt(local)} MFLOPS; MFLOPS (and time relative to all-local)')
    rate_table(mflops, lambda s, p: res.get((s, p), {}).get('status', '-'),
               pcts, systems)
    return rel, pcts, systems


def style(ax, ylabel):
    ax.axhline(1.0, color='grey', lw=0.8)
    ax.set_xlabel('local memory (% of the data)')
    ax.set_ylabel(ylabel)
    ax.set_yscale('log')
    ax.invert_xaxis()
    ax.grid(True, which='both', alpha=0.3)
    ax.legend(fontsize=8)


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__.split('\n')[0], file=sys.stderr)
        return 2
    path, png, title = sys.argv[1:4]
    rows = list(csv.DictReader(open(path)))
    res = {}
    for r in rows:
        res[(r['system'], int(r['local_pct']))] = r

    def val(sys_, pct, key='triad_mbs'):
        r = res.get((sys_, pct))
        if not r or r['status'] != 'ok' or not r[key]:
            return None
        return float(r[key])

    local = val('local', 100)
    local_copy = val('local', 100, 'copy_mbs')
    pcts = sorted({int(r['local_pct']) for r in rows
                   if r['system'] in SYSTEMS}, reverse=True)
    systems = [s for s in SYSTEMS if any(r['system'] == s for r in rows)]

    print(f'# stream: {title}')
    print(f'# all-local: triad {fmt(local)} MB/s, copy {fmt(local_copy)} MB/s')
    for n in (1, 2):
        w, r = val(f'xfer-write-{n}', 0), val(f'xfer-read-{n}', 0)
        print(f'# transport (dlmd TCP, 1 MB, {n} server{"s" if n > 1 else ""}): '
              f'write {fmt(w)} MB/s, read {fmt(r)} MB/s')
    print('#')
    print('# triad MB/s (and time relative to all-local)')
    rate_table(val, lambda s, p: res.get((s, p), {}).get('status', '-'),
               pcts, systems)
    print('#')
    print('# copy MB/s')
    print('%-7s' % 'local%' + ''.join('%12s' % s for s in systems))
    for p in pcts:
        print('%-7d' % p + ''.join('%12s' % fmt(val(s, p, 'copy_mbs'))
                                   for s in systems))

    # The bar of issue 3, at the ratio nearest 10%.
    low = [p for p in pcts if val('dlm', p)]
    if low:
        p = min(low, key=lambda x: abs(x - 10))
        d, n = val('dlm', p), val('nbd', p)
        x = max(filter(None, [val('xfer-read-1', 0), val('xfer-read-2', 0)]),
                default=None)
        print('#')
        if n:
            print(f'# bar at {p}% local: dlm triad / nbd-swap triad = {d / n:.1f} '
                  f'(want >= 8): {"met" if d / n >= 8 else "NOT met"}')
        else:
            why = res.get(('nbd', p), {}).get('status')
            why = f'its run ended "{why}"' if why else 'nbd not in SYSTEMS'
            print(f'# bar at {p}% local: no nbd-swap triad, {why}; '
                  f'dlm triad {d:.1f} MB/s')
        if x:
            print(f'# bar at {p}% local: dlm triad / transport read rate = '
                  f'{d / x:.2f} (want >= 0.50): {"met" if d / x >= 0.5 else "NOT met"}')

    himeno = himeno_table(sys.argv[4]) if len(sys.argv) == 5 else None
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('# no matplotlib: no plot (make deps installs python3-matplotlib)')
        return 0
    fig, axes = plt.subplots(1, 2 if himeno else 1,
                             figsize=(12 if himeno else 7, 4.5), squeeze=False)
    ax = axes[0][0]
    marks = {'dlm': 'o-', 'dlmb': 'D-.', 'nbd': 's--', 'zram': '^:'}
    names = {'dlm': '/dev/dlm (dlmd, TCP)',
             'dlmb': 'swap on /dev/dlmb0 (same servers)',
             'nbd': 'swap on nbd (cgroup)',
             'zram': 'swap on zram (cgroup)'}
    for s in systems:
        xs = [p for p in pcts if val(s, p)]
        if xs and local:
            ax.plot(xs, [local / val(s, p) for p in xs], marks[s], label=names[s])
    style(ax, 'triad time relative to all-local memory')
    if himeno:
        hval, hpcts, hsystems = himeno
        hx = axes[0][1]
        for s in hsystems:
            xs = [p for p in hpcts if hval(s, p)]
            if xs:
                hx.plot(xs, [hval(s, p) for p in xs], marks[s], label=names[s])
        style(hx, 'Himeno run time relative to all-local memory')
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f'# plot: {png}')
    return 0


if __name__ == '__main__':
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""awgstar_report.py CSV PNG TITLE - tables, ratios and plot of awgstar.sh.

For each SPLASH-2-style kernel (RADIX, LU, FFT) and number of nodes:
the wall time of the AWG-STAR version (untuned and tuned, in each board
timing mode measured) and of the MPI version, the ratio AWG/MPI, and the
board writes (summed over the nodes) of the AWG runs; then tuned against
untuned (time ratio tuned/untuned and write counts), beside the seed
report's LU figures (n = 480, 3 nodes: 11.6 million writes -> 3000, time
to about 20%).  Of several runs of one configuration the fastest counts.
Plots time against nodes per kernel, and the board writes.
"""
import csv
import sys
import textwrap

KERNELS = ('radix', 'lu', 'fft')
MODES = ('model', 'fast')


def fmt(v, spec='%.3f'):
    return spec % v if v is not None else '-'


def main():
    path, png, title = sys.argv[1:4]
    rows = [r for r in csv.DictReader(open(path)) if r['kernel'] != 'meta']
    best = {}
    fails = []
    for r in rows:
        key = (r['kernel'], r['version'], r['mode'], int(r['tuned']), int(r['nodes']))
        if r['status'] != 'ok':
            fails.append((key, r['status']))
            continue
        s = float(r['seconds'])
        if key not in best or s < float(best[key]['seconds']):
            best[key] = r

    def sec(k, v, m, t, n):
        r = best.get((k, v, m, t, n))
        return float(r['seconds']) if r else None

    def writes(k, m, t, n):
        r = best.get((k, 'awg', m, t, n))
        return int(r['board_writes']) if r and r['board_writes'] else None

    def size(k):
        for key, r in best.items():
            if key[0] == k:
                return r['size']
        return '?'

    nodes = sorted({k[4] for k in best} | {k[0][4] for k in fails})
    modes = [m for m in MODES if any(k[1] == 'awg' and k[2] == m for k in best)]
    kernels = [k for k in KERNELS if any(key[0] == k for key in best)]
    print('# awgstar: ' + title)
    print('#')
    print('# (i) wall time, s (node 0, barrier to barrier; MPI: to the gather on rank 0)')
    for k in kernels:
        cols = []
        for m in modes:
            cols += [('awg %s' % m, ('awg', m, 0)), ('awg %s tuned' % m, ('awg', m, 1))]
        cols.append(('mpi', ('mpi', '-', 0)))
        print('# %s (n=%s)' % (k, size(k)))
        print('%-6s' % 'nodes' + ''.join('%17s' % c[0] for c in cols) +
              ''.join('%17s' % ('%s/mpi' % m) for m in modes))
        for n in nodes:
            cells = ['%17s' % fmt(sec(k, v, m, t, n)) for _, (v, m, t) in cols]
            mpi = sec(k, 'mpi', '-', 0, n)
            rs = []
            for m in modes:
                a = sec(k, 'awg', m, 0, n)
                rs.append('%17s' % fmt(a / mpi if a and mpi else None, '%.1f'))
            print('%-6d' % n + ''.join(cells) + ''.join(rs))
    print('#')
    print('# (ii) board writes (AWG_IOC_WRITE calls, all nodes), %s mode' % (modes[0] if modes else '-'))
    print('%-7s%-6s%14s%14s%12s%14s%14s' % ('kernel', 'nodes', 'untuned', 'tuned',
                                            'ratio', 't_tuned/t_un', 'speed-up'))
    m0 = modes[0] if modes else 'model'
    for k in kernels:
        for n in nodes:
            wu, wt = writes(k, m0, 0, n), writes(k, m0, 1, n)
            tu, tt = sec(k, 'awg', m0, 0, n), sec(k, 'awg', m0, 1, n)
            if wu is None and wt is None:
                continue
            print('%-7s%-6d%14s%14s%12s%14s%14s' % (
                k, n, fmt(wu, '%d'), fmt(wt, '%d'),
                fmt(wu / wt if wu and wt else None, '%.0f'),
                fmt(tt / tu if tu and tt else None, '%.3f'),
                fmt(tu / tt if tu and tt else None, '%.1fx')))
    print('#')
    print('# (iii) LU tuned / untuned (the seed report, n=480, 3 nodes: 11.6 M -> 3000 writes,')
    print('#       time to about 20%)')
    for m in modes:
        for n in nodes:
            tu, tt = sec('lu', 'awg', m, 0, n), sec('lu', 'awg', m, 1, n)
            wu, wt = writes('lu', m, 0, n), writes('lu', m, 1, n)
            if tu is None or tt is None:
                continue
            print('# lu %s mode, %d node(s): %s -> %s writes, %.3f s -> %.3f s, '
                  'tuned/untuned time %.3f' % (m, n, fmt(wu, '%d'), fmt(wt, '%d'),
                                                tu, tt, tt / tu))
    if fails:
        print('#')
        print('# failed runs:')
        for key, why in fails:
            print('#   %s %s %s tuned=%d nodes=%d: %s' % (key + (why,)))

    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('# no matplotlib: %s not drawn' % png, file=sys.stderr)
        return
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    styles = {('awg', 'model', 0): ('o-', 'AWG model, untuned'),
              ('awg', 'model', 1): ('o--', 'AWG model, tuned'),
              ('awg', 'fast', 0): ('s-', 'AWG fast, untuned'),
              ('awg', 'fast', 1): ('s--', 'AWG fast, tuned'),
              ('mpi', '-', 0): ('^-', 'Open MPI')}
    for ax, k in zip(axes.flat, KERNELS):
        for (v, m, t), (mark, label) in styles.items():
            xs = [n for n in nodes if sec(k, v, m, t, n)]
            if xs:
                ax.plot(xs, [sec(k, v, m, t, n) for n in xs], mark, label=label)
        ax.set_yscale('log')
        ax.set_xticks(nodes)
        ax.set_xlabel('nodes')
        ax.set_ylabel('wall time, s (log)')
        ax.set_title('%s (n=%s)' % (k.upper(), size(k)))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    ax = axes.flat[3]
    colors = ['tab:blue', 'tab:green', 'tab:purple', 'tab:orange', 'tab:red']
    nbar = 2 * max(1, len(nodes))
    width = 0.8 / nbar
    for i, n in enumerate(nodes):
        for t in (0, 1):
            ys = [writes(k, m0, t, n) or 0 for k in KERNELS]
            off = (2 * i + t - (nbar - 1) / 2) * width
            ax.bar([j + off for j in range(len(KERNELS))], ys, width * 0.9,
                   color=colors[i % len(colors)], alpha=0.45 if t else 0.9,
                   hatch='//' if t else '', edgecolor='black', linewidth=0.3,
                   label='%d node(s), %s' % (n, 'tuned' if t else 'untuned'))
    ax.set_xticks(range(len(KERNELS)))
    ax.set_xticklabels([k.upper() for k in KERNELS])
    ax.set_yscale('log')
    ax.set_ylabel('board writes, all nodes (log)')
    ax.set_title('board writes, %s mode' % m0)
    ax.grid(True, axis='y', alpha=0.3)
    ax.legend(fontsize=6, ncol=2)
    fig.suptitle('\n'.join(textwrap.wrap(title, 150)), fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == '__main__':
    main()

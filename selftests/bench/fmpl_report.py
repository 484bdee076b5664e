#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""fmpl_report.py CSV PNG TITLE - tables, ratios, bars and plot of fmpl.sh.

Prints, from one run of osu_fmpl under FMPL, Open MPI and MPICH: one-way
latency and windowed bandwidth against the message size side by side with
FMPL's ratios to each MPI; the pre-posted receive gap (mean time per
posted receive) and the one-way latency of the message of the receive
posted last, against the number of outstanding receives; barrier, bcast
and allreduce times against the number of ranks (FMPL's native and tree
paths); whether each MPI moved its large messages with CMA single copy;
and issue 10's bars, each MET or NOT MET (NOT MET when not measured).
Plots all of it in one PNG: latency, bandwidth and gap on top, the three
collectives against the ranks below.
"""
import csv
import sys

IMPLS = ('fmpl', 'openmpi', 'mpich')
NAME = {'fmpl': 'FMPL', 'openmpi': 'Open MPI', 'mpich': 'MPICH'}
COLL_SYS = (('fmpl', 'native'), ('fmpl', 'tree'), ('openmpi', '-'), ('mpich', '-'))
COLL_NAME = {('fmpl', 'native'): 'FMPL native', ('fmpl', 'tree'): 'FMPL tree',
             ('openmpi', '-'): 'Open MPI', ('mpich', '-'): 'MPICH'}
COLOR = {('fmpl', '-'): 'C0', ('fmpl', 'native'): 'C0', ('fmpl', 'tree'): 'C3',
         ('fmpl', 'fast'): 'C4', ('fmpl', 'alone'): 'C5',
         ('openmpi', '-'): 'C1', ('mpich', '-'): 'C2'}
P2P_SYS = (('fmpl', '-'), ('fmpl', 'fast'), ('fmpl', 'alone'), ('openmpi', '-'),
           ('mpich', '-'), ('openmpi', 'nocma'))
P2P_NAME = {('fmpl', '-'): 'FMPL', ('fmpl', 'fast'): 'FMPL fast',
            ('fmpl', 'alone'): 'FMPL alone',
            ('openmpi', '-'): 'Open MPI', ('mpich', '-'): 'MPICH',
            ('openmpi', 'nocma'): 'OMPI noCMA'}
P2P_SHORT = {('openmpi', '-'): 'OMPI', ('mpich', '-'): 'MPICH',
             ('openmpi', 'nocma'): 'noCMA'}
COLL = (('barrier', 0), ('bcast', 8), ('bcast', 1 << 20),
        ('allreduce', 8), ('allreduce', 64 << 10))
GAP_FLAT = 1.5		# issue 10: gap(600)/gap(1) at most this is "flat"
BW_BAR = 1.5		# issue 10: FMPL >= 1.5 x Open MPI at >= 1 MB


def human(n):
    for unit, div in (('M', 1 << 20), ('K', 1 << 10)):
        if n >= div and n % div == 0:
            return f'{n // div}{unit}'
    return str(n)


def f2(v, w=10):
    return ('%*.2f' % (w, v)) if v is not None else '%*s' % (w, '-')


def ratio(a, b, w=10):
    return f2(a / b if a is not None and b else None, w)


def verdict(ok):
    return 'MET' if ok else 'NOT MET'


def load(path):
    data, meta, failed = {}, {}, []
    for r in csv.DictReader(open(path)):
        if r['test'] == 'meta':
            meta[(r['impl'], r['mode'])] = r
        elif r['test'] == 'failed':
            failed.append(r)
        elif r['value']:
            # several runs (fmpl.sh REPS): the best of them, as interference
            # from the host only ever makes a run slower
            k = (r['test'], r['impl'], r['mode'], int(r['ranks']), int(r['size']))
            v = float(r['value'])
            best = max if r['test'] == 'bw' else min
            data[k] = best(data[k], v) if k in data else v
    return data, meta, failed


def main():
    path, png, title = sys.argv[1:4]
    data, meta, failed = load(path)

    def val(test, impl, size, mode='-', ranks=2):
        return data.get((test, impl, mode, ranks, size))

    def sizes(test):
        return sorted({k[4] for k in data if k[0] == test and k[3] == 2})

    impls = [i for i in IMPLS if any(k[1] == i for k in data)]
    mpis = [i for i in impls if i != 'fmpl']
    host = meta.get(('host', '-'))
    ncpu = int(host['ranks']) if host and host['ranks'] else None
    print(title)
    print('(each figure: the best of the runs; FMPL/X: FMPL\'s figure over X\'s, '
          'so < 1 is FMPL faster for latency and slower for bandwidth)')
    for r in failed:
        print(f"FAILED: {NAME.get(r['impl'], r['impl'])} "
              f"{'' if r['mode'] == '-' else r['mode'] + ' '}{r['ranks']} ranks: "
              f"{r['extra']}")

    # ---- point to point ----
    p2p = [c for c in P2P_SYS if any(k[1:3] == c for k in data if k[0] == 'latency')]
    others = [c for c in p2p if c[0] != 'fmpl']
    for test, head, unit in (('latency', 'one-way latency', 'us'),
                             ('bw', 'bandwidth, window of 64', 'MB/s')):
        print(f'\n{head} ({unit}, 2 ranks)')
        fm = ('fmpl', '-') in p2p
        ff = ('fmpl', 'fast') in p2p and ('openmpi', '-') in p2p
        print('%8s' % 'size' + ''.join('%12s' % P2P_NAME[c] for c in p2p) +
              (''.join('%12s' % f'FMPL/{P2P_SHORT[c]}' for c in others) if fm else '') +
              ('%12s' % 'fast/OMPI' if ff else ''))
        for s in sizes(test):
            line = '%8s' % human(s) + ''.join(f2(val(test, c[0], s, c[1]), 12)
                                              for c in p2p)
            if fm:
                line += ''.join(ratio(val(test, 'fmpl', s), val(test, c[0], s, c[1]), 12)
                                for c in others)
            if ff:
                line += ratio(val(test, 'fmpl', s, 'fast'), val(test, 'openmpi', s), 12)
            print(line)
    if ('openmpi', 'nocma') in p2p:
        print('(OMPI noCMA: Open MPI with btl_vader_single_copy_mechanism=none, '
              'for reference)')
    if ('fmpl', 'alone') in p2p:
        print('(FMPL alone: msg_copy_helpers=0, the copying process copies '
              'every message itself, for reference)')
    if ('fmpl', 'fast') in p2p:
        print('(FMPL fast: FMPL_FAST=64, messages up to 96 B through the fast area '
              'with no system call, larger ones as FMPL; last column: fast/OMPI)')

    ks = sizes('gap')
    if ks:
        print('\npre-posted receives (2 ranks): gap = mean us per posted receive;'
              '\nlast = latency (us) of the message of the receive posted last, sent'
              ' first\n(half its round trip with a 4-byte reply, the others still'
              ' posted); medians of repetitions')
        print('%6s' % 'K' + ''.join('%14s' % f'gap {NAME[i]}' for i in impls) +
              ''.join('%15s' % f'last {NAME[i]}' for i in impls))
        for k in ks:
            print('%6d' % k + ''.join(f2(val('gap', i, k), 14) for i in impls) +
                  ''.join(f2(val('gap_last', i, k), 15) for i in impls))
        k0, k1 = ks[0], ks[-1]
        print('%6s' % f'{k1}/{k0}' +
              ''.join(ratio(val('gap', i, k1), val('gap', i, k0), 14) for i in impls) +
              ''.join(ratio(val('gap_last', i, k1), val('gap_last', i, k0), 15)
                      for i in impls))

    # ---- collectives ----
    nranks = sorted({k[3] for k in data if k[0] in ('barrier', 'bcast', 'allreduce')})
    csys = [c for c in COLL_SYS if any(k[1:3] == c for k in data)]
    if nranks:
        over = f'; more than {ncpu} ranks are oversubscribed' if ncpu else ''
        print(f'\ncollectives (us per call, mean over ranks; {ncpu} vCPUs{over})')
        print('%-10s %5s %5s' % ('test', 'size', 'ranks') +
              ''.join('%12s' % COLL_NAME[c] for c in csys) +
              ('%14s' % 'FMPL/Open MPI' if ('openmpi', '-') in csys else ''))
        for test, size in COLL:
            for n in nranks:
                vs = [val(test, c[0], size, c[1], n) for c in csys]
                best = min((v for c, v in zip(csys, vs) if c[0] == 'fmpl' and v),
                           default=None)
                line = '%-10s %5s %5d' % (test, human(size), n) + \
                    ''.join(f2(v, 12) for v in vs)
                if ('openmpi', '-') in csys:
                    line += ratio(best, val(test, 'openmpi', size, '-', n), 14)
                print(line)
        if ('openmpi', '-') in csys:
            print('(FMPL/Open MPI: the faster FMPL path against Open MPI)')
        if ('fmpl', 'native') in csys:
            print('(libfmpl\'s allreduce is a tree reduce and a tree bcast in both modes)')

    # ---- single copy ----
    for m in mpis:
        r = meta.get((m, 'cma'))
        if r:
            calls = int(float(r['value'] or 0))
            print(f"\n{NAME[m]}: CMA single copy {'used' if calls else 'NOT used'}: "
                  f"{calls} process_vm_readv/writev calls in a 0 B .. 4 MB "
                  f"ping-pong ({r['extra']})", end='')
    print()

    # ---- issue 10's bars ----
    print('\nbars (issue 10):')
    f8, o8 = val('latency', 'fmpl', 8), val('latency', 'openmpi', 8)
    q8 = val('latency', 'fmpl', 8, 'fast')
    if q8 is not None and o8 is not None:
        print(f'  8-byte latency FMPL (fast indices) <= Open MPI: {q8:.2f} us vs '
              f'{o8:.2f} us ({q8 / o8:.2f}x) -> {verdict(q8 <= o8)}')
    if f8 is not None and o8 is not None:
        print(f'  8-byte latency FMPL (kernel path) <= Open MPI: {f8:.2f} us vs '
              f'{o8:.2f} us ({f8 / o8:.2f}x) -> {verdict(f8 <= o8)}')
    elif q8 is None:
        print('  8-byte latency FMPL <= Open MPI: not measured -> NOT MET')
    big = [s for s in sizes('bw') if s >= 1 << 20]
    rs = [(s, val('bw', 'fmpl', s), val('bw', 'openmpi', s)) for s in big]
    rs = [(s, f / o) for s, f, o in rs if f is not None and o]
    if rs and len(rs) == len(big):
        print(f'  >= 1 MB bandwidth FMPL >= {BW_BAR} x Open MPI: ' +
              ', '.join(f'{human(s)} {r:.2f}x' for s, r in rs) +
              f' -> {verdict(all(r >= BW_BAR for _, r in rs))}')
    else:
        print(f'  >= 1 MB bandwidth FMPL >= {BW_BAR} x Open MPI: not measured -> NOT MET')
    rs = [(s, val('bw', 'fmpl', s, 'alone'), val('bw', 'openmpi', s)) for s in big]
    rs = [(s, f / o) for s, f, o in rs if f is not None and o]
    if rs:
        print('    (for reference, FMPL with msg_copy_helpers=0 against Open MPI: ' +
              ', '.join(f'{human(s)} {r:.2f}x' for s, r in rs) + ')')
    rs = [(s, val('bw', 'fmpl', s), val('bw', 'openmpi', s, 'nocma')) for s in big]
    rs = [(s, f / o) for s, f, o in rs if f is not None and o]
    if rs:
        print('    (for reference, against Open MPI without CMA: ' +
              ', '.join(f'{human(s)} {r:.2f}x' for s, r in rs) + ')')
    if ks:
        k0, k1 = ks[0], ks[-1]
        g = val('gap', 'fmpl', k1), val('gap', 'fmpl', k0)
        if None not in g and g[1]:
            print(f'  FMPL gap flat from K={k0} to {k1} (gap({k1})/gap({k0}) <= '
                  f'{GAP_FLAT}): {g[0]:.2f}/{g[1]:.2f} us = {g[0] / g[1]:.2f} '
                  f'-> {verdict(g[0] / g[1] <= GAP_FLAT)}')
        else:
            print('  FMPL gap flat: not measured -> NOT MET')
        for m in ('openmpi', 'mpich'):
            g = val('gap', m, k1), val('gap', m, k0)
            if None not in g and g[1]:
                print(f'  {NAME[m]} gap grows from K={k0} to {k1} (gap({k1})/gap({k0})'
                      f' > {GAP_FLAT}): {g[0]:.2f}/{g[1]:.2f} us = {g[0] / g[1]:.2f} '
                      f'-> {verdict(g[0] / g[1] > GAP_FLAT)}')
            else:
                print(f'  {NAME[m]} gap grows: not measured -> NOT MET')
    else:
        print('  gap flat for FMPL while MPI\'s grows: not measured -> NOT MET')

    plot(png, title, data, impls, csys, nranks, ks, sizes, ncpu)


def plot(png, title, data, impls, csys, nranks, ks, sizes, ncpu):
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
        from matplotlib.ticker import FormatStrFormatter, LogLocator
    except ImportError:
        print('\n(no matplotlib: no plot)')
        return
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5))

    for ax, test, ylabel, name in ((axes[0][0], 'latency', 'one-way latency (us)',
                                    'ping-pong latency'),
                                   (axes[0][1], 'bw', 'bandwidth (MB/s)',
                                    'bandwidth, window of 64')):
        for c in P2P_SYS:
            pts = [(s, data.get((test, c[0], c[1], 2, s))) for s in sizes(test)]
            pts = [(s, v) for s, v in pts if s > 0 and v]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts],
                        ':' if c[1] in ('nocma', 'alone') else '-', marker='o', ms=3,
                        color=COLOR[c if c in COLOR else (c[0], '-')],
                        label=P2P_NAME[c] if c[1] != 'nocma' else 'Open MPI, no CMA')
        ax.set_xscale('log', base=2)
        ax.set_yscale('log')
        ax.set_xlabel('message size (bytes)')
        ax.set_ylabel(ylabel)
        ax.set_title(f'{name} (2 ranks)')
        ax.grid(True, which='major', lw=0.3)
        ax.legend()

    ax = axes[0][2]
    for i in impls:
        for test, style in (('gap', '-'), ('gap_last', '--')):
            pts = [(k, data.get((test, i, '-', 2, k))) for k in ks]
            pts = [(k, v) for k, v in pts if v]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker='o',
                        ms=3, color=COLOR[(i, '-')])
    ax.set_xscale('log')
    ax.set_yscale('log')
    ax.set_xticks(ks)
    ax.set_xticklabels([str(k) for k in ks])
    ax.minorticks_off()
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FormatStrFormatter('%g'))
    ax.set_xlabel('outstanding pre-posted receives K')
    ax.set_ylabel('microseconds')
    ax.set_title('pre-posted receives')
    ax.grid(True, which='major', lw=0.3)
    ax.legend([Line2D([], [], color=COLOR[(i, '-')]) for i in impls] +
              [Line2D([], [], color='k'), Line2D([], [], color='k', ls='--')],
              [NAME[i] for i in impls] +
              ['gap: time per post', 'latency of the last-posted\nreceive\'s message'],
              fontsize=8)

    for ax, test, sz in ((axes[1][0], 'barrier', (0,)),
                         (axes[1][1], 'bcast', (8, 1 << 20)),
                         (axes[1][2], 'allreduce', (8, 64 << 10))):
        for c in csys:
            for size, style in zip(sz, ('-', '--')):
                pts = [(n, data.get((test, c[0], c[1], n, size))) for n in nranks]
                pts = [(n, v) for n, v in pts if v]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], style,
                            marker='o', ms=3, color=COLOR[c])
        if nranks:
            ax.set_xlim(nranks[0] - 0.3, nranks[-1] + 0.3)
        if ncpu and nranks and nranks[-1] > ncpu:
            ax.axvspan(ncpu + 0.5, nranks[-1] + 0.3, color='0.92', zorder=0)
            ax.text(ncpu + 0.55, 0.02, 'oversubscribed', transform=ax.get_xaxis_transform(),
                    fontsize=7, va='bottom', color='0.4')
        ax.set_yscale('log')
        ax.set_xticks(nranks)
        ax.set_xlabel(f'ranks ({ncpu} vCPUs)')
        ax.set_ylabel('microseconds per call')
        ax.set_title(test + ('' if len(sz) == 1 else
                             f' (solid {human(sz[0])}B, dashed {human(sz[1])}B)'))
        ax.grid(True, which='major', lw=0.3)
        ax.legend([Line2D([], [], color=COLOR[c]) for c in csys],
                  [COLL_NAME[c] for c in csys], fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    print(f'\nplot: {png}')


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""mpi_report.py CSV PNG TITLE - tables, ratios and plot of mpi.sh.

Prints, from one run: triad MB/s and Himeno MFLOPS per transport (tcp,
openmpi, mpich) and local ratio, each with its time relative to all-local
memory and the MPI transports' time relative to tcp; at the lowest ratio,
the kernel's swap protocols (serial, cross, async, inline) for the triad
and for Himeno, with their time relative to serial, and dlmd's MPI
protocols (as1, as2, cs), relative to cs; Himeno over tcp with same-filled
pages kept (the default) and stored (same_filled=N); Himeno at the lowest
ratio with the program on CPU 0 and the daemons on the other CPUs (cpu
split), relative to all-local Himeno on CPU 0; Himeno and the triad at the
lowest ratio with the daemons under SCHED_IDLE, and over the MPIs with rank
0 left to the scheduler (dlmd --cpu none), each beside the default; dlmd's
swap-in and swap-out latency; and issue 4's bars, the Himeno bar from
mpi.sh's pairs (all-local Himeno, then Himeno at the lowest ratio in a
fresh job right after it): the median of the pairs' time ratios, with
the pairs round by round before it.  Plots time
relative to all-local memory against the local-memory ratio (as the paper's
Fig. 11): triad on the left, Himeno on the right.

A configuration run more than once (mpi.sh's ROUNDS) counts by its median;
the protocol table and the bars give the number of runs and their range.
"""
import csv
import statistics
import sys

TRANSPORTS = ('tcp', 'openmpi', 'mpich')


def load(path):
    """{(kind, transport, protocol, pct): [row, ...]} in the CSV's order."""
    rows = {}
    for r in csv.DictReader(open(path)):
        key = (r['kind'], r['transport'], r['protocol'], int(r['local_pct']))
        rows.setdefault(key, []).append(r)
    return rows


def pair_rows(rows, tr, pct):
    """TR's pairs at PCT: the all-local rows and the rows at PCT, in the
    order mpi.sh wrote them (it writes both rows of a pair, failed or
    not)."""
    return (rows.get(('himeno', 'local', f'pair-{tr}', 100), []),
            rows.get(('himeno', tr, 'pair', pct), []))


def pair_table(rows, trs, low):
    """The pairs round by round: all-local and lowest-ratio MFLOPS per
    transport; with four rounds or more, the medians of the first half of
    the rounds against the second (a slowdown over the run shows there)."""
    got = {t: pair_rows(rows, t, low) for t in trs}
    n = max((len(d) for _, d in got.values()), default=0)
    if not n:
        return

    def mf(r):
        return float(r['value']) if r['status'] == 'ok' and r['value'] \
            else None
    print(f'\npairs round by round: Himeno MFLOPS all-local / at {low}% '
          '(time ratio)')
    print('%-6s' % 'round' + ''.join('%26s' % t for t in trs))
    for i in range(n):
        cells = []
        for t in trs:
            loc, dlm = got[t]
            a = mf(loc[i]) if i < len(loc) else None
            b = mf(dlm[i]) if i < len(dlm) else None
            cells.append('%26s' % (f'{a:.1f} / {b:.1f} ({a / b:.2f}x)'
                                   if a and b else 'failed'))
        print('%-6d' % (i + 1) + ''.join(cells))
    if n < 4:
        return
    h = n // 2
    print(f'medians, rounds 1-{h} against {n - h + 1}-{n}:')
    for t in trs:
        loc, dlm = got[t]
        parts = []
        for name, rs in (('all-local', loc), (f'at {low}%', dlm)):
            v = [mf(r) for r in rs]
            a = [x for x in v[:h] if x]
            b = [x for x in v[n - h:] if x]
            if a and b:
                parts.append(f'{name} {statistics.median(a):.1f} -> '
                             f'{statistics.median(b):.1f}')
        print(f'  {t:8s} ' + ', '.join(parts))


def main():
    path, png, title = sys.argv[1:4]
    rows = load(path)

    def vals(kind, tr, proto, pct):
        return [float(r['value']) for r in rows.get((kind, tr, proto, pct), [])
                if r['status'] == 'ok' and r['value']]

    def val(kind, tr, proto, pct):
        v = vals(kind, tr, proto, pct)
        return statistics.median(v) if v else None

    def spread(kind, tr, proto, pct):
        v = vals(kind, tr, proto, pct)
        return f'n={len(v)} {min(v):.1f}-{max(v):.1f}' if len(v) > 1 else ''

    def status(kind, tr, proto, pct):
        r = rows.get((kind, tr, proto, pct))
        return r[-1]['status'] if r else '-'

    def pairs(tr, pct):
        """The time ratios of TR's pairs at PCT, None for a failed one."""
        loc, dlm = pair_rows(rows, tr, pct)
        return [float(a['value']) / float(b['value'])
                if a['status'] == b['status'] == 'ok' and a['value'] and
                b['value'] else None for a, b in zip(loc, dlm)]

    trs = [t for t in TRANSPORTS if any(k[1] == t for k in rows)]
    pcts = sorted({k[3] for k in rows
                   if k[1] in trs and k[2] in ('default', 'pair')},
                  reverse=True)
    low = min(pcts) if pcts else None
    print(title)
    if not any(k[2] == 'default' for k in rows):
        print('(pairs only, PAIRS_ONLY=1: the tables before the pairs are '
              'empty)')
    rel = {}
    for kind, unit in (('stream', 'triad MB/s'), ('himeno', 'MFLOPS')):
        local = val(kind, 'local', '-', 100)
        print(f'\n{kind}: {unit} (time relative to all-local); all-local: '
              f'{local if local else "failed"}')
        print('%-7s' % 'local%' + ''.join('%20s' % t for t in trs) +
              ''.join('%13s' % f'{t}/tcp' for t in trs if t != 'tcp'))
        for p in pcts:
            cells, ratios = [], []
            for t in trs:
                v = val(kind, t, 'default', p)
                r = local / v if v and local else None
                rel[(kind, t, p)] = r
                cells.append('%20s' % (f'{v:.1f} ({r:.2f}x)' if r
                                       else status(kind, t, 'default', p)))
            tcp = val(kind, 'tcp', 'default', p)
            for t in trs:
                if t == 'tcp':
                    continue
                v = val(kind, t, 'default', p)
                # time of t relative to tcp's time
                ratios.append('%13s' % (f'{tcp / v:.2f}' if v and tcp else '-'))
            print('%-7d' % p + ''.join(cells) + ''.join(ratios))

    if low is not None:
        print('\nsame-filled pages (tcp): Himeno MFLOPS (time relative to '
              'all-local), kept as values (default) and all stored '
              '(same_filled=N)')
        hl = val('himeno', 'local', '-', 100)
        print('%-7s%20s%20s%12s' % ('local%', 'kept', 'stored', 'kept/stored'))
        for p in pcts:
            on = val('himeno', 'tcp', 'default', p)
            off = val('himeno', 'tcp', 'same-filled-off', p)
            if off and hl:
                rel[('himeno', 'tcp-stored', p)] = hl / off
            print('%-7d%20s%20s%12s' % (
                p, f'{on:.1f} ({hl / on:.2f}x)' if on and hl else '-',
                f'{off:.1f} ({hl / off:.2f}x)' if off and hl else '-',
                f'{off / on:.2f}' if on and off else '-'))

        sl = val('himeno', 'local', 'split', 100)
        if sl:
            print(f'\ncpu split at {low}% local: Himeno MFLOPS with the program '
                  'on CPU 0 and the daemons on the others (time relative to '
                  f'all-local on CPU 0: {sl:.1f}, '
                  f'{spread("himeno", "local", "split", 100)}); unpinned '
                  'for comparison')
            print('%-9s%28s%20s%22s' % ('transport', 'split', 'unpinned',
                                        'time split/unpinned'))
            for t in trs:
                v = val('himeno', t, 'split', low)
                u = val('himeno', t, 'default', low)
                if v:
                    rel[('himeno-split', t, low)] = sl / v
                print('%-9s%28s%20s%22s' % (
                    t, f'{v:.1f} ({sl / v:.2f}x) {spread("himeno", t, "split", low)}'
                    if v else status('himeno', t, 'split', low),
                    f'{u:.1f} ({hl / u:.2f}x)' if u and hl else '-',
                    f'{u / v:.2f}' if u and v else '-'))

        def beside_default(cfg, short, title):
            """Himeno and the triad at the lowest ratio under CFG, the
            default beside them; rel gets (kind-SHORT, t, low)."""
            if not any(k[2] == cfg for k in rows):
                return
            print(f'\n{title}: Himeno MFLOPS and triad MB/s (time relative '
                  'to all-local), the default for comparison')
            print('%-9s%31s%16s%12s%31s%16s%12s' % (
                'transport', f'Himeno {short}', 'default', f'{short}/def',
                f'triad {short}', 'default', f'{short}/def'))
            for t in trs:
                if not any(k[1] == t and k[2] == cfg for k in rows):
                    continue
                cells = []
                for kind in ('himeno', 'stream'):
                    loc = val(kind, 'local', '-', 100)
                    v = val(kind, t, cfg, low)
                    b = val(kind, t, 'default', low)
                    if v and loc:
                        rel[(f'{kind}-{short}', t, low)] = loc / v
                    cells.append('%31s%16s%12s' % (
                        f'{v:.1f} ({loc / v:.2f}x) {spread(kind, t, cfg, low)}'
                        if v and loc else status(kind, t, cfg, low),
                        f'{b:.1f} ({loc / b:.2f}x)' if b and loc else '-',
                        f'{b / v:.2f}' if b and v else '-'))
                print('%-9s' % t + ''.join(cells))

        beside_default('sched-idle', 'idle',
                       f'daemons under SCHED_IDLE at {low}% local (dlmd '
                       '--sched idle, memory servers too; the default is '
                       'SCHED_BATCH)')
        beside_default('cpu-none', 'free',
                       f'rank 0 left to the scheduler at {low}% local (dlmd '
                       '--cpu none; the default, --cpu auto, keeps it on '
                       'the last CPU)')

        protos = ('serial', 'cross', 'async', 'inline')
        best = {}   # kind -> (time relative to serial, transport, protocol)
        for kind, unit in (('stream', 'triad MB/s'), ('himeno', 'Himeno MFLOPS')):
            if not any(k[0] == kind and k[2] == 'kernel-serial' for k in rows):
                continue
            print(f'\nkernel swap protocols at {low}% local, {unit} '
                  '(time relative to serial)')
            print('%-9s' % 'transport' + ''.join('%18s' % x for x in protos))
            for t in trs:
                s = val(kind, t, 'kernel-serial', low)
                cells = []
                for x in protos:
                    v = val(kind, t, f'kernel-{x}', low)
                    r = s / v if s and v else None
                    if r and x in ('cross', 'async') and \
                            (kind not in best or r < best[kind][0]):
                        best[kind] = (r, t, x)   # the bar's two
                    cells.append('%18s' % (f'{v:.1f} ({r:.2f})' if r else '-'))
                print('%-9s' % t + ''.join(cells))
                ns = [(x, spread(kind, t, f'kernel-{x}', low)) for x in protos]
                ns = ', '.join(f'{x} {n}' for x, n in ns if n)
                if ns:
                    print('%-9s' % '' + f'  (medians of {ns})')
        print(f'\ndlmd MPI protocols at {low}% local: triad MB/s, Himeno '
              'MFLOPS (time relative to cs)')
        print('%-9s' % 'MPI' + ''.join('%24s' % p for p in ('as1', 'as2', 'cs')))
        for t in trs:
            if t == 'tcp':
                continue
            cells = []
            for p in ('as1', 'as2', 'cs'):
                parts = []
                for kind in ('stream', 'himeno'):
                    v = val(kind, t, f'mpi-{p}', low)
                    c = val(kind, t, 'mpi-cs', low)
                    parts.append(f'{v:.1f}({c / v:.2f})' if v and c else '-')
                cells.append('%24s' % ' '.join(parts))
            print('%-9s' % t + ''.join(cells))
        print(f'\ndlmd latency at {low}% local, microseconds (mean; p50 p99 '
              'count), default protocol unless named')
        for k, rs in sorted(rows.items()):
            if k[0].startswith('lat_'):
                for r in rs:
                    print('%-12s %-8s %-8s %10s  %s' % (
                        k[0][4:], k[1], k[2], r['value'], r['extra']))
        sw = [(k[1], k[2], ' '.join(r['extra'] for r in rs if r['extra']))
              for k, rs in sorted(rows.items())
              if k[0] == 'stream' and k[3] == low]
        print(f'\nfaults that waited for a previous swap-out (stream, {low}%'
              ', one figure per run):')
        for t, p, e in sw:
            if e:
                print(f'  {t:8s} {p:16s} {e}')

        pair_table(rows, trs, low)

        print('\nbars (issue 4):')
        if not best:
            print('  cross/async vs serial: no data')
        for kind, (r, t, x) in best.items():
            print(f'  cross/async time <= 0.85 x serial at {low}% ({kind}): '
                  f'best {r:.2f} ({x}, {t}) -> '
                  f'{"met" if r <= 0.85 else "NOT met"}')
        for t in trs:
            ps = pairs(t, low)
            if not ps:
                print(f'  Himeno at {low}% local <= 2.0 x all-local ({t}): '
                      'no pairs')
                continue
            ok = [r for r in ps if r]
            r = statistics.median(ok) if ok else None
            if r:
                rel[('himeno-pairs', t, low)] = r
            failed = len(ps) - len(ok)     # a failed run fails the bar
            print(f'  Himeno at {low}% local <= 2.0 x all-local ({t}): ' +
                  (f'{r:.2f} x, median of {len(ok)} pairs' if r else
                   'no pair ran') + ' -> ' +
                  ('met' if r and r <= 2.0 and not failed else 'NOT met') +
                  (f', {failed} failed' if failed else '') + ' (' +
                  ' '.join(f'{x:.2f}' if x else 'failed' for x in ps) + ')')
        for t in trs:
            r = rel.get(('himeno', t, low))
            if r:
                print(f'  (not the bar: the {low}% median of the default\'s '
                      f'one job over the run-wide all-local median, {t}: '
                      f'{r:.2f} x)')
        for var, what in (('split', 'cpu split'), ('idle', 'sched idle'),
                          ('free', 'rank 0 left to the scheduler')):
            for t in trs:
                r = rel.get((f'himeno-{var}', t, low))
                if r:
                    print(f'  Himeno at {low}% local <= 2.0 x all-local, '
                          f'{what} ({t}): {r:.2f} x -> '
                          f'{"met" if r <= 2.0 else "NOT met"}')
        r = rel.get(('himeno', 'tcp-stored', low))
        if r:
            print(f'  (for comparison, tcp with same_filled=N: {r:.2f} x)')

    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        print('\n(no matplotlib: no plot)')
        return
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for ax, kind, name in ((axes[0], 'stream', 'STREAM triad'),
                           (axes[1], 'himeno', 'Himeno')):
        if not any(k[0].startswith(kind) and v for k, v in rel.items()):
            ax.set_axis_off()   # PAIRS_ONLY: no triad at all
            ax.text(0.5, 0.5, f'{name}: not run', ha='center')
            continue
        colors = {}
        for t in trs:
            xs = [p for p in pcts if rel.get((kind, t, p))]
            line, = ax.plot(xs, [rel[(kind, t, p)] for p in xs], marker='o',
                            label=t)
            colors[t] = line.get_color()
        for t in trs:
            for var, mark, ms, what in (('pairs', 'P', 10, 'pairs (bar)'),
                                        ('split', '*', 11, 'cpu split'),
                                        ('idle', 'D', 7, 'sched idle'),
                                        ('free', 's', 7, '--cpu none')):
                r = rel.get((f'{kind}-{var}', t, low))
                if r:
                    ax.plot([low], [r], marker=mark, ms=ms, ls='none',
                            color=colors[t], label=f'{t}, {what}')
        xs = [p for p in pcts if rel.get((kind, 'tcp-stored', p))]
        if xs:
            ax.plot(xs, [rel[(kind, 'tcp-stored', p)] for p in xs],
                    marker='x', ls='--', label='tcp, same_filled=N')
        ax.axhline(1.0, color='grey', lw=0.8)
        if kind == 'himeno':    # issue 4's bar at the lowest ratio
            ax.axhline(2.0, color='red', lw=0.8, ls=':',
                       label=f'bar at {low}% (2.0x)')
        ax.set_xscale('log')
        ax.set_xticks(pcts)
        ax.set_xticklabels([str(p) for p in pcts])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel('local memory ratio (%)')
        ax.set_ylabel('time relative to all-local')
        ax.set_title(f'{name} through /dev/dlm')
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    print(f'\nplot: {png}')


if __name__ == '__main__':
    main()

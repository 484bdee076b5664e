#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""umode_report.py CSV PNG TITLE - tables, ratios and plot of umode.sh.

Prints the per-fault cost (microseconds per DLM page fault) per DLM page
size and the STREAM triad bandwidth per local ratio for libdlm's three
paging modes (kernel /dev/dlm, sigsegv, uffd), with the ratios
kernel/sigsegv and kernel/uffd (for the fault cost: how many times
cheaper the kernel's fault is), and issue 8's bar: the kernel mode's
triad at least 1.5x the sigsegv mode's at the ratio nearest 10%.  Plots
triad bandwidth against the local ratio for the three modes.
"""
import csv
import sys

MODES = ('kernel', 'sigsegv', 'uffd')
BAR = 1.5


def fmt(v, spec='%.1f'):
    return spec % v if v is not None else '-'


def main():
    path, png, title = sys.argv[1:4]
    rows = list(csv.DictReader(open(path)))
    res = {(r['test'], r['mode'], int(r['param'])): r for r in rows}

    def val(test, mode, param):
        r = res.get((test, mode, param))
        return float(r['value']) if r and r['status'] == 'ok' and r['value'] else None

    def status(test, mode, param):
        r = res.get((test, mode, param))
        return r['status'] if r else 'n/a'

    modes = [m for m in MODES if any(k[1] == m for k in res)]
    print('# umode: ' + title)
    print('#')
    print('# (i) cost of a DLM page fault, us (a fetch and a dirty write-back each)')
    pages = sorted({p for t, m, p in res if t == 'fault'})
    print('%-8s' % 'page_kb' + ''.join('%12s' % m for m in modes) +
          '%16s%14s' % ('sigsegv/kernel', 'uffd/kernel'))
    for p in pages:
        cells = ['%12s' % (fmt(val('fault', m, p)) if val('fault', m, p)
                           else status('fault', m, p)) for m in modes]
        k = val('fault', 'kernel', p)
        rs = [fmt(val('fault', m, p) / k if k and val('fault', m, p) else None,
                  '%.2f') for m in ('sigsegv', 'uffd')]
        print('%-8d' % p + ''.join(cells) + '%16s%14s' % tuple(rs))
    print('#')
    print('# (ii) STREAM triad, MB/s, 1 MB DLM pages')
    pcts = sorted({p for t, m, p in res if t == 'triad'}, reverse=True)
    print('%-8s' % 'local%' + ''.join('%12s' % m for m in modes) +
          '%16s%14s' % ('kernel/sigsegv', 'kernel/uffd'))
    for p in pcts:
        cells = ['%12s' % (fmt(val('triad', m, p)) if val('triad', m, p)
                           else status('triad', m, p)) for m in modes]
        k = val('triad', 'kernel', p)
        rs = [fmt(k / val('triad', m, p) if k and val('triad', m, p) else None,
                  '%.2f') for m in ('sigsegv', 'uffd')]
        print('%-8d' % p + ''.join(cells) + '%16s%14s' % tuple(rs))
    print('#')
    if pcts:
        near = min(pcts, key=lambda p: abs(p - 10))
        k, s = val('triad', 'kernel', near), val('triad', 'sigsegv', near)
        if k and s:
            r = k / s
            print('# bar at %d%% local: kernel triad / sigsegv triad = %.2f (want >= %.1f): %s'
                  % (near, r, BAR, 'met' if r >= BAR else 'NOT met'))
        else:
            print('# bar at %d%% local: no result for both modes' % near)

    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        print('# no matplotlib: %s not drawn' % png, file=sys.stderr)
        return
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    marks = {'kernel': 'o-', 'sigsegv': 's--', 'uffd': '^-.'}
    for m in modes:
        xs = [p for p in sorted(pcts) if val('triad', m, p)]
        ax1.plot(xs, [val('triad', m, p) for p in xs], marks[m],
                 label={'kernel': 'kernel /dev/dlm'}.get(m, m))
        xs = [p for p in pages if val('fault', m, p)]
        ax2.plot(xs, [val('fault', m, p) for p in xs], marks[m],
                 label={'kernel': 'kernel /dev/dlm'}.get(m, m))
    ax1.set_xlabel('local memory, % of the arrays')
    ax1.set_yscale('log')
    ax1.set_ylabel('triad MB/s (log)')
    ax1.set_title('STREAM triad, 1 MB DLM pages')
    ax1.grid(True, alpha=0.3)
    ax1.legend()
    ax2.set_xscale('log', base=2)
    ax2.set_xticks(pages)
    ax2.set_xticklabels([str(p) for p in pages])
    ax2.set_xlabel('DLM page, KB')
    ax2.set_ylabel('us per DLM page fault')
    ax2.set_title('cost of a DLM page fault (fetch + write-back)')
    ax2.set_ylim(bottom=0)
    ax2.grid(True, alpha=0.3)
    ax2.legend()
    fig.suptitle(title, fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=110)


if __name__ == '__main__':
    main()

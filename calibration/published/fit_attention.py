#!/usr/bin/env python3
"""Fits the attention shape parameters of a device profile (sim/cost/attention_shape.hpp)
to published kernel rates: attention_h100.csv, FlashAttention-3's bars (arXiv:2407.08608,
Figures 5 and 6). Least squares of the log ratio, over a grid, with the matrix products' part of
the time at head dim 128 no faster than the tensor cores' peak (efficiency <= 1 - softmax share);
prints the parameters and each point's error.   python3 calibration/published/fit_attention.py [CSV]"""
import csv, math, os, sys

TILE = 128
PEAK = 989e12  # H100 SXM bf16 dense


def rows(path):
    with open(path) as f:
        for r in csv.DictReader(line for line in f if not line.startswith('#')):
            yield (r['direction'], int(r['head_dim']), r['mask'] == 'causal', int(r['seq']),
                   float(r['tflops']) * 1e12)


def shape(seq, causal, row_tiles, diagonal_tiles):
    n = seq / TILE
    if causal:
        needed = seq * (seq + 1) / 2 / TILE**2
        return needed / (needed + n * (row_tiles + diagonal_tiles + 0.5))
    return n / (n + row_tiles)


def rate(base, softmax, row_tiles, diagonal_tiles, d, causal, seq):
    head = base / ((1 - softmax) + softmax * 128 / d)
    return PEAK * head * shape(seq, causal, row_tiles, diagonal_tiles)


def fit(points, diagonal_grid):
    best = None
    for base in [x / 1000 for x in range(400, 900, 5)]:
        for softmax in [x / 200 for x in range(0, 120)]:
            if base > 1 - softmax + 1e-9:
                continue  # the products alone would run above the tensor cores' peak
            for row in [x / 8 for x in range(0, 49)]:
                for diag in diagonal_grid:
                    errs = [math.log(rate(base, softmax, row, diag, d, c, s) / v)
                            for d, c, s, v in points]
                    ss = sum(e * e for e in errs)
                    if best is None or ss < best[0]:
                        best = (ss, base, softmax, row, diag)
    return best


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__),
                                                               'attention_h100.csv')
    data = list(rows(path))
    fwd = [(d, c, s, v) for k, d, c, s, v in data if k == 'fwd']
    bwd = [(d, c, s, v) for k, d, c, s, v in data if k == 'bwd']
    _, fb, fs, fr, diag = fit(fwd, [x / 8 for x in range(0, 25)])
    _, bb, bs, br, _ = fit(bwd, [diag])  # no causal backward published: the forward's diagonal
    print(f'attention_fwd_efficiency {fb}  attention_fwd_softmax_share {fs}  '
          f'attention_fwd_row_tiles {fr}  attention_diagonal_tiles {diag}')
    print(f'attention_bwd_efficiency {bb}  attention_bwd_softmax_share {bs}  '
          f'attention_bwd_row_tiles {br}')
    worst = 0
    for k, d, c, s, v in data:
        p = (fb, fs, fr) if k == 'fwd' else (bb, bs, br)
        e = rate(p[0], p[1], p[2], diag, d, c, s) / v - 1
        worst = max(worst, abs(e))
        print(f'{k} d{d} {"causal" if c else "full  "} {s:6d}: published {v/1e12:4.0f}, '
              f'model {rate(p[0], p[1], p[2], diag, d, c, s)/1e12:4.0f} TFLOP/s ({e:+.1%})')
    print(f'worst {worst:.1%}')


if __name__ == '__main__':
    main()

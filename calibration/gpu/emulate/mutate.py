"""Does the emulation see mistakes? Three injected on purpose, each of which
must show as a large error or NaN: ldmatrix without .trans, a cp.async group
waited on too few, a mask off by one in the backward.

    python3 mutate.py
"""
import numpy as np, ptx, kernels
from ptx import u32, G, T
from run import run
sh = (1,2,1,70,64,True,20)
print('baseline', run(sh, 'late')[0:2])
# 1. ldmatrix without .trans semantics
orig = ptx.ldmatrix_x4_trans
def ld_notrans(mem, addr):
    M = mem[addr[:, None] + np.arange(8)[None, :]]
    regs = np.empty((32, 4), u32)
    for i in range(4):
        Mi = M[8*i:8*i+8]
        regs[:, i] = Mi[G, 2*T].astype(u32) | (Mi[G, 2*T+1].astype(u32) << 16)
    return regs
kernels.ldmatrix_x4_trans = ld_notrans
print('no-trans', run(sh, 'late')[0:2])
kernels.ldmatrix_x4_trans = orig
# 2. skip the cp.async wait of the in-flight group (wait<1> -> wait<2>)
ow = kernels.Async.wait
kernels.Async.wait = lambda self, n: ow(self, n + 1)
try: print('short wait', run(sh, 'late')[0:2])
except AssertionError as e: print('short wait: assertion', e)
kernels.Async.wait = ow
# 3. off-by-one in the mask: sees() allowing j == last
osees = kernels.sees
def sees2(s, i, j):
    i = np.asarray(i, np.int64); j = np.asarray(j, np.int64)
    f, l = kernels.key_range(s, i)
    return (i < s.seq) & (j < s.seq) & (j >= f) & (j <= l)
kernels.sees = sees2
print('mask off by one (bwd only)', run(sh, 'late')[0:2])
kernels.sees = osees

"""The tensor-core attention kernels (kernels/ops/attention_mma*.cu), emulated
lane by lane with PTX's semantics (ptx.py, kernels.py), against float64.

    python3 run.py [late] [early] [--extra]

late/early: cp.async copies land at the wait, or when issued (the two extremes).
--extra adds edge shapes (seq 1, windows of 1 and past seq, a GQA group of 4).
Exits 1 when an output is past its tolerance (o 5e-3, lse 1e-4 relative,
gradients 2 % of their largest element) or NaN. Needs numpy (Debian's
python3-numpy); no GPU.
"""
import sys, time
import numpy as np
from ptx import f32, f64, u16, f2bf, bf2f
from kernels import Shape, forward, delta_kernel, dkdv_kernel, dq_kernel

def reference(s, Q, K, V, dO):
    """float64; Q: [B,H,S,D]; K,V: [B,Hk,S,D]"""
    B, H, S, D = Q.shape
    grp = s.q_heads // s.kv_heads
    scale = s.scale if s.scale != 0 else 1.0 / np.sqrt(D)
    i = np.arange(S)[:, None]; j = np.arange(S)[None, :]
    first = np.zeros_like(i); last = i + 1 if s.causal else np.full_like(i, S)
    if s.window > 0:
        first = np.maximum(0, i - s.window + 1)
        if not s.causal: last = np.minimum(S, i + s.window)
    mask = (j >= first) & (j < last)
    O = np.zeros_like(Q); L = np.zeros((B, H, S))
    dQ = np.zeros_like(Q); dK = np.zeros_like(K); dV = np.zeros_like(V)
    for b in range(B):
        for h in range(H):
            hk = h // grp
            Sc = scale * Q[b, h] @ K[b, hk].T
            Sc = np.where(mask, Sc, -np.inf)
            mx = Sc.max(1, keepdims=True)
            E = np.exp(Sc - mx); den = E.sum(1, keepdims=True)
            P = E / den
            O[b, h] = P @ V[b, hk]
            L[b, h] = (mx + np.log(den))[:, 0]
            dV[b, hk] += P.T @ dO[b, h]
            dP = dO[b, h] @ V[b, hk].T
            delta = (dO[b, h] * O[b, h]).sum(1, keepdims=True)
            dS = P * (dP - delta)
            dQ[b, h] = scale * dS @ K[b, hk]
            dK[b, hk] += scale * dS.T @ Q[b, h]
    return O, L, dQ, dK, dV

def run(shape, mode, seed=0):
    B, H, Hk, S, D, causal, window = shape
    s = Shape(B, H, Hk, S, D, causal, window)
    rng = np.random.default_rng(seed)
    q = f2bf(rng.uniform(-2, 2, B * H * S * D).astype(f32))
    k = f2bf(rng.uniform(-2, 2, B * Hk * S * D).astype(f32))
    v = f2bf(rng.uniform(-1, 1, B * Hk * S * D).astype(f32))
    do = f2bf(rng.uniform(-1, 1, B * H * S * D).astype(f32))
    Q = bf2f(q).astype(f64).reshape(B, H, S, D); K = bf2f(k).astype(f64).reshape(B, Hk, S, D)
    V = bf2f(v).astype(f64).reshape(B, Hk, S, D); dO = bf2f(do).astype(f64).reshape(B, H, S, D)
    t0 = time.time()
    o, lse = forward(s, q, k, v, mode)
    delta = delta_kernel(s, o, do)
    dk, dv = dkdv_kernel(s, q, k, v, do, lse, delta, mode)
    dq = dq_kernel(s, q, k, v, do, lse, delta, mode)
    el = time.time() - t0
    O, L, dQ, dK, dV = reference(s, Q, K, V, dO)
    res = {}
    res['o_abs'] = np.abs(bf2f(o).reshape(O.shape) - O).max()
    res['lse_rel'] = (np.abs(lse.reshape(L.shape) - L) / np.abs(L)).max()
    for name, got, ref in (('dq', dq, dQ), ('dk', dk, dK), ('dv', dv, dV)):
        g = bf2f(got).astype(f64).reshape(ref.shape)
        res[name + '_rel'] = np.abs(g - ref).max() / np.abs(ref).max()
    nan = any(np.isnan(bf2f(x)).any() for x in (o, dq, dk, dv)) or np.isnan(lse).any()
    return res, nan, el

SHAPES = [(1, 2, 2, 17, 64, True, 0), (2, 4, 2, 130, 64, True, 50), (1, 3, 1, 133, 128, False, 0),
          (1, 2, 2, 300, 128, True, 0), (1, 2, 1, 200, 128, False, 40)]
EXTRA = [(1, 1, 1, 1, 64, True, 0), (1, 1, 1, 1, 128, False, 0), (1, 4, 1, 64, 64, True, 0),
         (1, 2, 1, 65, 128, True, 0), (1, 2, 2, 129, 64, False, 3), (1, 2, 1, 150, 128, True, 1),
         (1, 2, 2, 100, 64, True, 500), (1, 2, 1, 97, 128, True, 33), (1, 8, 2, 70, 64, False, 64)]
LIMITS = {'o_abs': 5e-3, 'lse_rel': 1e-4, 'dq_rel': 2e-2, 'dk_rel': 2e-2, 'dv_rel': 2e-2}

if __name__ == "__main__":
    modes = [a for a in sys.argv[1:] if not a.startswith('--')] or ['late']
    shapes = SHAPES + (EXTRA if '--extra' in sys.argv else [])
    bad = 0
    for mode in modes:
        for sh in shapes:
            res, nan, el = run(sh, mode)
            over = [k for k, v in res.items() if not v <= LIMITS[k]]
            bad += bool(over) or nan
            print(mode, sh, ' '.join('%s=%.3g' % kv for kv in res.items()), 'NaN!' if nan else '',
                  ('OVER: ' + ', '.join(over)) if over else '', '(%.0fs)' % el, flush=True)
    print('%d of %d runs past their tolerance' % (bad, len(modes) * len(shapes)))
    sys.exit(1 if bad else 0)

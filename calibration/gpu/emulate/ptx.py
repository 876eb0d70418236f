# PTX-level primitives, per warp, vectorized over the 32 lanes.
import numpy as np
f32, f64, u16, u32 = np.float32, np.float64, np.uint16, np.uint32
LANE = np.arange(32)
G = LANE // 4
T = LANE % 4

def f2bf(x):
    """float32 -> bf16 bits, round to nearest even (as __float2bfloat16_rn)."""
    x = np.asarray(x, dtype=f32)
    b = x.view(u32).astype(np.uint64)
    nan = np.isnan(x)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(u16)
    return np.where(nan, u16(0x7FC0), r).astype(u16)

def bf2f(h):
    return (np.asarray(h).astype(u32) << 16).view(f32)

def pack_bf16(lo, hi):
    return f2bf(lo).astype(u32) | (f2bf(hi).astype(u32) << 16)

def lo(x): return bf2f((x & 0xFFFF).astype(u16))
def hi(x): return bf2f((x >> 16).astype(u16))

def load_pair(mem, idx):
    idx = np.asarray(idx)
    assert np.all(idx % 2 == 0), "misaligned 32-bit load"
    assert idx.min() >= 0 and idx.max() + 1 < mem.size, "shared/global out of bounds"
    return mem[idx].astype(u32) | (mem[idx + 1].astype(u32) << 16)

def mma_bf16(c, a, b0, b1):
    """mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32, D = A B + C. c: (32,4) f32."""
    A = np.full((16, 16), np.nan, f32)
    A[G, 2 * T] = lo(a[:, 0]); A[G, 2 * T + 1] = hi(a[:, 0])
    A[G + 8, 2 * T] = lo(a[:, 1]); A[G + 8, 2 * T + 1] = hi(a[:, 1])
    A[G, 2 * T + 8] = lo(a[:, 2]); A[G, 2 * T + 9] = hi(a[:, 2])
    A[G + 8, 2 * T + 8] = lo(a[:, 3]); A[G + 8, 2 * T + 9] = hi(a[:, 3])
    B = np.full((16, 8), np.nan, f32)
    B[2 * T, G] = lo(b0); B[2 * T + 1, G] = hi(b0)
    B[2 * T + 8, G] = lo(b1); B[2 * T + 9, G] = hi(b1)
    C = np.full((16, 8), np.nan, f32)
    C[G, 2 * T] = c[:, 0]; C[G, 2 * T + 1] = c[:, 1]
    C[G + 8, 2 * T] = c[:, 2]; C[G + 8, 2 * T + 1] = c[:, 3]
    D = (A.astype(f64) @ B.astype(f64) + C.astype(f64)).astype(f32)
    return np.stack([D[G, 2 * T], D[G, 2 * T + 1], D[G + 8, 2 * T], D[G + 8, 2 * T + 1]], axis=1)

def ldmatrix_x4_trans(mem, addr):
    """ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16; addr: (32,) element index per lane.
    Lanes 8i..8i+7 give the rows of matrix i; lane (g,t) gets in reg i
    (row 2t, col g) | (row 2t+1, col g) << 16 of matrix i."""
    addr = np.asarray(addr)
    assert np.all((addr * 2) % 16 == 0), "ldmatrix row address not 16-byte aligned"
    assert addr.min() >= 0 and addr.max() + 8 <= mem.size
    M = mem[addr[:, None] + np.arange(8)[None, :]]  # (32 rows, 8 cols): matrix i = M[8i:8i+8]
    regs = np.empty((32, 4), u32)
    for i in range(4):
        Mi = M[8 * i:8 * i + 8]
        regs[:, i] = Mi[2 * T, G].astype(u32) | (Mi[2 * T + 1, G].astype(u32) << 16)
    return regs

def shfl_xor(x, m):
    return x[LANE ^ m]

def selftest():
    # every fragment slot assigned exactly once
    rng = np.random.default_rng(0)
    Am = bf2f(f2bf(rng.standard_normal((16, 16)).astype(f32)))
    Bm = bf2f(f2bf(rng.standard_normal((16, 8)).astype(f32)))
    a = np.stack([pack_bf16(Am[G, 2*T], Am[G, 2*T+1]), pack_bf16(Am[G+8, 2*T], Am[G+8, 2*T+1]),
                  pack_bf16(Am[G, 2*T+8], Am[G, 2*T+9]), pack_bf16(Am[G+8, 2*T+8], Am[G+8, 2*T+9])], 1)
    b0 = pack_bf16(Bm[2*T, G], Bm[2*T+1, G]); b1 = pack_bf16(Bm[2*T+8, G], Bm[2*T+9, G])
    d = mma_bf16(np.zeros((32, 4), f32), a, b0, b1)
    ref = Am.astype(f64) @ Bm.astype(f64)
    got = np.zeros((16, 8)); got[G, 2*T] = d[:, 0]; got[G, 2*T+1] = d[:, 1]; got[G+8, 2*T] = d[:, 2]; got[G+8, 2*T+1] = d[:, 3]
    assert np.allclose(got, ref, atol=1e-4)
    x = np.array([1.0, 1.00390625, 1.01171875, -3.0000001, 65504.0, 1e-40, np.inf], f32)
    assert np.all(bf2f(f2bf(x))[:3] == np.array([1.0, 1.0, 1.015625], f32)), bf2f(f2bf(x))
    print("ptx selftest ok")

if __name__ == "__main__":
    selftest()

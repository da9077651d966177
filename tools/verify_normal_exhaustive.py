"""Check torchish's float32 normal kernel against real PyTorch on *every* possible input.

PyTorch's float32 ``randn`` (16+ elements, AVX2 kernel) maps a block of 16 raw draws to 16
normals: slots 0..7 give ``u1`` (through ``log256_ps``), slots 8..15 the angle (through
``sincos256_ps``); each depends only on the low 24 bits of its draw. We feed PyTorch chosen raw
draws by crafting a generator state whose ``left``/``next`` counters make it hand out
``temper(key[0:608])`` before twisting, with ``key`` the un-tempered wanted draws:

* part A: every k1 in [0, 2**24) with angle draw 0 (cos = 1 exactly) -> output == radius(k1);
* part B: every k2 with k1 = 6601320, whose radius is exactly 1.0 -> outputs == cos, sin(k2).

Both of torchish's implementations of the kernel are checked against those outputs: the NumPy
one (what ``MT19937Engine.normal`` runs for these 608-value calls) and the jitted XLA one (what it
runs for 4096+ values), fed the same raw draws in one call per part, for every compiled chunk size.

Usage: ``python tools/verify_normal_exhaustive.py [step]`` (step > 1 samples every step-th
value). Needs real torch; prints the number of mismatching outputs (0 expected).
"""
import sys
import time

import numpy as np
import torch

sys.path.insert(0, ".")
from torchish import _random_mathfun as mf  # noqa: E402
from torchish import _random_normal_fast as fast  # noqa: E402
from torchish._random_engine import MT19937Engine, untemper  # noqa: E402

PER_CALL = 608                 # 38 blocks: the most a crafted state can hand out (<= 623)
K_RADIUS_ONE = 6601320         # radius(k1) == 1.0 exactly


def craft_state(raw):
    """A torch.get_rng_state()-layout state that hands out exactly ``raw`` (<= 623 words)."""
    eng = MT19937Engine(0)
    state = eng.get_state()
    key = np.zeros(624, np.uint64)
    key[:len(raw)] = untemper(np.asarray(raw, np.uint32))
    state[24:24 + 624 * 8] = key.view(np.uint8)
    state[8:12] = np.array([len(raw) + 1], np.int32).view(np.uint8)   # left
    state[16:24] = np.zeros(1, np.uint64).view(np.uint8)              # next = 0
    return state


def run(blocks_raw):
    """Feed (nblocks, 16) raw draws to torch.randn in calls of 38 blocks; return outputs."""
    flat = blocks_raw.reshape(-1)
    out_t = np.empty(flat.shape[0], np.float32)
    out_o = np.empty(flat.shape[0], np.float32)
    eng = MT19937Engine(0)
    for lo in range(0, flat.shape[0], PER_CALL):
        raw = flat[lo:lo + PER_CALL]
        st = craft_state(raw)
        torch.set_rng_state(torch.from_numpy(st))
        out_t[lo:lo + raw.shape[0]] = torch.randn(raw.shape[0]).numpy()
        eng.set_state(st)
        out_o[lo:lo + raw.shape[0]] = eng.normal(raw.shape[0])
    return out_t, out_o


def run_xla(blocks_raw, size):
    """The XLA kernel on the same raw draws (chunks of ``size``), as one sequential pass."""
    flat = blocks_raw.reshape(-1)
    pos = [0]

    def draw(k):
        pos[0] += k
        return flat[pos[0] - k:pos[0]].copy()
    saved = fast._XLA_SIZES
    fast._XLA_SIZES = tuple(s for s in saved if s <= size)   # stride = size
    try:
        out = mf.aligned_empty(flat.shape[0])
        assert fast._normal_f32_xla(draw, flat.shape[0], 0.0, 1.0, out) is not None, "XLA unusable"
    finally:
        fast._XLA_SIZES = saved
    assert pos[0] == flat.shape[0]
    return out


def main(step=1):
    t0 = time.time()
    ks = np.arange(0, 1 << 24, step, dtype=np.uint32)
    ks = np.concatenate([ks, np.zeros((-len(ks)) % (8 * 38), np.uint32)])
    bad = 0
    for part in ("A", "B"):
        blocks = np.zeros((len(ks) // 8, 16), np.uint32)
        if part == "A":
            blocks[:, :8] = ks.reshape(-1, 8)
        else:
            blocks[:, :8] = K_RADIUS_ONE
            blocks[:, 8:] = ks.reshape(-1, 8)
        # high bits of a draw are ignored by the kernel; vary them anyway
        blocks |= (np.arange(blocks.size, dtype=np.uint32).reshape(blocks.shape) % 256) << 24
        got_t, got_o = run(blocks)
        nbad = int(np.sum(got_t.view(np.uint32) != got_o.view(np.uint32)))
        print(f"part {part}: {got_t.size} outputs, {nbad} mismatches ({time.time() - t0:.0f} s)")
        bad += nbad
        for size in fast._XLA_SIZES:
            got_x = run_xla(blocks, size)
            nbad = int(np.sum(got_t.view(np.uint32) != got_x.view(np.uint32)))
            print(f"part {part} XLA kernel, chunks of {size}: {nbad} mismatches "
                  f"({time.time() - t0:.0f} s)")
            bad += nbad
    return bad


if __name__ == "__main__":
    sys.exit(1 if main(int(sys.argv[1]) if len(sys.argv) > 1 else 1) else 0)

"""Per-op eager cost: torchish vs raw jax.numpy vs PyTorch (when installed), one run.

    python benchmarks/eager_ops.py

Prints microseconds per call and the ratios torchish / jax.numpy and torchish / PyTorch.
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _timing import jax_sync, per_call, table, torchish_sync  # noqa: E402

import torchish  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def cases():
    rng = np.random.default_rng(0)
    a64 = rng.standard_normal((64, 64)).astype(np.float32)
    b64 = rng.standard_normal((64, 64)).astype(np.float32)
    a256 = rng.standard_normal((256, 256)).astype(np.float32)
    b256 = rng.standard_normal((256, 256)).astype(np.float32)
    idx = rng.integers(0, 256, 32)
    yield "add 64x64", (a64, b64), (lambda T, x, y: x + y)
    yield "matmul 256x256", (a256, b256), (lambda T, x, y: x @ y)
    yield "sum 256x256", (a256,), (lambda T, x: x.sum())
    yield "index x[3, 1:10]", (a256,), (lambda T, x: x[3, 1:10])
    yield "index_select rows", (a256, idx), (lambda T, x, i: x[i])


def main():
    rows = []
    for name, arrays, fn in cases():
        jx = [jnp.asarray(a) for a in arrays]
        tx = [torchish.from_numpy(a) for a in arrays]
        t_jax = per_call(lambda: fn(jnp, *jx), sync=jax_sync)
        t_ish = per_call(lambda: fn(torchish, *tx), sync=torchish_sync)
        row = [name, f"{t_ish * 1e6:.1f}", f"{t_jax * 1e6:.1f}", f"{t_ish / t_jax:.2f}x"]
        if torch is not None:
            px = [torch.from_numpy(a) for a in arrays]
            t_pt = per_call(lambda: fn(torch, *px))
            row += [f"{t_pt * 1e6:.1f}", f"{t_ish / t_pt:.2f}x"]
        rows.append(row)
    header = ["op", "torchish us", "jax.numpy us", "torchish/jax"]
    if torch is not None:
        header += ["torch us", "torchish/torch"]
    print(f"JAX {jax.__version__} on {jax.devices()[0].platform}")
    table(rows, header)


if __name__ == "__main__":
    main()

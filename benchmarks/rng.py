"""Generating 10 million float32 normals / uniforms: torchish vs PyTorch's CPU generator.

    python benchmarks/rng.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import per_call, table, torchish_sync  # noqa: E402

import torchish  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

N = 10_000_000


def main():
    rows = []
    for name in ("randn", "rand"):
        t_ish = per_call(lambda: getattr(torchish, name)(N), number=1, repeat=5,
                         sync=torchish_sync)
        row = [f"{name}({N:,})", f"{t_ish * 1e3:.1f}"]
        if torch is not None:
            t_pt = per_call(lambda: getattr(torch, name)(N), number=1, repeat=5)
            row += [f"{t_pt * 1e3:.1f}", f"{t_ish / t_pt:.2f}x"]
        rows.append(row)
    table(rows, ["call", "torchish ms", "PyTorch ms", "torchish/PyTorch"][:len(rows[0])])
    if hasattr(os, "getloadavg"):     # timings on a shared machine mean little without it
        print("load average (1, 5, 15 min): %.2f %.2f %.2f" % os.getloadavg())


if __name__ == "__main__":
    main()

"""Write tests/goldens/rng_goldens.json from real PyTorch (the oracle for _random_engine).

Each case is a sequence of engine-style ops run on a generator seeded with ``seed``; the file
stores what real torch returned for every op (floats as base64 little-endian bytes, integers
as JSON ints) and the SHA-256 of ``torch.get_rng_state()`` after the sequence. The test suite
replays the ops on ``MT19937Engine`` without torch and compares bits.

Usage: ``python tools/make_rng_goldens.py`` (needs torch 2.13 on an x86-64 AVX2/AVX512 CPU).
"""
import base64
import hashlib
import json
import os
import sys

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(__file__), "..", "tests", "goldens", "rng_goldens.json")
SEEDS = [0, 1, 42, 2 ** 32 + 5, 2 ** 63, -1, -12345]
FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["int64", "int32", "int16", "int8", "uint8", "bool"]


def _tdt(name):
    return getattr(torch, name)


def torch_op(op):
    """Run one op (the vocabulary of tests/test_random_engine.py::apply_op) on torch."""
    name, args = op[0], op[1:]
    if name == "normal":
        size, dt, mean, std = args
        return torch.empty(size, dtype=_tdt(dt)).normal_(mean, std)
    if name == "normal_noncontig":
        (rows, cols), dt, mean, std = args
        t = torch.empty(cols, rows, dtype=_tdt(dt)).t()     # non-contiguous: element path
        t.normal_(mean, std)
        return t.t().reshape(-1)                             # memory (= iteration) order
    if name == "uniform":
        size, dt, low, high = args
        return torch.empty(size, dtype=_tdt(dt)).uniform_(low, high)
    if name == "randint":
        low, high, size, dt = args
        return torch.randint(low, high, size, dtype=_tdt(dt))
    if name == "random_":
        size, dt = args
        return torch.empty(size, dtype=_tdt(dt)).random_()
    if name == "random_from_to":
        size, dt, low, high = args
        return torch.empty(size, dtype=_tdt(dt)).random_(low, high)
    if name == "randperm":
        n, dt = args
        return torch.randperm(n, dtype=_tdt(dt))
    if name == "bernoulli_scalar":
        size, p, dt = args
        return torch.empty(size, dtype=_tdt(dt)).bernoulli_(p)
    if name == "bernoulli_tensor":
        p, pdt = args
        return torch.bernoulli(torch.tensor(p, dtype=_tdt(pdt)))
    if name in ("exponential", "geometric", "cauchy", "log_normal"):
        size, dt, *params = args
        return getattr(torch.empty(size, dtype=_tdt(dt)), name + "_")(*params)
    if name == "poisson":
        rates, dt = args
        return torch.poisson(torch.tensor(rates, dtype=_tdt(dt)))
    if name == "multinomial":
        probs, dt, n, replacement = args
        return torch.multinomial(torch.tensor(probs, dtype=_tdt(dt)), n, replacement)
    if name == "fork_jax_key":
        v = torch.empty(1, dtype=torch.int64).random_(-2 ** 63, None)   # one raw random64()
        return torch.tensor([int(v.item()) & (2 ** 64 - 1)], dtype=torch.uint64)
    raise ValueError(name)


def encode(t):
    if t.dtype == torch.bfloat16:
        arr, dt = t.contiguous().view(torch.int16).numpy(), "bfloat16"
    else:
        arr = t.contiguous().numpy()
        dt = str(arr.dtype)
    rec = {"dtype": dt, "shape": list(t.shape)}
    if t.dtype.is_floating_point:
        rec["b64"] = base64.b64encode(np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<"))
                                      .tobytes()).decode()
    else:
        rec["ints"] = [int(v) for v in arr.reshape(-1).tolist()]
    return rec


def make_case(cid, seed, ops, full_state=False):
    torch.manual_seed(seed)
    values = [encode(torch_op(op)) for op in ops]
    state = torch.get_rng_state().numpy().tobytes()
    case = {"id": cid, "seed": seed, "ops": ops, "values": values,
            "state_sha256": hashlib.sha256(state).hexdigest()}
    if full_state:
        case["state_b64"] = base64.b64encode(state).decode()
    return case


def cases():
    out = []
    # every size 0..40 on a fresh generator, per seed and dtype (normal: both paths + tails)
    for seed in SEEDS:
        for dt in FLOATS:
            sizes = range(41) if dt in ("float32", "float64") or seed in (0, -1) else (
                0, 1, 3, 15, 16, 17, 31, 32, 33, 40)
            for fn, params in (("normal", (0.0, 1.0)), ("uniform", (0.0, 1.0))):
                out.append(make_case(f"{fn}-{dt}-s{seed}", seed,
                                     [[fn, n, dt, *params] for n in sizes]))
        out.append(make_case(f"normal-ms-s{seed}", seed,
                             [["normal", n, dt, 0.5, 2.5] for dt in FLOATS for n in (7, 16, 37)]))
        out.append(make_case(f"uniform-ab-s{seed}", seed,
                             [["uniform", n, dt, -3.2, 7.1] for dt in FLOATS for n in (9, 40)]))
    for seed in (0, 42):
        out.append(make_case(f"large-s{seed}", seed, [
            ["normal", 1000, "float32", 0.0, 1.0], ["normal", 4099, "float32", 0.0, 1.0],
            ["uniform", 4099, "float32", 0.0, 1.0], ["normal", 1000, "float64", 0.0, 1.0],
            ["normal", 4099, "float64", -1.0, 0.25], ["uniform", 1000, "float64", -2.0, 5.0],
            ["normal", 1000, "float16", 0.0, 1.0], ["normal", 1000, "bfloat16", 0.0, 1.0]]))
    # integers
    for seed in SEEDS[:4]:
        ops = [["randint", 0, 10, [9], "int64"], ["randint", -5, 2 ** 40, [9], "int64"],
               ["randint", 3, 2 ** 28, [5], "int64"], ["randint", 0, 2 ** 28 - 1, [5], "int32"]]
        for dt in INTS + FLOATS:
            ops.append(["random_", 9, dt])
            lo, hi = (0, 2) if dt == "bool" else (3, 200) if dt == "uint8" else (-3, 100)
            ops.append(["random_from_to", 9, dt, lo, hi])
            if dt != "bool":
                ops.append(["random_from_to", 9, dt, lo, None])
            if dt in ("int64", "float32", "float64", "bfloat16"):
                ops.append(["random_from_to", 9, dt, -2 ** 63, None])
        ops += [["randperm", n, "int64"] for n in (0, 1, 2, 3, 10, 33)]
        ops += [["randperm", 1000, "int64"], ["randperm", 50, "float32"], ["randperm", 7, "int32"]]
        out.append(make_case(f"ints-s{seed}", seed, ops))
    # other distributions
    rng = np.random.default_rng(7)
    probs = np.abs(rng.standard_normal((3, 11))).round(3)
    probs[1, 4] = 0.0
    for seed in SEEDS[:4]:
        ops = []
        for dt in FLOATS:
            ops += [["exponential", 33, dt, 1.7], ["geometric", 33, dt, 0.2],
                    ["cauchy", 33, dt, 0.5, 2.0], ["log_normal", 33, dt, 0.1, 0.7],
                    ["bernoulli_scalar", 33, 0.3, dt]]
        ops += [["geometric", 20, "int64", 0.05], ["bernoulli_scalar", 17, 0.7, "bool"]]
        p = rng.random(23).round(4).tolist()
        ops += [["bernoulli_tensor", p, "float32"], ["bernoulli_tensor", p, "float64"],
                ["bernoulli_tensor", p, "float16"]]
        rates = [0.0, 0.5, 3.0, 9.99, 10.0, 25.0, 300.0, 1e5, 1.5, 12.5]
        ops += [["poisson", rates, "float32"], ["poisson", rates, "float64"]]
        for n, rep in ((1, False), (1, True), (3, False), (11, False), (5, True), (40, True)):
            ops.append(["multinomial", probs.tolist(), "float32", n, rep])
        ops += [["multinomial", probs[0].tolist(), "float64", 4, False],
                ["multinomial", probs[2].tolist(), "float64", 6, True]]
        out.append(make_case(f"dists-s{seed}", seed, ops))
    # interleaved sequences: the cached double normal and the stream position carry over
    for seed in SEEDS:
        ops = [["normal", 3, "float32", 0.0, 1.0], ["uniform", 5, "float32", 0.0, 1.0],
               ["normal", 20, "float32", 0.0, 1.0], ["normal", 1, "float64", 0.0, 1.0],
               ["randint", 0, 100, [7], "int64"], ["randperm", 10, "int64"],
               ["normal", 5, "float16", 2.0, 3.0],
               ["normal_noncontig", [4, 5], "float32", 0.0, 1.0],
               ["normal_noncontig", [3, 7], "float64", 1.0, 2.0],
               ["log_normal", 3, "float32", 0.0, 1.0], ["normal", 15, "bfloat16", 0.0, 1.0],
               ["fork_jax_key"], ["normal", 1, "float32", 0.0, 1.0],
               ["uniform", 17, "float64", 0.0, 1.0], ["normal", 700, "float32", 0.0, 1.0],
               ["normal", 1, "float32", 0.0, 1.0]]
        out.append(make_case(f"sequence-s{seed}", seed, ops, full_state=seed in (0, -1)))
    return out


def main():
    if torch.__version__.split("+")[0] != "2.13.0":
        print(f"warning: goldens are meant for torch 2.13.0, found {torch.__version__}")
    data = {"meta": {"torch": torch.__version__,
                     "cpu_capability": torch.backends.cpu.get_cpu_capability()},
            "cases": cases()}
    with open(OUT, "w") as f:
        json.dump(data, f, separators=(",", ":"))
    print(f"wrote {OUT}: {len(data['cases'])} cases, {os.path.getsize(OUT)} bytes")


if __name__ == "__main__":
    sys.exit(main())

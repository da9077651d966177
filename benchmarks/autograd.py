"""Forward+backward cost: torchish eager vs PyTorch eager vs raw JAX (`jax.grad`, jitted).

    python benchmarks/autograd.py [--device cuda]

(a) a 3-layer MLP (batch 64, 784-256-256-10): forward, cross-entropy, backward.
(b) a chain of 200 elementwise ops on a 64x64 tensor, backward: the per recorded op overhead,
    compared with raw JAX's eager per-op cost (the same ops called one by one with jax.numpy).
"""
import argparse
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))
from _devices import add_device_arg, select, torch_sync  # noqa: E402
from _timing import interleaved, jax_sync, table  # noqa: E402
from models import mlp  # noqa: E402

import torchish  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

N_CHAIN = 200


def mlp_step(T, model, x, y):
    for p in model.parameters():
        p.grad = None
    loss = T.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    return loss


def chain(T, x):
    y = x
    for i in range(N_CHAIN // 4):
        y = (y * 1.0001).sin().add(0.5).tanh()
    return y


def chain_backward(T, x):
    x.grad = None
    chain(T, x).sum().backward()
    return x.grad


def jax_chain(x):
    y = x
    for i in range(N_CHAIN // 4):
        y = jnp.tanh(jnp.sin(y * 1.0001) + 0.5)
    return y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=15, help="timing repeats (interleaved)")
    add_device_arg(ap)
    args = ap.parse_args()
    jax_device, torch_device = select(args.device, torchish, torch)
    put = lambda a: jax.device_put(a, jax_device)  # noqa: E731
    rng = np.random.default_rng(0)
    xn = rng.standard_normal((64, 784)).astype(np.float32)
    yn = rng.integers(0, 10, 64)

    torchish.manual_seed(0)
    model = mlp(torchish)
    x, y = torchish.from_numpy(xn).to(args.device), torchish.from_numpy(yn).to(args.device)
    params = {k: v.detach().jax() for k, v in model.named_parameters()}

    def jax_loss(p, xx, yy):
        h = jax.nn.relu(xx @ p["0.weight"].T + p["0.bias"])
        h = jax.nn.relu(h @ p["2.weight"].T + p["2.bias"])
        out = h @ p["4.weight"].T + p["4.bias"]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(out), yy[:, None], 1))
    jgrad = jax.jit(jax.value_and_grad(jax_loss))
    jx, jy = put(xn), put(yn)
    def ish_mlp():   # waits for the gradients too: torchish's backward runs asynchronously
        loss = mlp_step(torchish, model, x, y)
        jax_sync([p.grad._data for p in model.parameters()])
        return loss.item()
    mlp_fns = [(ish_mlp, 20),
               (lambda: jax_sync(jgrad(params, jx, jy)), 20)]

    cn = rng.standard_normal((64, 64)).astype(np.float32)
    cx = torchish.from_numpy(cn).to(args.device).requires_grad_()
    jc = put(cn)
    jchain_grad = jax.jit(jax.grad(lambda v: jax_chain(v).sum()))
    chain_fns = [(lambda: chain_backward(torchish, cx)._data.block_until_ready(), 3),
                 (lambda: jax_sync(jax_chain(jc)), 3),
                 (lambda: jax_sync(jchain_grad(jc)), 20)]
    if torch_device is not None:
        torch.manual_seed(0)
        tmodel = mlp(torch).to(torch_device)
        tx, ty = torch.from_numpy(xn).to(torch_device), torch.from_numpy(yn).to(torch_device)
        mlp_fns.append((lambda: mlp_step(torch, tmodel, tx, ty).item(), 20))
        tc = torch.from_numpy(cn).to(torch_device).requires_grad_()
        wait = torch_sync(torch, torch_device)
        chain_fns.append((lambda: (chain_backward(torch, tc), wait()), 3))

    mlp_t = interleaved(mlp_fns, args.repeat)
    chain_t = interleaved(chain_fns, args.repeat)
    rows = [["MLP fwd+bwd", f"{mlp_t[0] * 1e3:.3f} ms", f"{mlp_t[1] * 1e3:.3f} ms"],
            [f"{N_CHAIN}-op chain fwd+bwd", f"{chain_t[0] * 1e3:.3f} ms",
             f"{chain_t[2] * 1e3:.3f} ms (jit)"]]
    if torch_device is not None:
        rows[0] += [f"{mlp_t[2] * 1e3:.3f} ms", f"{mlp_t[0] / mlp_t[2]:.2f}x"]
        rows[1] += [f"{chain_t[3] * 1e3:.3f} ms", f"{chain_t[0] / chain_t[3]:.2f}x"]
    per_op = chain_t[0] / (2 * N_CHAIN)          # each op runs forward and backward
    per_jax_op = chain_t[1] / N_CHAIN
    header = ["case", "torchish eager", "raw JAX", "PyTorch eager", "torchish/PyTorch"]
    print(f"JAX {jax.__version__} on {jax_device.device_kind}")
    table(rows, header[:len(rows[0])])
    print(f"\nper recorded op (forward or backward half): torchish {per_op * 1e6:.1f} us, "
          f"raw jax.numpy eager op {per_jax_op * 1e6:.1f} us -> {per_op / per_jax_op:.2f}x")


if __name__ == "__main__":
    main()

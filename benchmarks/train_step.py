"""Time per training step: torchish eager, torchish compiled, raw JAX, PyTorch eager (one run).

    python benchmarks/train_step.py [--steps N] [--repeat R] [--sync-every-step] [--device cuda]

Models: (a) MLP 784-256-256-10, batch 64, Adam; (b) LeNet-style CNN on 1x28x28, batch 64, SGD
with momentum; (c) 2-layer GPT (d_model 128, 4 heads, seq 64, batch 16), AdamW. The raw JAX
versions are hand-written (`jax.jit` + `jax.value_and_grad`, the same math and optimizer) and
start from the same weights. Also prints the compiled step's peak memory (XLA's memory analysis
of the compiled executables, both with their input donation) against raw JAX's, and the
seconds its first two steps take (tracing and XLA compilation) against raw JAX's. The four
contenders' timing repeats are interleaved, so load drift on a shared machine hits all alike.

By default the steps of a timed block run back to back with one wait at its end, as a training
loop that logs every few steps runs (JAX then overlaps Python with the previous step; PyTorch
eager gains nothing). `--sync-every-step` waits for every step's loss instead.
"""
import argparse
import copy
import math
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))
from _devices import add_device_arg, select  # noqa: E402
from _timing import interleaved, table  # noqa: E402
from models import GPT, LeNet, mlp  # noqa: E402

import torchish  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


# ---- raw JAX: the same three models and optimizers, written by hand ----------------------

def _linear(p, x, name):
    y = x @ p[name + ".weight"].T
    return y + p[name + ".bias"] if name + ".bias" in p else y


def jax_mlp(p, x):
    h = jax.nn.relu(_linear(p, x, "0"))
    h = jax.nn.relu(_linear(p, h, "2"))
    return _linear(p, h, "4")


def _conv(x, w, b, pad):
    y = jax.lax.conv_general_dilated(x, w, (1, 1), [(pad, pad), (pad, pad)],
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"),
                                     precision=jax.lax.Precision.HIGHEST)
    return y + b[None, :, None, None]


def _maxpool(x):
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")


def jax_lenet(p, x):
    h = _maxpool(jax.nn.relu(_conv(x, p["0.weight"], p["0.bias"], 2)))
    h = _maxpool(jax.nn.relu(_conv(h, p["3.weight"], p["3.bias"], 0)))
    h = h.reshape(h.shape[0], -1)
    h = jax.nn.relu(_linear(p, h, "7"))
    h = jax.nn.relu(_linear(p, h, "9"))
    return _linear(p, h, "11")


def _layer_norm(x, w, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + eps) * w + b


def make_jax_gpt(n_layer, n_head):
    def forward(p, idx):
        B, L = idx.shape
        x = p["tok.weight"][idx] + p["pos.weight"][jnp.arange(L)]
        for i in range(n_layer):
            pre = f"blocks.{i}."
            h = _layer_norm(x, p[pre + "ln1.weight"], p[pre + "ln1.bias"])
            q, k, v = jnp.split(_linear(p, h, pre + "attn.qkv"), 3, axis=-1)
            C = x.shape[-1]
            sh = lambda t: t.reshape(B, L, n_head, C // n_head).transpose(0, 2, 1, 3)
            q, k, v = sh(q), sh(k), sh(v)
            att = (q @ k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(C // n_head))
            mask = jnp.tril(jnp.ones((L, L)))
            att = jnp.where(mask == 0, -jnp.inf, att)
            att = jax.nn.softmax(att, -1)
            y = (att @ v).transpose(0, 2, 1, 3).reshape(B, L, C)
            x = x + _linear(p, y, pre + "attn.proj")
            h = _layer_norm(x, p[pre + "ln2.weight"], p[pre + "ln2.bias"])
            h = jax.nn.gelu(_linear(p, h, pre + "mlp.0"), approximate=False)
            x = x + _linear(p, h, pre + "mlp.2")
        x = _layer_norm(x, p["ln_f.weight"], p["ln_f.bias"])
        return x @ p["head.weight"].T
    return forward


def _xent(logits, y):
    logits = logits.reshape(-1, logits.shape[-1])
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y.reshape(-1, 1), 1))


def adam_like(decoupled, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, wd=0.0):
    def init(p):
        zeros = lambda: jax.tree_util.tree_map(jnp.zeros_like, p)  # noqa: E731
        return (zeros(), zeros(), jnp.zeros((), jnp.float32))

    def update(p, g, s):
        m, v, t = s
        t = t + 1
        if decoupled:
            p = jax.tree_util.tree_map(lambda a: a * (1 - lr * wd), p)
        m = jax.tree_util.tree_map(lambda m_, g_: b1 * m_ + (1 - b1) * g_, m, g)
        v = jax.tree_util.tree_map(lambda v_, g_: b2 * v_ + (1 - b2) * g_ * g_, v, g)
        bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
        p = jax.tree_util.tree_map(
            lambda a, m_, v_: a - (lr / bc1) * m_ / (jnp.sqrt(v_) / jnp.sqrt(bc2) + eps), p, m, v)
        return p, (m, v, t)
    return init, update


def sgd_momentum(lr=0.01, momentum=0.9):
    def init(p):
        return jax.tree_util.tree_map(jnp.zeros_like, p)

    def update(p, g, buf):
        buf = jax.tree_util.tree_map(lambda b, g_: momentum * b + g_, buf, g)
        return jax.tree_util.tree_map(lambda a, b: a - lr * b, p, buf), buf
    return init, update


def raw_jax_step(forward, opt):
    init, update = opt

    @functools_partial_jit
    def step(p, s, x, y):
        loss, g = jax.value_and_grad(lambda q: _xent(forward(q, x), y))(p)
        p, s = update(p, g, s)
        return p, s, loss
    return init, step


def functools_partial_jit(fn):
    return jax.jit(fn, donate_argnums=(0, 1))


# ---- the benchmark ------------------------------------------------------------------------

def _setups():
    rng = np.random.default_rng(0)
    mnist = (rng.standard_normal((64, 784)).astype(np.float32), rng.integers(0, 10, 64))
    imgs = (rng.standard_normal((64, 1, 28, 28)).astype(np.float32), rng.integers(0, 10, 64))
    toks = (rng.integers(0, 128, (16, 64)), rng.integers(0, 128, (16, 64)))
    gpt_kw = dict(vocab=128, d_model=128, n_head=4, n_layer=2, block=64)
    return [
        ("(a) MLP + Adam", lambda T: mlp(T), lambda T, p: T.optim.Adam(p, lr=1e-3),
         mnist, jax_mlp, adam_like(False)),
        ("(b) LeNet + SGD momentum", lambda T: LeNet(T),
         lambda T, p: T.optim.SGD(p, lr=0.01, momentum=0.9), imgs, jax_lenet, sgd_momentum()),
        ("(c) GPT + AdamW", lambda T: GPT(T, **gpt_kw),
         lambda T, p: T.optim.AdamW(p, lr=1e-3), toks, make_jax_gpt(2, 4),
         adam_like(True, wd=0.01)),
    ]


def _step_fn(T, model, opt, lm):
    F = T.nn.functional

    def step(x, y):
        opt.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1)) if lm else \
            F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        return loss
    return step


def _waiter(model):
    """Waits for a torchish step: its loss, and its parameter updates, which JAX runs
    asynchronously after the loss (unwaited work would be charged to the next contender)."""
    params = list(model.parameters())

    def sync(loss):
        loss.item()
        jax.block_until_ready([p._data for p in params])
    return sync


def _entry(call, sync, number, every_step):
    """An `interleaved` entry: `call()` runs a step, `sync(its result)` waits for it; with
    `every_step` each step is waited for (a loop that reads the loss every step)."""
    return (lambda: sync(call()), number) if every_step else (call, number, sync)


def _first_steps(call, sync, n=2):
    """Seconds for the first `n` steps: tracing and compiling (a torchish step is compiled
    again once the optimizer has state, at its second step)."""
    start = time.perf_counter()
    for _ in range(n):
        sync(call())
    return time.perf_counter() - start


def _peak_bytes(executable):
    """XLA's peak for one call of a compiled executable: live arguments, outputs not written
    into donated arguments, temporaries. The same figure for both sides (both donate)."""
    stats = executable.memory_analysis()
    if stats is None:
        return None
    return (stats.temp_size_in_bytes + stats.argument_size_in_bytes
            + stats.output_size_in_bytes - stats.alias_size_in_bytes)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20, help="steps per timing repeat")
    ap.add_argument("--repeat", type=int, default=7, help="timing repeats (interleaved)")
    ap.add_argument("--sync-every-step", action="store_true",
                    help="wait for each step's loss (default: wait once per timed block)")
    add_device_arg(ap)
    args = ap.parse_args()
    jax_device, torch_device = select(args.device, torchish, torch)
    rows, compile_rows = [], []
    for name, build, make_opt, (xn, yn), jax_forward, jax_opt in _setups():
        lm = "GPT" in name
        torchish.manual_seed(0)
        model = build(torchish)
        opt = make_opt(torchish, model.parameters())
        x, y = torchish.from_numpy(xn).to(args.device), torchish.from_numpy(yn).to(args.device)
        cmodel = copy.deepcopy(model)
        copt = make_opt(torchish, cmodel.parameters())
        named = dict(model.named_parameters())
        params = {k: jax.device_put(v.detach().cpu().numpy(), jax_device)
                  for k, v in model.state_dict().items() if k in named}
        eager = _step_fn(torchish, model, opt, lm)
        compiled = torchish.compile(_step_fn(torchish, cmodel, copt, lm))

        init, jstep = raw_jax_step(jax_forward, jax_opt)
        state = [params, init(params)]
        jx, jy = jax.device_put(xn, jax_device), jax.device_put(yn, jax_device)

        def run_jax():
            p, s, loss = jstep(state[0], state[1], jx, jy)
            state[0], state[1] = p, s
            return loss

        def jax_sync(loss):
            jax.block_until_ready(state[0])
            float(loss)

        startup = [_first_steps(lambda: compiled(x, y), _waiter(cmodel)),
                   _first_steps(run_jax, jax_sync)]
        every = args.sync_every_step
        fns = [_entry(lambda: eager(x, y), _waiter(model), max(3, args.steps // 4), every),
               _entry(lambda: compiled(x, y), _waiter(cmodel), args.steps, every),
               _entry(run_jax, jax_sync, args.steps, every)]
        if torch_device is not None:
            torch.manual_seed(0)
            tmodel = build(torch).to(torch_device)
            topt = make_opt(torch, tmodel.parameters())
            tstep = _step_fn(torch, tmodel, topt, lm)
            tx, ty = torch.from_numpy(xn).to(torch_device), torch.from_numpy(yn).to(torch_device)
            fns.append(_entry(lambda: tstep(tx, ty), lambda loss: loss.item(), args.steps,
                              every))
        times = interleaved(fns, args.repeat)
        t_eager, t_comp, t_jax = times[:3]
        row = [name, f"{t_eager * 1e3:.2f}", f"{t_comp * 1e3:.2f}", f"{t_jax * 1e3:.2f}",
               f"{t_comp / t_jax:.2f}x"]
        if torch_device is not None:
            t_torch = times[3]
            row += [f"{t_torch * 1e3:.2f}", f"{t_torch / t_comp:.2f}x", f"{t_eager / t_torch:.2f}x"]
        rows.append(row)
        print("  measured:", " | ".join(row), flush=True)  # partial results if stopped

        entry = list(compiled._compiled.cache.values())[-1]   # the steady-state signature
        ours = _peak_bytes(entry.executable)
        raw = _peak_bytes(jstep.lower(state[0], state[1], jx, jy).compile())
        extra = [name, f"{startup[0]:.2f}", f"{startup[1]:.2f}", f"{startup[0] / startup[1]:.2f}x"]
        if ours and raw:
            extra += [f"{ours / 2**20:.2f}", f"{raw / 2**20:.2f}", f"{ours / raw:.2f}x"]
        compile_rows.append(extra)
    header = ["model", "eager ms", "compiled ms", "raw JAX ms", "compiled/JAX"]
    if torch_device is not None:
        header += ["PyTorch ms", "PyTorch/compiled", "eager/PyTorch"]
    how = "waiting for every step's loss" if args.sync_every_step else \
        "steps back to back, one wait per timed block"
    print(f"JAX {jax.__version__} on {jax_device.device_kind}; ms per training step ({how})")
    table(rows, header)
    print()
    header = ["model", "compiled: first 2 steps s", "raw JAX s", "ratio"]
    if all(len(r) > 4 for r in compile_rows):
        header += ["compiled MiB", "raw JAX MiB", "ratio"]
    table([r[:len(header)] for r in compile_rows], header)


if __name__ == "__main__":
    main()

"""Shared timing helpers for the benchmarks: best-of-repeats mean time per call."""
import time


def per_call(fn, *, number=200, repeat=7, sync=None):
    """Seconds per call of `fn()`: the best of `repeat` runs of `number` calls each.

    `sync(result)` waits for asynchronous work (JAX dispatch) to finish inside the timing.
    """
    result = fn()
    if sync:
        sync(result)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(number):
            result = fn()
        if sync:
            sync(result)
        best = min(best, (time.perf_counter() - start) / number)
    return best


def interleaved(fns, repeat, warmup=2, pause=0.3):
    """Best seconds per call of each `(fn, number)` or `(fn, number, sync)`, their repeats
    taken in turn.

    Without `sync`, each `fn` must wait for its own result (call `.item()`,
    `block_until_ready`, ...). With it, the `number` calls run back to back and
    `sync(last result)` waits once at the end: a training loop that does not read the loss
    every step, where JAX's asynchronous dispatch overlaps Python with the previous step.

    On a shared machine the load drifts over a run; alternating the contenders' repeats
    exposes them to the same load, so the ratios between them stay meaningful.

    Each timed block starts after `pause` idle seconds: thread pools (PyTorch's OpenMP workers
    above all) keep spinning for a while after their last task, and without the pause they
    take a core from whichever contender runs next (measured: 1.6x on a 2-core machine)."""
    fns = [entry if len(entry) == 3 else (*entry, None) for entry in fns]
    for fn, _, sync in fns:
        for _ in range(warmup):  # a compiled step traces twice: before and after optimizer state
            result = fn()
            if sync:
                sync(result)
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, (fn, number, sync) in enumerate(fns):
            time.sleep(pause)
            start = time.perf_counter()
            for _ in range(number):
                result = fn()
            if sync:
                sync(result)
            best[i] = min(best[i], (time.perf_counter() - start) / number)
    return best


def jax_sync(x):
    import jax
    jax.block_until_ready(x)


def torchish_sync(x):
    import jax
    leaves = x if isinstance(x, (list, tuple)) else [x]
    jax.block_until_ready([t._data for t in leaves if hasattr(t, "_data")])


def table(rows, header):
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))

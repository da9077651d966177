"""Factories of evenly spaced values: arange / range, linspace / logspace (bit for bit with
ATen's kernels, traced ends included) and the window functions (hann, hamming, blackman,
bartlett, kaiser). The other factories are in `creation.py`, `tensor()` in `creation_data.py`."""
import builtins
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as dt
from .._warnings import user_stacklevel
from .._tensor import Tensor
from ..autograd import grad_mode
from .creation import _scalar, full, ones
from .creation_data import _leaf
from .arg_parser import REQUIRED
from .plans import number_arg
from . import unsigned_support


# ---- range factories, bit for bit --------------------------------------------------------
# PyTorch's CPU range kernels (aten/src/ATen/native/cpu/RangeFactoriesKernel.cpp) are built
# with FMA contraction, so `start + step * i` is one fused multiply-add. NumPy has no fma:
# `_fma` emulates it exactly enough with error-free transformations.

def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _fma64(a, b, c, xp=np):
    """fma(a, b, c) in float64 (Dekker's exact product, then a compensated sum); `xp=jnp`
    for traced operands (XLA keeps these operations as written)."""
    a, b, c = (xp.asarray(v, np.float64) for v in (a, b, c))
    with np.errstate(over="ignore", invalid="ignore"):
        p = a * b
        split = 134217729.0  # 2**27 + 1
        ah = a * split
        ah = ah - (ah - a)
        al = a - ah
        bh = b * split
        bh = bh - (bh - b)
        bl = b - bh
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s, t = _two_sum(p, c)
        r = s + (t + e)
    return xp.where(xp.isfinite(r), r, p + c)


def _fma32(a, b, c, xp=np):
    """fma(a, b, c) rounded to float32: the float64 product of two float32 is exact."""
    a, b, c = (xp.asarray(v, np.float32).astype(np.float64) for v in (a, b, c))
    s, t = _two_sum(a * b, c)
    # s is rounded once already; nudge it off an exact float32 tie before the second rounding
    tie = (s.astype(np.float32).astype(np.float64) != s) & (t != 0)
    s = xp.where(tie, xp.nextafter(s, s + t), s)
    return s.astype(np.float32)


def _arange_values(start, step, n, d):
    """`arange_kernel`: accumulate in double (float for half types), AVX2 vectors of 32 bytes
    computed as `base + j * step` from `base = start + step * idx`, the tail element-wise."""
    idx = np.arange(n, dtype=np.int64)
    if not (d.is_floating_point or d.is_complex):
        return (int(start) + idx * int(step)).astype(d.np)
    if d in (dt.float16, dt.bfloat16):
        fma, acc = _fma32, np.float32
    else:
        fma, acc = _fma64, np.float64
    start, step = acc(start), acc(step)
    width = 32 // d.itemsize
    vec_end = (n // (2 * width)) * (2 * width)
    out = np.empty(n, dtype=d.np)
    if vec_end:
        base = fma(step, idx[:vec_end:width].astype(acc), start).astype(d.np)
        j = np.arange(width, dtype=acc)
        block = fma(j[None, :], step, base.astype(acc)[:, None])
        out[:vec_end] = block.reshape(-1).astype(d.np)
    out[vec_end:] = fma(step, idx[vec_end:].astype(acc), start).astype(d.np)
    return out


def arange(start=REQUIRED, end=None, step=1, *, out=None, dtype=None, layout=None,
           device=None, requires_grad=False):
    if not ((start is REQUIRED or _is_number(start)) and (end is None or _is_number(end))
            and _is_number(step)):
        raise _arange_error(start, end, step)
    if start is REQUIRED:   # (`arange(end=3)` is PyTorch's `arange(Number end)` overload)
        if end is None:
            raise _no_end(out=out, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
        start, end = end, None
    dtype = dt.from_python_type(dtype)
    # (parsed as Numbers first: an int beyond uint64, a NumPy uint64 beyond int64 are errors)
    start, end, step = (None if v is None else number_arg(_scalar(v)) for v in (start, end, step))
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = dt.get_default_dtype() if is_float else dt.int64
    if dtype in dt.FEW_KERNELS:   # refused before any range check
        unsigned_support.refuse("arange", dtype)
    if dtype is dt.bool or dtype.is_complex:   # (PyTorch's CPU kernel has neither)
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{dtype._legacy}\'')
    integral = not (dtype.is_floating_point or dtype.is_complex)
    # PyTorch converts the scalars to the accumulation type first (int64 for integer dtypes)
    xs, xe, xst = ((int(v) for v in (start, end, step)) if integral else (start, end, step))
    if dtype in (dt.float16, dt.bfloat16):   # (half types accumulate in float)
        from .errors import scalar_overflow
        error = next(filter(None, (scalar_overflow(v, dt.float32) for v in (start, end, step))),
                     None)
        if error is not None:
            raise error
    if xst == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(xs) and math.isfinite(xe)):
        raise RuntimeError(f"unsupported range: {xs} -> {xe}")
    if not ((xst > 0 and xe >= xs) or (xst < 0 and xe <= xs)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is dt.int64:
        sgn = (xst > 0) - (xst < 0)
        q = xe - xs + xst - sgn
        n = abs(q) // abs(xst) * (1 if (q >= 0) == (xst > 0) else -1)  # C++ truncation
    else:
        n = math.ceil((float(end) - float(start)) / float(step))
        if n > float(2 ** 63 - 1):   # (PyTorch's size check, in double)
            raise RuntimeError("invalid size, possible overflow?")
    n = builtins.max(int(n), 0)
    # start and step convert to int64 (checked); the end only for a non-empty range (int64's
    # own size computation converts it first)
    if integral and not all(-2 ** 63 <= v < 2 ** 63 for v in (
            (xs, xe, xst) if n or dtype is dt.int64 else (xs, xst))):
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return _leaf(_arange_values(xs, xst, n, dtype), device, requires_grad)


def _no_end(**keywords):
    """PyTorch's parser on an arange call without bounds (the keywords it passed)."""
    from . import overloads
    given = {k: v for k, v in keywords.items()
             if v is not (False if k == "requires_grad" else None)}
    return overloads._refusal("arange", overloads.table("arange", False), [], given)


def _is_number(value):
    return value.__class__ is int or value.__class__ is float or isinstance(
        value, (Tensor, builtins.bool, builtins.complex, np.number, np.bool_))


def _arange_error(start, end, step):
    """PyTorch's TypeError for arange's bounds or step that are no number."""
    from .errors import _entry_name, _keywords_of_call
    from .overloads import parser_error
    values = {"start": start, "end": end, "step": step}
    if start is REQUIRED:   # (not passed)
        del values["start"]
    keywords = [k for k in _keywords_of_call(_entry_name()[1]) if k in values]
    passed = [n for n in values if n not in keywords]
    while passed and values[passed[-1]] is {"start": REQUIRED, "end": None, "step": 1}[
            passed[-1]]:
        passed.pop()   # (trailing defaults: not passed)
    return parser_error("arange", False, [values[n] for n in passed],
                        {k: values[k] for k in keywords}) or TypeError(
        "arange() received an invalid combination of arguments")


def range_(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=user_stacklevel())
    if end is None:
        start, end = 0, start
    d = dtype or dt.get_default_dtype()
    n = int(math.floor((end - start) / step)) + 1
    return _leaf((start + np.arange(n, dtype=np.float64) * step).astype(d.np), device,
                 requires_grad)


def _check_steps(steps):
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, builtins.bool):
        raise TypeError(f"linspace(): argument 'steps' (position 3) must be int, not "
                        f"{type(steps).__name__}")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")


def _check_kernel_dtype(name, d, steps):
    # the CPU kernels have no bool (nor uint16/32/64) instance; 0 or 1 steps return before
    # reaching them
    if steps > 1 and d is dt.bool:
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'Bool\'')
    if steps > 1 and d in dt.FEW_KERNELS:
        unsigned_support.refuse(name, d)


def _check_0dim(name, start, end):
    dims = [x.ndim if isinstance(x, Tensor) else 0 for x in (start, end)]
    if any(dims):
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got "
                           f"start with {dims[0]} dimension(s) and end with {dims[1]} "
                           "dimension(s).")


def _traced_operand(x):
    return isinstance(x, Tensor) and isinstance(x._data, jax.core.Tracer)


def _traced_ends(start, end, dtype):
    """0-d tensor ends, one of them traced (a compiled call), as `dtype` arrays: PyTorch's
    tensor overload reads their values (steps stays a Python int)."""
    out = [v._data if isinstance(v, Tensor) else jnp.asarray(v) for v in (start, end)]
    return out if dtype is None else [v.astype(dtype) for v in out]


def _halves(steps):
    """Which positions count from `start` (the first half), and their distance from it or
    from `end`."""
    i = jnp.arange(steps)
    low = i < steps // 2
    return low, jnp.where(low, i, steps - i - 1)


def _divisor(xp, n, dtype):
    """`n` as a divisor of type `dtype`; under JAX hidden from XLA, which would otherwise
    turn the division by a constant into a (differently rounded) multiplication."""
    n = np.dtype(dtype).type(n)
    return n if xp is np else jax.lax.optimization_barrier(jnp.asarray(n))


def _linspace_values(xp, start, end, steps, d):
    """`linspace_kernel`'s values (steps >= 2) of 0-d `start`, `end` arrays: NumPy on the
    host, JAX for traced ends (a compiled call)."""
    i = xp.arange(steps, dtype=np.int64)
    half = steps // 2
    k = xp.where(i < half, i, steps - i - 1)
    if d.is_complex:
        s, e = start.astype(d.np), end.astype(d.np)
        step = (e - s) / _divisor(xp, steps - 1, d.np)
        # (NumPy computes `step * k` of an int64 `k` in complex128)
        s, e, step = (v.astype(np.complex128) for v in (s, e, step))
        return xp.where(i < half, s + step * k, e - step * k)
    if not d.is_floating_point:
        # integer dtypes: the scalars become integers first, the step is a double
        s, e = (v.astype(np.int64).astype(np.float64) for v in (start, end))
        step = (e - s) / _divisor(xp, steps - 1, np.float64)
        return xp.trunc(xp.where(i < half, _fma64(step, k, s, xp), _fma64(-step, k, e, xp)))
    w = np.float64 if d is dt.float64 else np.float32
    fma = _fma64 if d is dt.float64 else _fma32
    s, e = start.astype(d.np).astype(w), end.astype(d.np).astype(w)
    step = (e - s) / _divisor(xp, steps - 1, w)
    return xp.where(i < half, fma(step, k.astype(w), s, xp), fma(-step, k.astype(w), e, xp))


def _logspace_traced(start, end, steps, base, d):
    """`logspace` of traced ends (`logspace`'s formulas, in JAX)."""
    if steps == 1:
        s = _traced_ends(start, end, np.complex128 if d.is_complex else np.float64)[0]
        return jnp.power(base, s).astype(d.np).reshape(1)
    low, k = _halves(steps)
    if d.is_complex:
        s, e = _traced_ends(start, end, d.np)
        step = (e - s) / _divisor(jnp, steps - 1, d.np)
        return jnp.power(jnp.asarray(base, d.np), jnp.where(low, s + step * k, e - step * k))
    integral = not d.is_floating_point
    acc = np.float32 if integral else np.float64   # integer dtypes: a float base and step
    s, e = _traced_ends(start, end, np.int64 if integral else d.np)
    s, e = s.astype(d.np), e.astype(d.np)
    step = (e - s).astype(acc) / _divisor(jnp, steps - 1, acc)
    k = k.astype(acc)
    exps = jnp.where(low, s.astype(acc) + step * k, e.astype(acc) - step * k)
    # (in double, rounded once: XLA's float32 pow is off by an ulp where NumPy's is exact)
    values = jnp.power(np.float64(base), exps.astype(np.float64)).astype(acc)
    return (jnp.trunc(values) if integral else values).astype(d.np)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """`linspace_kernel`: from both ends, `start + step*i` / `end - step*(steps-1-i)` fused."""
    _check_0dim("linspace", start, end)
    if _traced_operand(start) or _traced_operand(end):
        d = dtype or (dt.default_complex() if any(
            isinstance(v, builtins.complex) or isinstance(v, Tensor) and v.dtype.is_complex
            for v in (start, end)) else dt.get_default_dtype())
        steps = _scalar(steps)
        _check_steps(steps)
        _check_kernel_dtype("linspace", d, steps)
        if steps == 0:
            return _leaf(jnp.zeros(0, d.np), device, requires_grad)
        s, e = _traced_ends(start, end, None)
        values = s.astype(d.np).reshape(1) if steps == 1 else \
            _linspace_values(jnp, s, e, steps, d).astype(d.np)
        return _leaf(values, device, requires_grad)
    start, end, steps = _scalar(start), _scalar(end), _scalar(steps)
    d = dtype or (dt.default_complex() if isinstance(start, builtins.complex) or
                  isinstance(end, builtins.complex) else dt.get_default_dtype())
    _check_steps(steps)
    _check_kernel_dtype("linspace", d, steps)
    if steps == 0:
        return _leaf(np.zeros(0, d.np), device, requires_grad)
    if steps == 1:
        return _leaf(np.array([start]).astype(d.np), device, requires_grad)
    values = _linspace_values(np, np.asarray(start), np.asarray(end), steps, d)
    return _leaf(np.asarray(values).astype(d.np), device, requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """`logspace_out` (compiled without FMA): `pow(base, start + step*i)` in double, with the
    endpoints in the dtype and the step a double."""
    _check_0dim("logspace", start, end)
    if _traced_operand(start) or _traced_operand(end):
        d = dtype or dt.get_default_dtype()
        steps = _scalar(steps)
        _check_steps(steps)
        _check_kernel_dtype("logspace", d, steps)
        values = _logspace_traced(start, end, steps, base, d) if steps else jnp.zeros(0, d.np)
        return _leaf(values, device, requires_grad)
    start, end, steps = _scalar(start), _scalar(end), _scalar(steps)
    d = dtype or dt.get_default_dtype()
    _check_steps(steps)
    _check_kernel_dtype("logspace", d, steps)
    if steps == 0:
        return _leaf(np.zeros(0, d.np), device, requires_grad)
    if steps == 1:
        return _leaf(np.array([math.pow(base, start)]).astype(d.np), device, requires_grad)
    i = np.arange(steps, dtype=np.int64)
    half = steps // 2
    if d.is_complex:
        w = d.np.type
        step = (w(end) - w(start)) / w(steps - 1)
        k = np.where(i < half, i, steps - i - 1).astype(d.np)
        exps = np.where(i < half, w(start) + step * k, w(end) - step * k)
        return _leaf(np.power(w(base), exps).astype(d.np), device, requires_grad)
    integral = not d.is_floating_point
    acc = np.float32 if integral else np.float64  # integer dtypes use a float base and step
    s = d.np.type(int(start) if integral else start)
    e = d.np.type(int(end) if integral else end)
    step = acc(float(e - s)) / acc(steps - 1)
    k = np.where(i < half, i, steps - i - 1).astype(acc)
    exps = np.where(i < half, acc(s) + step * k, acc(e) - step * k)
    if integral:
        with np.errstate(over="ignore"):
            values = np.power(acc(base), exps)
    else:  # libm's pow, as PyTorch (NumPy's own SIMD pow differs in the last bit)
        b = float(base)
        values = np.array([_pow(b, float(x)) for x in exps], dtype=np.float64)
    if integral:
        values = np.trunc(values)
    return _leaf(values.astype(d.np), device, requires_grad)


def _pow(b, x):
    try:
        return math.pow(b, x)
    except OverflowError:
        return math.inf
    except ValueError:
        return math.nan


# ---- window functions (ATen's SpectralOps formulas, in the window's dtype) ------------------

_OMITTED = object()   # an argument the call left out (PyTorch's overloads depend on it)

# ATen prints a rejected dtype through its TensorOptions, with C++ type names.
_CPP_DTYPE = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "uint16": "short unsigned int",
              "uint32": "unsigned int", "uint64": "long unsigned int"}


def _window(name, window_length, periodic, dtype, layout, device, requires_grad, fill):
    if isinstance(window_length, bool) or not isinstance(window_length, int):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    dtype = dt.get_default_dtype() if dtype is None else dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        cpp = _CPP_DTYPE.get(str(dtype).split(".")[-1], str(dtype))
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={cpp}"
                           ", device=cpu, layout=Strided (default), requires_grad=false "
                           "(default), pinned_memory=false, memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if dtype.is_complex and window_length > 1:  # ATen builds the window on arange
        kind = "ComplexFloat" if dtype == dt.complex64 else "ComplexDouble"
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{kind}\'')
    if window_length <= 1:
        out = ones(window_length, dtype=dtype, device=device)
    else:
        n = window_length + 1 if periodic else window_length
        with grad_mode.no_grad():
            out = fill(arange(n, dtype=dtype, device=device), n)
        if periodic:
            out = out[:-1].contiguous()
    return out.requires_grad_(requires_grad)


def hamming_window(window_length, periodic=_OMITTED, alpha=_OMITTED, beta=_OMITTED, *,
                   dtype=None, layout=None, device=None, requires_grad=False):
    if (alpha is not _OMITTED and periodic is _OMITTED) or (
            beta is not _OMITTED and alpha is _OMITTED):
        # PyTorch's overloads take alpha only after periodic and beta only after alpha: the
        # parser's TypeError (the omitted ones were keywords; periodic taken as positional)
        from .overloads import parser_error
        given = {k: v for k, v in (("alpha", alpha), ("beta", beta)) if v is not _OMITTED}
        raise parser_error("hamming_window", False, (window_length,) + (
            () if periodic is _OMITTED else (periodic,)), given)
    periodic = True if periodic is _OMITTED else periodic
    alpha = 0.54 if alpha is _OMITTED else alpha
    beta = 0.46 if beta is _OMITTED else beta
    return _window("hamming_window", window_length, periodic, dtype, layout, device,
                   requires_grad,
                   lambda w, n: w.mul_(math.pi * 2.0 / (n - 1)).cos_().mul_(-beta).add_(alpha))


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, layout, device,
                   requires_grad,
                   lambda w, n: w.mul_(math.pi * 2.0 / (n - 1)).cos_().mul_(-0.5).add_(0.5))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    def fill(w, n):
        w = w.mul_(math.pi / (n - 1))
        return w.mul(4).cos_().mul_(0.08) - w.mul(2).cos_().mul_(0.5) + 0.42
    return _window("blackman_window", window_length, periodic, dtype, layout, device,
                   requires_grad, fill)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    def fill(w, n):
        w = w.mul_(2.0 / (n - 1))
        half = ((n - 1) >> 1) + 1
        w.narrow(0, half, n - half).mul_(-1).add_(2)
        return w
    return _window("bartlett_window", window_length, periodic, dtype, layout, device,
                   requires_grad, fill)


def kaiser_window(window_length, periodic=_OMITTED, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False, pin_memory=False):
    if periodic is _OMITTED:
        if beta != 12.0 or type(beta) is not float:   # PyTorch takes beta only after periodic
            raise TypeError(
                "kaiser_window() received an invalid combination of arguments - got (int, "
                f"beta={type(beta).__name__}), but expected one of:\n"
                " * (int window_length, *, torch.dtype dtype = None, torch.layout layout = None, "
                "torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
                " * (int window_length, bool periodic, *, torch.dtype dtype = None, torch.layout "
                "layout = None, torch.device device = None, bool pin_memory = False, bool "
                "requires_grad = False)\n"
                " * (int window_length, bool periodic, float beta, *, torch.dtype dtype = None, "
                "torch.layout layout = None, torch.device device = None, bool pin_memory = False, "
                "bool requires_grad = False)\n")
        periodic = True
    beta = float(beta)

    def fill(w, n):
        # I0(beta * sqrt(|1 - ((k - a) / a)^2|)) / I0(beta), a = (n - 1) / 2; half types are
        # computed in float32 as ATen's opmath does, then rounded.
        out_dtype = w.dtype
        if out_dtype in (dt.float16, dt.bfloat16):
            w = w.float()
        alpha = (n - 1) / 2.0
        w = w.sub_(alpha).div_(alpha).pow_(2).neg_().add_(1).abs_().sqrt_().mul_(beta).i0_()
        return w.div_(full((), beta, dtype=w.dtype, device=w.device).i0()).to(out_dtype)
    return _window("kaiser_window", window_length, periodic, dtype, layout, device,
                   requires_grad, fill)


PLAIN = ["arange", "linspace", "logspace", "hann_window", "hamming_window", "blackman_window",
         "bartlett_window", "kaiser_window"]

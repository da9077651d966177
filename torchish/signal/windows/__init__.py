"""`torch.signal.windows`: SciPy-style window functions, written as PyTorch writes them (a
`linspace` of the scaled positions, then the window's formula), in float32 or float64."""
import math

import torchish as _t

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _check(name, M, dtype, layout):
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not _t.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_t.float32, _t.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")


def _trivial(M, dtype, device, requires_grad):
    # M == 0 is an empty window, M == 1 a single 1
    if M == 0:
        return _t.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    return _t.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=_t.strided,
                device=None, requires_grad=False):
    dtype = dtype or _t.get_default_dtype()
    _check("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:   # (M == 1 goes through the formula, as PyTorch's)
        return _trivial(M, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    k = _t.linspace(start=-center / tau, end=(-center + (M - 1)) / tau, steps=M, dtype=dtype,
                    device=device, requires_grad=requires_grad)
    return _t.exp(-_t.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=_t.strided, device=None, requires_grad=False):
    dtype = dtype or _t.get_default_dtype()
    _check("cosine", M, dtype, layout)
    if M == 0:   # (M == 1 goes through the formula, as PyTorch's)
        return _trivial(M, dtype, device, requires_grad)
    start = 0.5
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _t.linspace(start=start * constant, end=(start + (M - 1)) * constant, steps=M,
                    dtype=dtype, device=device, requires_grad=requires_grad)
    return _t.sin(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=_t.strided, device=None,
             requires_grad=False):
    dtype = dtype or _t.get_default_dtype()
    _check("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:   # (M == 1 goes through the formula, as PyTorch's)
        return _trivial(M, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = _t.linspace(start=start * constant, end=(start + (M - 1)) * constant, steps=M,
                    dtype=dtype, device=device, requires_grad=requires_grad)
    return _t.exp(-k ** 2)


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=_t.strided, device=None,
           requires_grad=False):
    dtype = dtype or _t.get_default_dtype()
    _check("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    beta = _t.tensor(beta, dtype=dtype, device=device)
    start = -beta
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = _t.minimum(beta, start + (M - 1) * constant)
    k = _t.linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return _t.i0(_t.sqrt(beta * beta - _t.pow(k, 2))) / _t.i0(beta)


def general_cosine(M, *, a, sym=True, dtype=None, layout=_t.strided, device=None,
                   requires_grad=False):
    dtype = dtype or _t.get_default_dtype()
    _check("general_cosine", M, dtype, layout)
    if a is None:
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = _t.linspace(start=0, end=(M - 1) * constant, steps=M, dtype=dtype, device=device,
                    requires_grad=requires_grad)
    a_i = _t.tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype)
    i = _t.arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device)
    return (a_i.unsqueeze(-1) * _t.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=_t.strided, device=None,
                    requires_grad=False):
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=_t.strided, device=None, requires_grad=False):
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=_t.strided, device=None, requires_grad=False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=_t.strided, device=None, requires_grad=False):
    dtype = dtype or _t.get_default_dtype()
    _check("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=_t.strided, device=None, requires_grad=False):
    dtype = dtype or _t.get_default_dtype()
    _check("bartlett", M, dtype, layout)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = _t.linspace(start=start, end=start + (M - 1) * constant, steps=M, dtype=dtype,
                    device=device, requires_grad=requires_grad)
    return 1 - _t.abs(k)


def nuttall(M, *, sym=True, dtype=None, layout=_t.strided, device=None, requires_grad=False):
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)

"""Discrete Fourier transforms (`torch.fft`): one op per transform kind, over `jnp.fft`.

Argument checks run on static shapes, so the ops trace. Integer inputs are promoted to the
default float dtype by `torchish.fft` before they get here (the registry's promotion kinds
have no "real -> complex" result). Gradients are the pullbacks of `jnp.fft`; each op's node
carries PyTorch's name (FftR2C / FftC2C / FftC2R). PyTorch's hfft and ihfft conjugate on the
tape (a ConjBackward0 node), so `torchish.fft` composes them from these ops and `conj`.
"""
import jax.numpy as jnp

from ..autograd.saved_tensors import ABSENT
from .registry import Promote, op

_NORMS = (None, "backward", "ortho", "forward")
# hfft is irfft of conj(input) with the scaling swapped: "backward" leaves the forward
# transform unscaled (its inverse, irfft, then divides by n), and so on
_SWAP = {None: "forward", "backward": "forward", "forward": "backward", "ortho": "ortho"}


def _check_norm(norm):
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm or "backward"


def _wrap(d, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -ndim <= d < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {d})")
    return d % ndim


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _one_dim(x, n, dim, c2r=False):
    """(n, axis) of a 1-D transform along `dim`; a complex-to-real transform's n defaults to
    2 * (size - 1), the others' to the size (left None), which must not be 0 either."""
    axis = _wrap(dim, x.ndim)
    if n is not None:
        return _check_n(n), axis
    if c2r:
        return _check_n(2 * (x.shape[axis] - 1)), axis
    _check_n(x.shape[axis])
    return None, axis


def _many_dims(x, s, dim):
    """(s with -1 filled in or None, axes) of an n-D transform, as PyTorch resolves them."""
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        axes = tuple(_wrap(d, x.ndim) for d in dims)
        if len(set(axes)) != len(axes):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(axes):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > x.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{x.ndim} dimensions.")
        axes = tuple(range(x.ndim - len(s), x.ndim))
    else:
        axes = tuple(range(x.ndim))
    if s is None:
        for a in axes:
            _check_n(x.shape[a])
        return None, axes
    return tuple(_check_n(x.shape[a] if n == -1 else n) for n, a in zip(s, axes)), axes


# PyTorch's fft_norm_mode of a transform's `norm`: 0 no scaling, 1 by 1/sqrt(n), 2 by 1/n
_NORM_MODES = {"backward": 0, "ortho": 1, "forward": 2}


def _saved(inverse=False, swap=False, many=False, onesided=False):
    """`grad_fn._saved_<name>` of a transform's FftR2C/FftC2C/FftC2R node: the dims it ran
    over, its normalization mode, `forward` (C2C) and `onesided` (R2C); a real input to a
    1-D complex transform runs as R2C, a complex one as C2C (`onesided` "c2c": always C2C,
    as fftn, which makes a real input complex first)."""
    def dims(input, dim, s=None, **_):
        if not many:
            return (_wrap(dim, input.ndim),)
        return _many_dims(input, s, dim)[1]

    def normalization(norm=None, **_):
        norm = _check_norm(norm)
        mode = _NORM_MODES[_SWAP[norm] if swap else norm]
        return 2 - mode if inverse else mode

    def forward(input, **_):
        c2c = onesided == "c2c" or onesided is not None and jnp.iscomplexobj(input)
        return not inverse if c2c else ABSENT

    def one_sided(input, **_):
        r2c = onesided not in (None, "c2c") and not jnp.iscomplexobj(input)
        return onesided if r2c else ABSENT
    return {"dim": dims, "normalization": normalization, "forward": forward,
            "onesided": one_sided, "norm": None, "n": None, "s": None}


def _r2c_saves(kinds):   # (FftR2CBackward0 keeps its real input)
    return () if kinds[0][0].is_complex else ("input",)


def _real_or_complex(real, complex_):
    def name(kinds, statics):
        return complex_ if kinds[0][0].is_complex else real
    return name


# ---- 1-D ---------------------------------------------------------------------------------

@op(promote=Promote.NONE, grad_fn=_real_or_complex("FftR2CBackward0", "FftC2CBackward0"),
    function=False, method=False, saved_as=_saved(), saves=_r2c_saves)
def fft_fft(input, n=None, dim=-1, norm=None):
    """torch.fft.fft: the 1-D discrete Fourier transform."""
    n, axis = _one_dim(input, n, dim)
    return jnp.fft.fft(input, n, axis, _check_norm(norm))


@op(promote=Promote.NONE, grad_fn=_real_or_complex("ConjBackward0", "FftC2CBackward0"),
    function=False, method=False, saved_as=_saved(inverse=True), saves=_r2c_saves)
def fft_ifft(input, n=None, dim=-1, norm=None):
    """torch.fft.ifft: the 1-D inverse discrete Fourier transform."""
    n, axis = _one_dim(input, n, dim)
    return jnp.fft.ifft(input, n, axis, _check_norm(norm))


@op(promote=Promote.NONE, grad_fn="FftR2CBackward0", function=False, method=False,
    saves=("input",), saved_as=_saved(onesided=True))
def fft_rfft(input, n=None, dim=-1, norm=None):
    """torch.fft.rfft: the 1-D transform of a real signal (the non-negative frequencies)."""
    n, axis = _one_dim(input, n, dim)
    return jnp.fft.rfft(input, n, axis, _check_norm(norm))


@op(promote=Promote.NONE, grad_fn="FftC2RBackward0", function=False, method=False, saves=(),
    saved_as=_saved(inverse=True, onesided=None))
def fft_irfft(input, n=None, dim=-1, norm=None):
    """torch.fft.irfft: the inverse of rfft (a real signal of n = 2 * (m - 1) by default)."""
    n, axis = _one_dim(input, n, dim, c2r=True)
    return jnp.fft.irfft(input, n, axis, _check_norm(norm))


@op(promote=Promote.NONE, grad_fn="FftC2RBackward0", function=False, method=False, saves=(),
    saved_as=_saved(inverse=True, swap=True, onesided=None))
def fft_hfft(input, n=None, dim=-1, norm=None):
    """hfft's complex-to-real step, on the conjugated input: irfft with hfft's scaling."""
    n, axis = _one_dim(input, n, dim, c2r=True)
    return jnp.fft.irfft(input, n, axis, _SWAP[_check_norm(norm)])


@op(promote=Promote.NONE, grad_fn="FftR2CBackward0", function=False, method=False,
    saves=("input",), saved_as=_saved(swap=True, onesided=True))
def fft_ihfft(input, n=None, dim=-1, norm=None):
    """ihfft's real-to-complex step, conjugated after: rfft with ihfft's scaling."""
    n, axis = _one_dim(input, n, dim)
    return jnp.fft.rfft(input, n, axis, _SWAP[_check_norm(norm)])


# ---- n-D (the 2-D variants are these with dim=(-2, -1)) ----------------------------------

@op(promote=Promote.NONE, grad_fn="FftC2CBackward0", function=False, method=False, saves=(),
    saved_as=_saved(many=True, onesided="c2c"))
def fft_fftn(input, s=None, dim=None, norm=None):
    """torch.fft.fftn: the n-D discrete Fourier transform over `dim` (all dims by default)."""
    s, axes = _many_dims(input, s, dim)
    return jnp.fft.fftn(input, s, axes, _check_norm(norm))


@op(promote=Promote.NONE, grad_fn="FftC2CBackward0", function=False, method=False, saves=(),
    saved_as=_saved(inverse=True, many=True, onesided="c2c"))
def fft_ifftn(input, s=None, dim=None, norm=None):
    """torch.fft.ifftn: the n-D inverse discrete Fourier transform."""
    s, axes = _many_dims(input, s, dim)
    return jnp.fft.ifftn(input, s, axes, _check_norm(norm))


@op(promote=Promote.NONE, grad_fn="FftR2CBackward0", function=False, method=False,
    saves=("input",), saved_as=_saved(many=True, onesided=True))
def fft_rfftn(input, s=None, dim=None, norm=None):
    """torch.fft.rfftn: the n-D transform of a real signal (last dim halved)."""
    s, axes = _many_dims(input, s, dim)
    return jnp.fft.rfftn(input, s, axes, _check_norm(norm))


def _c2r_shape(input, s, axes):
    sizes = [input.shape[a] for a in axes] if s is None else list(s)
    if s is None:
        sizes[-1] = 2 * (input.shape[axes[-1]] - 1)
    return tuple(_check_n(n) for n in sizes)


@op(promote=Promote.NONE, grad_fn="FftC2RBackward0", function=False, method=False, saves=(),
    saved_as=_saved(inverse=True, many=True, onesided=None))
def fft_irfftn(input, s=None, dim=None, norm=None):
    """torch.fft.irfftn: the inverse of rfftn."""
    s, axes = _many_dims(input, s, dim)
    return jnp.fft.irfftn(input, _c2r_shape(input, s, axes), axes, _check_norm(norm))

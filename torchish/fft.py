"""`torchish.fft`: PyTorch's torch.fft namespace over the registry's transforms
(`_ops/fft_ops.py`), plus the frequency helpers and shifts written on the public API."""
from . import _dtype as _dt
from ._ops import fft_ops as _f
from ._unsupported import module_getattr

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]


def _prepared(input, name=None, real_only=None):
    """`input` in a dtype the transforms take: integers and bool become the default float
    dtype (as PyTorch promotes them); half precision is refused, as by PyTorch's CPU FFT."""
    from . import get_default_dtype
    dtype = input.dtype
    if dtype in (_dt.float16, _dt.bfloat16):
        raise RuntimeError(f"Unsupported dtype {dtype._legacy}")
    if dtype.is_complex and real_only is not None:
        raise RuntimeError(real_only.format(name=name, dtype=dtype._legacy))
    if not (dtype.is_floating_point or dtype.is_complex):
        return input.to(get_default_dtype())
    return input


_REAL = "{name} expects a real input tensor, but got {dtype}"
_REAL_N = "{name} expects a real-valued input tensor, but got {dtype}"
_FLOATING = "Only supports floating-point dtypes, but found: {dtype}"


def fft(input, n=None, dim=-1, norm=None):
    return _f.fft_fft(_prepared(input), n, dim, norm)


def ifft(input, n=None, dim=-1, norm=None):
    return _f.fft_ifft(_prepared(input), n, dim, norm)


def rfft(input, n=None, dim=-1, norm=None):
    return _f.fft_rfft(_prepared(input, "rfft", _REAL), n, dim, norm)


def irfft(input, n=None, dim=-1, norm=None):
    return _f.fft_irfft(_prepared(input), n, dim, norm)


def hfft(input, n=None, dim=-1, norm=None):
    return _f.fft_hfft(_prepared(input), n, dim, norm)


def ihfft(input, n=None, dim=-1, norm=None):
    return _f.fft_ihfft(_prepared(input, "ihfft", _REAL), n, dim, norm)


def fftn(input, s=None, dim=None, norm=None):
    return _f.fft_fftn(_prepared(input), s, dim, norm)


def ifftn(input, s=None, dim=None, norm=None):
    return _f.fft_ifftn(_prepared(input), s, dim, norm)


def rfftn(input, s=None, dim=None, norm=None):
    return _f.fft_rfftn(_prepared(input, "rfftn", _REAL_N), s, dim, norm)


def irfftn(input, s=None, dim=None, norm=None):
    return _f.fft_irfftn(_prepared(input), s, dim, norm)


def hfftn(input, s=None, dim=None, norm=None):
    return _f.fft_hfftn(_prepared(input), s, dim, norm)


def ihfftn(input, s=None, dim=None, norm=None):
    return _f.fft_ihfftn(_prepared(input, "ihfftn", _FLOATING), s, dim, norm)


def fft2(input, s=None, dim=(-2, -1), norm=None):
    return fftn(input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    return ifftn(input, s, dim, norm)


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    return rfftn(input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    return irfftn(input, s, dim, norm)


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    return hfftn(input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    return ihfftn(input, s, dim, norm)


for _fn in (fft, ifft, rfft, irfft, hfft, ihfft, fftn, ifftn, rfftn, irfftn, hfftn, ihfftn):
    _fn.__doc__ = getattr(_f, "fft_" + _fn.__name__).__doc__


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.fft.fftfreq: the sample frequencies of an n-point transform, spacing d."""
    from . import arange, get_default_dtype
    result = arange(n, dtype=dtype or get_default_dtype(), device=device)
    # 0, 1, ..., then the negative frequencies (as PyTorch: in place, then one multiply)
    result[(n + 1) // 2:] -= n
    result = result * _step(n, d)
    return result.requires_grad_(requires_grad)


def _step(n, d):
    return 1.0 / (n * d) if n * d else float("inf")   # n = 0: an empty result anyway


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.fft.rfftfreq: the non-negative sample frequencies of an n-point rfft."""
    from . import arange, get_default_dtype
    result = arange(n // 2 + 1, dtype=dtype or get_default_dtype(), device=device)
    result = result * _step(n, d)
    return result.requires_grad_(requires_grad)


def _shift(input, dim, sign):
    from . import roll
    if dim is None:
        dims = tuple(range(input.ndim))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
    sizes = [input.shape[d] if -input.ndim <= d < input.ndim else 0 for d in dims]
    # an out-of-range dim reaches roll, which raises PyTorch's IndexError
    shifts = [n // 2 if sign > 0 else (n + 1) // 2 for n in sizes]
    return roll(input, shifts, dims)


def fftshift(input, dim=None):
    """torch.fft.fftshift: move the zero frequency to the centre (roll by n // 2)."""
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    """torch.fft.ifftshift: the inverse of fftshift (roll by (n + 1) // 2)."""
    return _shift(input, dim, -1)


__getattr__ = module_getattr(__name__)

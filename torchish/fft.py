"""`torchish.fft`: PyTorch's torch.fft namespace over the registry's transforms
(`_ops/fft_ops.py`), plus the frequency helpers and shifts written on the public API; and
`torch.stft` (exported at the top level as `stft`), framed signals through these transforms."""
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


_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known to "
              "cause spectral leakage. Other windows such as torch.hann_window or "
              "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
              "warning and use a rectangular window, explicitly set "
              "`window=torch.ones(n_fft, device=<device>)`.")


def _stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          pad_mode="reflect", normalized=False, onesided=None, return_complex=None):
    """torch.stft: the short-time Fourier transform, (batch,) freq x frames.

    As PyTorch: the signal is padded by n_fft // 2 on both sides (center), cut into frames of
    n_fft every hop_length, each multiplied by the window (zero-padded to n_fft in the middle),
    transformed (one-sided for real signals and windows), then transposed in place (node
    TransposeBackward1; a 1-D signal's batch dim squeezed in place after)."""
    import warnings
    import torchish
    from .nn import functional as F
    if return_complex is False:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.\nNote: you can still call "
                      "torch.view_as_real on the complex output to recover the old return "
                      "format.", UserWarning, stacklevel=2)
    if return_complex is None:
        if not (input.is_complex() or (window is not None and window.is_complex())):
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
        return_complex = True
    if center:
        dim = input.dim()
        extended = [1] * (3 - dim) + list(input.size())
        pad = n_fft // 2
        input = F.pad(input.view(extended), [pad, pad], pad_mode)
        input = input.view(input.shape[-dim:])
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if input.dim() not in (1, 2):
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {input.dim()}D tensor")
    one_d = input.dim() == 1
    if one_d:
        input = input.unsqueeze(0)
    length = input.size(1)
    if not 0 < n_fft <= length:
        raise RuntimeError(f"stft: expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got "
                           f"win_length={win_length}")
    if window is None:
        warnings.warn(_NO_WINDOW, UserWarning, stacklevel=2)
    elif window.dim() != 1 or window.size(0) != win_length:
        raise RuntimeError(f"stft: expected a 1D window tensor of size equal to "
                           f"win_length={win_length}, but got window with size "
                           f"{list(window.size())}")
    if window is not None and win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = F.pad(window, [left, n_fft - win_length - left])
    frames = input.unfold(-1, n_fft, hop_length)
    if window is not None:
        frames = frames.mul(window)
    complex_in = frames.is_complex()
    if onesided is None:
        onesided = not complex_in
    norm = "ortho" if normalized else "backward"
    if complex_in or not onesided:
        out = fft(frames, dim=-1, norm=norm)
    else:
        out = rfft(frames, dim=-1, norm=norm)
    out.transpose_(1, 2)
    if one_d:
        out.squeeze_(0)
    return out if return_complex else torchish.view_as_real(out)


__getattr__ = module_getattr(__name__)

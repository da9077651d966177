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


def _resized(input, sizes):
    """`input` cut or zero-padded to `sizes` ({axis: length}) as PyTorch's transforms resize
    it before transforming, on the tape: a slice per axis to shorten (SliceBackward0), then
    one constant pad (ConstantPadNdBackward0). Invalid lengths are left to the transform's
    own checks."""
    pad = [0] * (2 * input.ndim)
    for axis, n in sizes.items():
        size = input.shape[axis]
        if 0 < n < size:
            input = input.narrow(axis, 0, n)
        elif n > size:
            pad[2 * (input.ndim - 1 - axis) + 1] = n - size
    if any(pad):
        from .nn.functional import pad as constant_pad
        input = constant_pad(input, pad)
    return input


def _resized_1d(input, n, dim, c2r=False):
    if n is None:
        return input
    return _resized(input, {_f._wrap(dim, input.ndim): n // 2 + 1 if c2r else n})


def _resized_nd(input, s, dim, c2r=False):
    if s is None:
        return input
    s, axes = _f._many_dims(input, s, dim)   # (PyTorch's errors for a bad s or dim)
    sizes = dict(zip(axes, s))
    if c2r:   # (a complex-to-real transform's last dim holds n // 2 + 1 values)
        sizes[axes[-1]] = s[-1] // 2 + 1
    return _resized(input, sizes)


def _complex(input):
    """A real input of a complex-to-complex transform made complex first (ToCopyBackward0)."""
    if input.dtype.is_complex:
        return input
    return input.to(_dt.complex128 if input.dtype is _dt.float64 else _dt.complex64)


_REAL = "{name} expects a real input tensor, but got {dtype}"
_REAL_N = "{name} expects a real-valued input tensor, but got {dtype}"
_FLOATING = "Only supports floating-point dtypes, but found: {dtype}"


def fft(input, n=None, dim=-1, norm=None):
    return _f.fft_fft(_resized_1d(_prepared(input), n, dim), n, dim, norm)


def ifft(input, n=None, dim=-1, norm=None):
    input = _resized_1d(_prepared(input), n, dim)
    if input.is_complex():
        return _f.fft_ifft(input, n, dim, norm)
    # as PyTorch: a real input's inverse is the conjugate of its (full) forward transform,
    # with the inverse's scaling (FftR2CBackward0, then ConjBackward0)
    return _f.fft_fft(input, n, dim, _f._SWAP[_f._check_norm(norm)]).conj()


def rfft(input, n=None, dim=-1, norm=None):
    return _f.fft_rfft(_resized_1d(_prepared(input, "rfft", _REAL), n, dim), n, dim, norm)


def irfft(input, n=None, dim=-1, norm=None):
    return _f.fft_irfft(_resized_1d(_complex(_prepared(input)), n, dim, c2r=True), n, dim,
                        norm)


def hfft(input, n=None, dim=-1, norm=None):
    """torch.fft.hfft: the transform of a Hermitian-symmetric signal given by its first half
    (as PyTorch: the complex-to-real transform of its conjugate)."""
    input = _resized_1d(_complex(_prepared(input)), n, dim, c2r=True)
    return _f.fft_hfft(input.conj(), n, dim, norm)


def ihfft(input, n=None, dim=-1, norm=None):
    """torch.fft.ihfft: the inverse of hfft (the first half of a Hermitian spectrum): the
    conjugate of a real-to-complex transform."""
    input = _resized_1d(_prepared(input, "ihfft", _REAL), n, dim)
    return _f.fft_ihfft(input, n, dim, norm).conj()


def fftn(input, s=None, dim=None, norm=None):
    return _f.fft_fftn(_resized_nd(_complex(_prepared(input)), s, dim), s, dim, norm)


def ifftn(input, s=None, dim=None, norm=None):
    return _f.fft_ifftn(_resized_nd(_complex(_prepared(input)), s, dim), s, dim, norm)


def rfftn(input, s=None, dim=None, norm=None):
    return _f.fft_rfftn(_resized_nd(_prepared(input, "rfftn", _REAL_N), s, dim), s, dim, norm)


def irfftn(input, s=None, dim=None, norm=None):
    return _f.fft_irfftn(_resized_nd(_complex(_prepared(input)), s, dim, c2r=True), s, dim,
                         norm)


def _hermitian_axes(name, input, s, dim):
    """(the last dim's length or None, the dims) of an n-D Hermitian transform."""
    s, axes = _f._many_dims(input, s, dim)
    if not axes:
        raise RuntimeError(f"{name} must transform at least one axis")
    return (None if s is None else s[-1]), axes


def hfftn(input, s=None, dim=None, norm=None):
    """torch.fft.hfftn: the n-D transform of a Hermitian-symmetric signal (last dim halved);
    as PyTorch: a transform over the other dims, then hfft's conjugate and complex-to-real
    transform over the last."""
    input = _complex(_prepared(input))
    n, axes = _hermitian_axes("hfftn", input, s, dim)
    input = _resized_nd(input, s, dim, c2r=True)
    if len(axes) > 1:
        input = _f.fft_fftn(input, None, axes[:-1], norm)
    return _f.fft_hfft(input.conj(), n, axes[-1], norm)


def ihfftn(input, s=None, dim=None, norm=None):
    """torch.fft.ihfftn: the inverse of hfftn; as PyTorch: ihfft's real-to-complex transform
    over the last dim, conjugated (in place of a lazy conj when more dims follow), then an
    inverse transform over the other dims."""
    input = _prepared(input, "ihfftn", _FLOATING)
    _, axes = _hermitian_axes("ihfftn", input, s, dim)
    half = _f.fft_ihfft(_resized_nd(input, s, dim), None, axes[-1], norm)
    if len(axes) == 1:
        return half.conj()
    return _f.fft_ifftn(half.conj_physical(), None, axes[:-1], norm)


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


for _fn in (fft, ifft, rfft, irfft, fftn, ifftn, rfftn, irfftn):
    _fn.__doc__ = getattr(_f, "fft_" + _fn.__name__).__doc__


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.fft.fftfreq: the sample frequencies of an n-point transform, spacing d."""
    result = _freq_range("fftfreq", n, dtype, device)
    # 0, 1, ..., then the negative frequencies (as PyTorch: in place, then one multiply)
    result[(n + 1) // 2:] -= n
    result = result * _step(n, d)
    return result.requires_grad_(requires_grad)


def _freq_range(name, size, dtype, device):
    """arange(size) for fftfreq / rfftfreq, with PyTorch's checks in its order: the result is
    allocated (negative sizes refused) before its dtype is checked."""
    from . import arange, get_default_dtype
    if size < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {size}: [{size}]")
    dtype = dtype or get_default_dtype()
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    return arange(size, dtype=dtype, device=device)


def _step(n, d):
    return 1.0 / (n * d) if n * d else float("inf")   # n = 0: an empty result anyway


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.fft.rfftfreq: the non-negative sample frequencies of an n-point rfft."""
    # n / 2 + 1 in C's integer division (truncation): rfftfreq(-1) has one element
    half = -(-n // 2) if n < 0 else n // 2
    result = _freq_range("rfftfreq", half + 1, dtype, device)
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


# the dtypes whose type string is a legacy `torch.XTensor` class name
_LEGACY_TENSOR_NAMES = {"Float", "Double", "Half", "Byte", "Char", "Short", "Int", "Long"}


def _stft_type(t):
    # how PyTorch's stft error names a tensor's type (others by their backend type name)
    name = t.dtype._legacy
    return f"torch.{name}Tensor" if name in _LEGACY_TENSOR_NAMES else f"CPU{name}Type"


def _stft_call(input, n_fft, hop, win, window, normalized, onesided, return_complex):
    """The `stft(...) : ` prefix of PyTorch's stft shape errors."""
    opt = (lambda v: "None" if v is None else str(int(bool(v))))  # noqa: E731
    win_str = "None" if window is None else f"{_stft_type(window)}{{{list(window.shape)}}}"
    return (f"stft({_stft_type(input)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={win_str}, normalized={int(bool(normalized))}, "
            f"onesided={opt(onesided)}, return_complex={opt(return_complex)}, "
            f"align_to_window=None) : ")


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
    if center:
        dim = input.dim()
        extended = [1] * (3 - dim) + list(input.size())
        pad = n_fft // 2
        input = F.pad(input.view(extended), [pad, pad], pad_mode)
        input = input.view(input.shape[-dim:])
    # PyTorch's kernel order: the window warning, the return_complex check and warning, then
    # the shape checks, whose messages start with the call's arguments
    if window is None:
        warnings.warn(_NO_WINDOW, UserWarning, stacklevel=2)
    if return_complex is None:
        if not (input.is_complex() or (window is not None and window.is_complex())):
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
    elif not return_complex:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.\nNote: you can still call "
                      "torch.view_as_real on the complex output to recover the old return "
                      "format.", UserWarning, stacklevel=2)
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    def fail(msg):
        raise RuntimeError(_stft_call(input, n_fft, hop_length, win_length, window, normalized,
                                      onesided, return_complex) + msg)
    if not (input.is_floating_point() or input.is_complex()):   # (int16 PCM, say)
        fail("expected a tensor of floating point or complex values")
    if input.dim() not in (1, 2):
        fail("expected a 1D or 2D tensor")
    length = input.size(-1)
    if not 0 < n_fft <= length:
        fail(f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop_length}")
    if not 0 < win_length <= n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is not None and (window.dim() != 1 or window.size(0) != win_length):
        fail(f"expected a 1D window tensor of size equal to win_length={win_length}, but got "
             f"window with size {list(window.size())}")
    if return_complex is None:
        return_complex = True
    one_d = input.dim() == 1
    if one_d:
        input = input.unsqueeze(0)
    if window is not None and win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = F.pad(window, [left, n_fft - win_length - left])
    frames = input.unfold(-1, n_fft, hop_length)
    if window is not None:
        frames = frames.mul(window)
    complex_in = frames.is_complex()
    if onesided is None:
        onesided = not complex_in
    elif onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    norm = "ortho" if normalized else "backward"
    if complex_in or not onesided:
        out = fft(frames, dim=-1, norm=norm)
    else:
        out = rfft(frames, dim=-1, norm=norm)
    out.transpose_(1, 2)
    if one_d:
        out.squeeze_(0)
    return out if return_complex else torchish.view_as_real(out)


_NO_WINDOW_ISTFT = ("A window was not provided. A rectangular window will be applied.Please "
                    "provide the same window used by stft to make the inversion lossless.To "
                    "suppress this warning and use a rectangular window, explicitly set "
                    "`window=torch.ones(n_fft, device=<device>)`.")


def _istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
           normalized=False, onesided=None, length=None, return_complex=False):
    """torch.istft: the inverse of `stft`, by inverse transforms of the frames, the window
    applied again, overlap-add, and division by the overlap-added squared window.

    Errors name the call as PyTorch's do: its C++ signature with the arguments given, then the
    message (PyTorch reads the shapes of `view_as_real(input)`, whence its dimension counts)."""
    import warnings
    import torchish
    from .nn import functional as F
    if window is None:
        warnings.warn(_NO_WINDOW_ISTFT, UserWarning, stacklevel=2)
    hop_length = n_fft // 4 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    real_dim = input.dim() + 1
    for d in (-2, -3):
        if real_dim < -d:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-real_dim}, {real_dim - 1}], but got {d})")
    n_frames, fft_size = input.size(-1), input.size(-2)
    expected_len = n_fft + hop_length * (n_frames - 1)
    dev = "CUDA" if input.device.type == "cuda" else "CPU"
    win = "None" if window is None else (
        f"torch.{window.dtype._legacy}Tensor{{{list(window.shape)}}}")
    prefix = (f"istft({dev}{input.dtype._legacy}Type{list(input.shape)}, n_fft={n_fft}, "
              f"hop_length={hop_length}, win_length={win_length}, window={win}, "
              f"center={int(center)}, normalized={int(normalized)}, "
              f"onesided={'None' if onesided is None else int(onesided)}, "
              f"length={length}, return_complex={int(return_complex)}) ")

    def check(ok, message):
        if not ok:
            raise RuntimeError(f"{prefix}: {message}")
    check(real_dim in (3, 4), f"expected a tensor with 3 or 4 dimensions, but got {real_dim}")
    if onesided is None:
        onesided = fft_size != n_fft
    if onesided:
        check(n_fft // 2 + 1 == fft_size, "expected the frequency dimension (3rd to the last) of "
              "the input tensor to match n_fft / 2 + 1 when onesided=True, but got "
              f"{fft_size}")
    else:
        check(n_fft == fft_size, "expected the frequency dimension (3rd to the last) of the "
              f"input tensor to match n_fft when onesided=False, but got {fft_size}")
    check(0 < hop_length <= win_length, "expected 0 < hop_length <= win_length")
    check(0 < win_length <= n_fft, "expected 0 < win_length <= n_fft")
    if window is not None:
        check(window.dim() == 1 and window.size(0) == win_length,
              "Invalid window shape. window has to be 1D and length of `win_length`")
        window_tmp = window
    else:
        window_tmp = torchish.ones(win_length, dtype=input.real.dtype, device=input.device)
    if win_length != n_fft:
        left = (n_fft - win_length) // 2
        window_tmp = F.pad(window_tmp, [left, n_fft - win_length - left])
    one_signal = input.dim() == 2
    if one_signal:
        input = input.unsqueeze(0)
    input = input.transpose(1, 2)   # (batch, frames, frequencies)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = ifft(input, dim=-1, norm=norm)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            input = input[..., :n_fft // 2 + 1]
        frames = irfft(input, n=n_fft, dim=-1, norm=norm)
    frames = frames * window_tmp.view(1, 1, n_fft)
    # overlap-add: sample t of the signal sums every frame position f * hop + k == t
    where = (torchish.arange(n_frames, device=input.device).unsqueeze(1) * hop_length
             + torchish.arange(n_fft, device=input.device)).reshape(-1)
    batch = frames.size(0)
    y = frames.new_zeros(batch, expected_len).index_add(1, where, frames.reshape(batch, -1))
    envelope = window_tmp.pow(2)
    envelope = envelope.new_zeros(expected_len).index_add(0, where, envelope.repeat(n_frames))
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = -(n_fft // 2) if center else expected_len
    y = y[:, start:end]
    envelope = envelope[start:end]
    if bool((envelope.abs() < 1e-11).any()):
        raise RuntimeError(f"{prefix}window overlap add min: 1\n[ {dev}BoolType{{}} ]")
    y = y / envelope
    if one_signal:
        y = y.squeeze(0)
    if end > expected_len:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning, stacklevel=2)
        y = F.pad(y, [0, end - expected_len])
    return y


__getattr__ = module_getattr(__name__)

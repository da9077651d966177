"""`assert_close`: PyTorch's comparison rules and failure messages, on torchish tensors.

Inputs are matched pairwise (sequences by position, mappings by key); each leaf pair is
None/None, bool/bool, Python (or NumPy) numbers, or tensor-likes of one type. Values are
compared on the host with NumPy, in the promoted dtype, as `torch.isclose` does.
"""
import cmath
import collections.abc

import numpy as np

from .._tensor import Tensor
from .. import _dtype as dt

# dtype -> (rtol, atol); dtypes missing here compare exactly
_PRECISIONS = {
    dt.float16: (1e-3, 1e-5), dt.bfloat16: (1.6e-2, 1e-5), dt.float32: (1.3e-6, 1e-5),
    dt.float64: (1e-7, 1e-7), dt.complex64: (1.3e-6, 1e-5), dt.complex128: (1e-7, 1e-7),
}
_NUMBER_DTYPES = {int: dt.int64, float: dt.float64, complex: dt.complex128}


class _Failure(Exception):
    """A failed check: the exception type to raise, its message, and where (keys/indices)."""

    def __init__(self, kind, msg, where=()):
        super().__init__(msg)
        self.kind, self.msg, self.where = kind, msg, where

    def to_error(self, msg=None):
        if isinstance(msg, str):
            return self.kind(msg)
        text = self.msg
        if self.where:
            text += "\n\nThe failure occurred for item " + "".join(
                str([item]) for item in self.where)
        return self.kind(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    pass


def default_tolerances(*dtypes, precisions=None):
    precisions = precisions or _PRECISIONS
    rtols, atols = zip(*[precisions.get(d, (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _tolerances(*dtypes, rtol, atol, where, precisions=None):
    if (rtol is None) != (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or "
                                   f"omitted, but got no {'rtol' if rtol is None else 'atol'}.",
                       where)
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*dtypes, precisions=precisions)


def _mismatch_msg(identifier, default, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx,
                  rtol):
    equality = rtol == 0 and atol == 0

    def line(kind, diff, idx, tol):
        text = (f"{kind.title()} difference: {diff}" if idx is None
                else f"Greatest {kind} difference: {diff} at index {idx}")
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"

    if identifier is None:
        identifier = default
    elif callable(identifier):
        identifier = identifier(default)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += extra.strip() + "\n"
    msg += line("absolute", abs_diff, abs_idx, atol)
    msg += line("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg(None, "Scalars", f"Expected {expected} but got {actual}.",
                         abs_diff, None, atol, rel_diff, None, rtol)


# ---- leaf pairs --------------------------------------------------------------------------

def _none_pair(actual, expected, where, **_):
    if actual is not None and expected is not None:
        raise _Unsupported
    if not (actual is None and expected is None):
        raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", where)


def _bool_pair(actual, expected, where, **_):
    if not all(isinstance(v, (bool, np.bool_)) for v in (actual, expected)):
        raise _Unsupported
    actual, expected = bool(actual), bool(expected)
    if actual is not expected:
        raise _Failure(AssertionError, f"Booleans mismatch: {actual} is not {expected}", where)


def _number_pair(actual, expected, where, *, rtol, atol, equal_nan, check_dtype, **_):
    kinds = (int, float, complex, np.number)
    if not all(isinstance(v, kinds) and not isinstance(v, bool) for v in (actual, expected)):
        raise _Unsupported
    actual, expected = (v.item() if isinstance(v, np.number) else v for v in (actual, expected))
    rtol, atol = _tolerances(*[_NUMBER_DTYPES[type(v)] for v in (actual, expected)],
                             rtol=rtol, atol=atol, where=where)
    if check_dtype and type(actual) is not type(expected):
        raise _Failure(AssertionError, f"The (d)types do not match: {type(actual)} != "
                                       f"{type(expected)}.", where)
    if actual == expected:
        return
    if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
        return
    diff = abs(actual - expected)
    if cmath.isfinite(diff) and diff <= atol + rtol * abs(expected):
        return
    raise _Failure(AssertionError, _scalar_msg(actual, expected, rtol, atol), where)


def _as_tensor(value):
    from .. import as_tensor
    return value if isinstance(value, Tensor) else as_tensor(value)


def _tensor_pair(actual, expected, where, *, allow_subclasses, rtol, atol, equal_nan,
                 check_device, check_dtype, check_layout, check_stride, **_):
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported
    if not allow_subclasses and type(actual) is not type(expected):
        raise _Unsupported
    try:
        actual, expected = _as_tensor(actual), _as_tensor(expected)
    except Exception:  # noqa: BLE001 - not tensor-like: another pair (or none) handles it
        raise _Unsupported from None
    rtol, atol = _tolerances(actual.dtype, expected.dtype, rtol=rtol, atol=atol, where=where)

    def mismatch(attribute, a, e):
        raise _Failure(AssertionError, f"The values for attribute '{attribute}' do not match: "
                                       f"{a} != {e}.", where)
    if actual.shape != expected.shape:
        mismatch("shape", actual.shape, expected.shape)
    if actual.layout != expected.layout:
        if check_layout:
            mismatch("layout", actual.layout, expected.layout)
    elif check_stride and actual.stride() != expected.stride():
        mismatch("stride()", actual.stride(), expected.stride())
    if check_device and actual.device != expected.device:
        mismatch("device", actual.device, expected.device)
    if check_dtype and actual.dtype != expected.dtype:
        mismatch("dtype", actual.dtype, expected.dtype)
    if rtol < 0 or atol < 0:
        # torch.isclose refuses them; assert_close reports that as an unexpected exception
        options = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                       check_dtype=check_dtype, check_layout=check_layout,
                       check_stride=check_stride)
        raise RuntimeError(_unexpected("TensorLikePair", dict(
            id=where, actual=actual, expected=expected, **options)))
    common = dt.promote_types(actual.dtype, expected.dtype)
    a = np.asarray(actual.detach().to(common)._data)
    e = np.asarray(expected.detach().to(common)._data)
    matches = _isclose(a, e, rtol, atol, equal_nan)
    if matches.all():
        return
    if a.ndim == 0:
        raise _Failure(AssertionError, _scalar_msg(a.item(), e.item(), rtol, atol), where)
    raise _Failure(AssertionError, _tensor_msg(a, e, matches, rtol, atol), where)


def _unexpected(pair, fields):
    """PyTorch's message for an exception a comparison pair raised, showing the pair."""
    body = "\n".join([f"{pair}("] + [f"    {k}={v!s}," for k, v in fields.items()] + [")"])
    return (f"Comparing\n\n{body}\n\nresulted in the unexpected exception above. If you are "
            "a user and see this message during normal operation please file an issue at "
            "https://github.com/pytorch/pytorch/issues. If you are a developer and working on "
            "the comparison functions, please except the previous error and raise an "
            "expressive `ErrorMeta` instead.")


def _isclose(a, e, rtol, atol, equal_nan):
    """`torch.isclose` on NumPy arrays of one dtype."""
    if a.dtype == np.bool_ or (rtol == 0 and atol == 0):
        close = a == e
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(a - e)
            close = (a == e) | (np.isfinite(diff) & (
                diff <= atol + rtol * np.abs(e)))
    if equal_nan and a.dtype.kind in "fcV":
        close = close | (np.isnan(a) & np.isnan(e))
    return np.asarray(close)


def _tensor_msg(a, e, matches, rtol, atol):
    shape = matches.shape
    total = matches.size
    wrong = total - int(matches.sum())
    extra = f"Mismatched elements: {wrong} / {total} ({wrong / total:.1%})"
    a, e, matches = a.ravel(), e.ravel(), matches.ravel()
    if a.dtype.kind in "biu":
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(a - e)
        abs_diff[matches] = 0
        denom = np.abs(e)
        if abs_diff.dtype.kind in "iu":  # integer division gives the default float dtype
            float_np = dt.get_default_dtype().np
            rel_diff = abs_diff.astype(float_np) / denom.astype(float_np)
        else:
            rel_diff = abs_diff / denom
        rel_diff[matches] = 0
    abs_at, rel_at = _argmax(abs_diff), _argmax(rel_diff)

    def index(flat):
        return tuple(int(i) for i in np.unravel_index(flat, shape))
    return _mismatch_msg(None, "Tensor-likes", extra, abs_diff[abs_at].item(), index(abs_at),
                         atol, rel_diff[rel_at].item(), index(rel_at), rtol)


def _argmax(values):
    """torch.max's index: NaN wins (its first occurrence), else the first maximum."""
    nan = np.isnan(values) if values.dtype.kind in "fV" else np.zeros(values.shape, bool)
    return int(np.argmax(nan)) if nan.any() else int(np.argmax(values))


# ---- pairing -----------------------------------------------------------------------------

_PAIRS = (_none_pair, _bool_pair, _number_pair, _tensor_pair)


def _pairs(actual, expected, where, out):
    """Walk matching sequences/mappings; append (actual, expected, where) leaves to `out`."""
    seq = collections.abc.Sequence
    if isinstance(actual, seq) and isinstance(expected, seq) and not isinstance(
            actual, str) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, "The length of the sequences mismatch: "
                                           f"{len(actual)} != {len(expected)}", where)
        for i in range(len(actual)):
            _pairs(actual[i], expected[i], where + (i,), out)
        return
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        keys_a, keys_e = set(actual.keys()), set(expected.keys())
        if keys_a != keys_e:
            raise _Failure(AssertionError,
                           "The keys of the mappings do not match:\n"
                           f"Missing keys in the actual mapping: {sorted(keys_e - keys_a)}\n"
                           f"Additional keys in the actual mapping: {sorted(keys_a - keys_e)}",
                           where)
        try:
            keys = sorted(keys_a)
        except TypeError:
            keys = list(keys_a)
        for k in keys:
            _pairs(actual[k], expected[k], where + (k,), out)
        return
    out.append((actual, expected, where))


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """torch.testing.assert_close: raise AssertionError unless `actual` and `expected` are
    close (|actual - expected| <= atol + rtol * |expected| elementwise) and, for tensors,
    have the same shape, dtype, device and layout (per the `check_*` flags)."""
    __tracebackhide__ = True
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol,
                   equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                   check_layout=check_layout, check_stride=check_stride)
    leaves = []
    try:
        _pairs(actual, expected, (), leaves)
    except _Failure as failure:
        raise failure.to_error() from None
    failures = []
    for a, e, where in leaves:
        for pair in _PAIRS:
            try:
                pair(a, e, where, **options)
            except _Unsupported:
                continue
            except _Failure as failure:
                if failure.kind is not AssertionError:  # bad arguments: raised at once
                    raise failure.to_error() from None
                failures.append(failure)
            break
        else:
            raise TypeError(f"No comparison pair was able to handle inputs of type "
                            f"{_type_name(a)} and {_type_name(e)}.")
    if failures:
        raise failures[0].to_error(msg)


def _type_name(value):
    return "<class 'torch.Tensor'>" if type(value) is Tensor else str(type(value))


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated torch.testing.assert_allclose: assert_close with its older tolerances,
    values converted to tensors, dtypes not checked."""
    import warnings
    from .. import tensor
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning,
                  stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual.dtype, expected.dtype, precisions={
            dt.float16: (1e-3, 1e-3), dt.float32: (1e-4, 1e-5), dt.float64: (1e-5, 1e-8)})
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)

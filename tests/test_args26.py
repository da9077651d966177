"""Argument types of nn.functional's size arguments (sweep 26, ARGS26), differential against
real PyTorch: F.pad's `pad`, the adaptive pools' `output_size` (functions and modules) and
F.interpolate's `size` are read as PyTorch's parser reads an `int[]` - a float, a str, None
or (first) a bool is its TypeError, worded as PyTorch words it (positional or keyword,
first element or later, the upsample bindings' "invalid combination" for a scalar size
F.interpolate passes on unchecked), not a silently truncated size; and `Tensor.expand`
takes PyTorch's keyword-only `implicit` (a bool)."""
import numpy as np
import pytest

import torchish
from differential import same_printed

torch = pytest.importorskip("torch")

X3 = np.random.default_rng(0).standard_normal((1, 2, 6)).astype(np.float32)
X4 = np.random.default_rng(1).standard_normal((1, 2, 6, 6)).astype(np.float32)
X5 = np.random.default_rng(2).standard_normal((1, 2, 4, 4, 4)).astype(np.float32)


def _text(r):
    """A result as compared: a Tensor (a pool's first output) by shape and rounded values."""
    if isinstance(r, tuple) and r and isinstance(r[0], (torch.Tensor, torchish.Tensor)):
        r = r[0]
    if isinstance(r, (torch.Tensor, torchish.Tensor)):
        return f"{tuple(r.shape)} {np.round(r.detach().numpy(), 5).tolist()}"
    return repr(r)


def _same(fn, error):
    """fn(module, x3, x4, x5) under torch and torchish: the same result or error."""
    same_printed(lambda m: fn(m, m.tensor(X3), m.tensor(X4), m.tensor(X5)), torch, error, _text)


PAD = {
    "ints": (lambda F, x: F.pad(x, (1, 2)), False),
    "list": (lambda F, x: F.pad(x, [1, 0, 2, 1]), False),
    "later_bool": (lambda F, x: F.pad(x, (1, True)), False),
    "np_int": (lambda F, x: F.pad(x, (np.int64(1), 1)), False),
    "empty": (lambda F, x: F.pad(x, []), False),
    "float_later": (lambda F, x: F.pad(x, (1, 1.5)), True),
    "float_first": (lambda F, x: F.pad(x, (1.5, 1)), True),
    "keyword_later": (lambda F, x: F.pad(x, pad=(1, 1.5)), True),
    "keyword_first": (lambda F, x: F.pad(x, pad=(1.5, 1)), True),
    "bool_first": (lambda F, x: F.pad(x, (True, 1)), True),
    "reflect": (lambda F, x: F.pad(x, (1, 1.5), mode="reflect"), True),
    "str": (lambda F, x: F.pad(x, (1, "a")), True),
    "none": (lambda F, x: F.pad(x, (1, None)), True),
    "np_float": (lambda F, x: F.pad(x, (1, np.float64(1))), True),
    "int_scalar": (lambda F, x: F.pad(x, 1), True),
    "float_scalar": (lambda F, x: F.pad(x, pad=1.5), True),
    "range": (lambda F, x: F.pad(x, range(2)), True),
}


@pytest.mark.parametrize("case", sorted(PAD))
def test_pad_types(case):
    fn, error = PAD[case]
    _same(lambda m, x3, x4, x5: fn(m.nn.functional, x4), error)


POOL = {
    "avg1_ok": (lambda F, x3, x4, x5: F.adaptive_avg_pool1d(x3, (3,)), False),
    "avg1_np": (lambda F, x3, x4, x5: F.adaptive_avg_pool1d(x3, np.int64(2)), False),
    "avg1": (lambda F, x3, x4, x5: F.adaptive_avg_pool1d(x3, 2.5), True),
    "avg1_tuple": (lambda F, x3, x4, x5: F.adaptive_avg_pool1d(x3, (2.5,)), True),
    "avg1_kw": (lambda F, x3, x4, x5: F.adaptive_avg_pool1d(x3, output_size=2.5), True),
    "avg1_kw_tuple": (lambda F, x3, x4, x5: F.adaptive_avg_pool1d(x3, output_size=(2.5,)),
                      True),
    "avg1_bool": (lambda F, x3, x4, x5: F.adaptive_avg_pool1d(x3, True), True),
    "avg1_two": (lambda F, x3, x4, x5: F.adaptive_avg_pool1d(x3, (2, 2.5)), True),
    "avg1_none": (lambda F, x3, x4, x5: F.adaptive_avg_pool1d(x3, None), True),
    "avg2_ok": (lambda F, x3, x4, x5: F.adaptive_avg_pool2d(x4, (None, 3)), False),
    "avg2_later_bool": (lambda F, x3, x4, x5: F.adaptive_avg_pool2d(x4, (2, True)), False),
    "avg2_scalar": (lambda F, x3, x4, x5: F.adaptive_avg_pool2d(x4, 2.5), True),
    "avg2_tuple": (lambda F, x3, x4, x5: F.adaptive_avg_pool2d(x4, (2, 2.5)), True),
    "avg2_kw_first": (lambda F, x3, x4, x5: F.adaptive_avg_pool2d(x4, output_size=(2.5, 2)),
                      True),
    "avg2_none": (lambda F, x3, x4, x5: F.adaptive_avg_pool2d(x4, (None, 2.5)), True),
    "avg2_bool": (lambda F, x3, x4, x5: F.adaptive_avg_pool2d(x4, True), True),
    "avg2_str": (lambda F, x3, x4, x5: F.adaptive_avg_pool2d(x4, "ab"), True),
    "avg2_np": (lambda F, x3, x4, x5: F.adaptive_avg_pool2d(x4, np.int64(2)), True),
    "avg3_tuple": (lambda F, x3, x4, x5: F.adaptive_avg_pool3d(x5, (2, 2, 2.0)), True),
    "avg3_scalar": (lambda F, x3, x4, x5: F.adaptive_avg_pool3d(x5, 2.0), True),
    "max1": (lambda F, x3, x4, x5: F.adaptive_max_pool1d(x3, 2.5), True),
    "max1_kw": (lambda F, x3, x4, x5: F.adaptive_max_pool1d(x3, output_size=(2.5,)), True),
    "max1_indices": (lambda F, x3, x4, x5: F.adaptive_max_pool1d(x3, 2.5, True), True),
    "max2": (lambda F, x3, x4, x5: F.adaptive_max_pool2d(x4, (2, 2.5)), True),
    "max2_kw_scalar": (lambda F, x3, x4, x5: F.adaptive_max_pool2d(x4, output_size=2.5), True),
    "max3": (lambda F, x3, x4, x5: F.adaptive_max_pool3d(x5, (2.0, 2, 2)), True),
    "max3_ok": (lambda F, x3, x4, x5: F.adaptive_max_pool3d(x5, (2, None, 3), True), False),
}


@pytest.mark.parametrize("case", sorted(POOL))
def test_adaptive_pool_output_size_types(case):
    fn, error = POOL[case]
    _same(lambda m, *xs: fn(m.nn.functional, *xs), error)


MODULES = {
    "avg1": (lambda nn, x3, x4, x5: nn.AdaptiveAvgPool1d(2.5)(x3), True),
    "avg2": (lambda nn, x3, x4, x5: nn.AdaptiveAvgPool2d((2, 2.5))(x4), True),
    "avg3_none": (lambda nn, x3, x4, x5: nn.AdaptiveAvgPool3d((2, 2.0, None))(x5), True),
    "max1": (lambda nn, x3, x4, x5: nn.AdaptiveMaxPool1d((2.5,))(x3), True),
    "max3": (lambda nn, x3, x4, x5: nn.AdaptiveMaxPool3d(2.0, True)(x5), True),
    "max2_ok": (lambda nn, x3, x4, x5: nn.AdaptiveMaxPool2d((3, 2))(x4), False),
}


@pytest.mark.parametrize("case", sorted(MODULES))
def test_adaptive_pool_modules(case):
    fn, error = MODULES[case]
    _same(lambda m, *xs: fn(m.nn, *xs), error)


INTERP = {
    "ok": (lambda F, x3, x4, x5: F.interpolate(x4, size=(3, 4)), False),
    "later_bool": (lambda F, x3, x4, x5: F.interpolate(x4, size=(2, True)), False),
    "np_ints": (lambda F, x3, x4, x5: F.interpolate(x4, size=(np.int64(3), 2)), False),
    "tuple": (lambda F, x3, x4, x5: F.interpolate(x4, size=(2, 2.5)), True),
    "tuple_bilinear": (lambda F, x3, x4, x5: F.interpolate(x4, (2, 2.5), mode="bilinear"),
                       True),
    "scalar_nearest": (lambda F, x3, x4, x5: F.interpolate(x4, size=2.5), True),
    "scalar_nearest1d": (lambda F, x3, x4, x5: F.interpolate(x3, size=2.5), True),
    "scalar_nearest3d": (lambda F, x3, x4, x5: F.interpolate(x5, size=2.5), True),
    "scalar_exact": (lambda F, x3, x4, x5: F.interpolate(x4, size=2.5, mode="nearest-exact"),
                     True),
    "scalar_linear": (lambda F, x3, x4, x5: F.interpolate(x3, size=2.5, mode="linear"), True),
    "scalar_bilinear": (lambda F, x3, x4, x5: F.interpolate(
        x4, size=2.5, mode="bilinear", align_corners=True), True),
    "scalar_aa": (lambda F, x3, x4, x5: F.interpolate(
        x4, size=2.5, mode="bicubic", antialias=True), True),
    "scalar_trilinear": (lambda F, x3, x4, x5: F.interpolate(x5, size=2.0, mode="trilinear"),
                         True),
    "scalar_area": (lambda F, x3, x4, x5: F.interpolate(x4, size=2.5, mode="area"), True),
    "scalar_area1d": (lambda F, x3, x4, x5: F.interpolate(x3, size=2.5, mode="area"), True),
    "scalar_bool": (lambda F, x3, x4, x5: F.interpolate(x4, size=True), True),
    "first_bool": (lambda F, x3, x4, x5: F.interpolate(x4, size=(True, 2), mode="bilinear"),
                   True),
    "np_float": (lambda F, x3, x4, x5: F.interpolate(x4, size=np.float64(2.0)), True),
}


@pytest.mark.parametrize("case", sorted(INTERP))
def test_interpolate_size_types(case):
    fn, error = INTERP[case]
    _same(lambda m, *xs: fn(m.nn.functional, *xs), error)


@pytest.mark.parametrize("case", ["module", "upsample", "bilinear"])
def test_upsample_size_types(case):
    fns = {"module": lambda m, x: m.nn.Upsample(size=(2, 2.5))(x),
           "upsample": lambda m, x: m.nn.functional.upsample(x, size=2.5),
           "bilinear": lambda m, x: m.nn.UpsamplingBilinear2d(size=2.5)(x)}
    _same(lambda m, x3, x4, x5: fns[case](m, x4), True)


EXPAND = {
    "false": (lambda t: t.expand(2, 3, implicit=False), False),
    "true_size": (lambda t: t.expand(size=(2, 3), implicit=True), False),
    "int": (lambda t: t.expand((2, 3), implicit=1), True),
    "none": (lambda t: t.expand(2, 3, implicit=None), True),
    "positional": (lambda t: t.expand((2, 3), True), True),
}


@pytest.mark.parametrize("case", sorted(EXPAND))
def test_expand_implicit(case):
    fn, error = EXPAND[case]
    _same(lambda m, *xs: fn(m.arange(3.0)), error)


def test_expand_implicit_graph():
    """`implicit` changes nothing but the call: the same node, values and gradient."""
    got = []
    for mod in (torch, torchish):
        t = mod.arange(3.0, requires_grad=True)
        y = t.expand(2, 3, implicit=True)
        (y * mod.tensor([[1.0], [2.0]])).sum().backward()
        got.append((type(y.grad_fn).__name__, y.tolist(), t.grad.tolist()))
    assert got[1] == got[0]


def test_compiled_sizes():
    """The checks read only Python values: traced inputs (torchish.compile) pass as before,
    and a bad size inside a compiled function is the same TypeError."""
    F = torchish.nn.functional

    def good(x):
        return (F.pad(x, (1, 1)).sum() + F.adaptive_avg_pool2d(x, (None, 3)).sum()
                + F.interpolate(x, size=(3, 2)).sum()
                + x[0, 0].expand(2, 6, 6, implicit=True).sum())

    x = torchish.tensor(X4)
    assert torchish.allclose(torchish.compile(good)(x), good(x))
    with pytest.raises(TypeError) as info:
        torchish.compile(lambda x: F.adaptive_max_pool2d(x, (2, 2.5)))(x)
    assert str(info.value) == ('adaptive_max_pool2d(): argument \'output_size\' failed to '
                               'unpack the object at pos 2 with error "type must be tuple of '
                               'ints,but got float"')

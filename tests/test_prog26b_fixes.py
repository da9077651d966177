"""Fixes found by the sweep-26 ported programs (PROG26B) and probes around them, differential
against real PyTorch: the convolutions' `int[]` geometry arguments (stride, padding,
output_padding, dilation; groups an `int`) typed as PyTorch's parser types them - a float or a
str is its TypeError (conv1d/2d/3d: "invalid combination", their padding may be a str), not a
silently truncated size or a ValueError from int(); and the conv modules' tuple helpers
(`torch.nn.modules.utils._pair` and co.) treating a str as the iterable it is, so
ConvTranspose2d(padding='same') shows PyTorch's repr and fails in forward as PyTorch's does."""
import numpy as np
import pytest

import torchish
from differential import same_printed

torch = pytest.importorskip("torch")

X = np.random.default_rng(0).standard_normal((1, 4, 5, 5)).astype(np.float32)
W_T = np.random.default_rng(1).standard_normal((4, 2, 3, 3)).astype(np.float32)   # transposed
W = np.random.default_rng(2).standard_normal((2, 4, 3, 3)).astype(np.float32)


def _shape(r):
    return repr(tuple(r.shape)) if isinstance(r, (torch.Tensor, torchish.Tensor)) else repr(r)


def _same(fn, error):
    same_printed(fn, torch, error, _shape)


def _x(mod):
    return mod.tensor(X)


CONV_T = {
    "ints": (lambda F, x, w: F.conv_transpose2d(x, w, None, 2, 1, 1), False),
    "lists": (lambda F, x, w: F.conv_transpose2d(x, w, stride=[2, 1], padding=(1,)), False),
    "np_int": (lambda F, x, w: F.conv_transpose2d(x, w, stride=np.int64(2)), False),
    "str_elements": (lambda F, x, w: F.conv_transpose2d(x, w, None, 1, ("s", "a")), True),
    "str_second": (lambda F, x, w: F.conv_transpose2d(x, w, None, 1, (1, "a")), True),
    "str_keyword": (lambda F, x, w: F.conv_transpose2d(x, w, padding=("s", "a")), True),
    "str_same": (lambda F, x, w: F.conv_transpose2d(x, w, None, 1, "same"), True),
    "float_stride": (lambda F, x, w: F.conv_transpose2d(x, w, None, 1.5), True),
    "float_in_tuple": (lambda F, x, w: F.conv_transpose2d(x, w, None, (1.5, 1)), True),
    "float_output_padding": (lambda F, x, w: F.conv_transpose2d(x, w, None, 2, 0, 1.0), True),
    "float_dilation": (lambda F, x, w: F.conv_transpose2d(x, w, dilation=(1, 2.0)), True),
    "float_groups": (lambda F, x, w: F.conv_transpose2d(x, w, None, 1, 0, 0, 2.0), True),
    "bool_stride": (lambda F, x, w: F.conv_transpose2d(x, w, None, True), True),
    "conv1d_t": (lambda F, x, w: F.conv_transpose1d(x[0], w[..., 0], None, 1, ("v",)), True),
}


@pytest.mark.parametrize("case", sorted(CONV_T))
def test_conv_transpose_geometry_types(case):
    fn, error = CONV_T[case]
    _same(lambda m: fn(m.nn.functional, _x(m), m.tensor(W_T)), error)


CONV = {
    "same": (lambda F, x, w: F.conv2d(x, w, None, 1, "same"), False),
    "valid": (lambda F, x, w: F.conv2d(x, w, padding="valid", dilation=(2, 1)), False),
    "list": (lambda F, x, w: F.conv2d(x, w, None, [2, 1], [1, 0]), False),
    "bad_str": (lambda F, x, w: F.conv2d(x, w, None, 1, "bad"), True),
    "str_tuple": (lambda F, x, w: F.conv2d(x, w, None, 1, ("a", "b")), True),
    "float_stride": (lambda F, x, w: F.conv2d(x, w, None, (1.5, 1)), True),
    "float_dilation": (lambda F, x, w: F.conv2d(x, w, None, 1, 0, 1.0), True),
    "float_groups": (lambda F, x, w: F.conv2d(x, w, groups=1.0), True),
    "conv1d_str_tuple": (lambda F, x, w: F.conv1d(x[0], w[..., 0], None, 1, ("v",)), True),
}


@pytest.mark.parametrize("case", sorted(CONV))
def test_conv_geometry_types(case):
    fn, error = CONV[case]
    _same(lambda m: fn(m.nn.functional, _x(m), m.tensor(W)), error)


@pytest.mark.parametrize("padding", ["same", "valid", "ab"])
@pytest.mark.parametrize("cls", ["ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"])
def test_conv_transpose_module_str_padding(cls, padding):
    def build(m):
        m.manual_seed(0)
        return getattr(m.nn, cls)(4, 2, 3, padding=padding)
    _same(lambda m: (repr(build(m)), build(m).padding), False)
    n = int(cls[-2])
    _same(lambda m: build(m)(m.zeros((1, 4) + (5,) * n)), True)


def test_tuple_helpers_take_str_as_iterable():
    from torch.nn.modules import utils as tu
    from torchish.nn.modules import utils as ou
    from torchish.nn.modules import conv, pooling
    for name in ("_single", "_pair", "_triple"):
        assert getattr(ou, name)("same") == getattr(tu, name)("same")
    assert conv._ntuple is ou._ntuple and pooling._pair is ou._pair


def test_conv_geometry_under_compile():
    """The binding types the arguments before the op is traced: torchish.compile agrees."""
    w = torchish.tensor(W_T)
    fn = torchish.compile(lambda x: torchish.nn.functional.conv_transpose2d(x, w, None, 2, 1))
    ref = torch.nn.functional.conv_transpose2d(torch.tensor(X), torch.tensor(W_T), None, 2, 1)
    np.testing.assert_allclose(fn(torchish.tensor(X)).detach().numpy(), ref.numpy(),
                               rtol=1e-4, atol=1e-5)
    bad = torchish.compile(lambda x: torchish.nn.functional.conv_transpose2d(x, w, None, 1.5))
    with pytest.raises(TypeError, match=r"argument 'stride' \(position 4\) must be tuple of "
                                        r"ints, not float"):
        bad(torchish.tensor(X))


X1 = np.random.default_rng(3).standard_normal((1, 2, 6, 6)).astype(np.float32)
POOL = {
    "mp_tuple_float": (lambda F, x: F.max_pool2d(x, (1, 1.5)), True),
    "mp_float": (lambda F, x: F.max_pool2d(x, 1.5), True),
    "mp_none_stride": (lambda F, x: F.max_pool2d(x, 2, None), False),
    "mp_keyword_later_float": (lambda F, x: F.max_pool2d(x, 2, stride=(1, 2.0)), True),
    "mp_float_padding": (lambda F, x: F.max_pool2d(x, 2, 2, 0.0), True),
    "mp_indices": (lambda F, x: F.max_pool2d(x, [2], [], 1, 1, True, True)[1], False),
    "mp_str": (lambda F, x: F.max_pool2d(x, "ab"), True),
    "mp_bool": (lambda F, x: F.max_pool2d(x, True), True),
    "ap_float": (lambda F, x: F.avg_pool2d(x, 2.0), True),
    "ap_later_float": (lambda F, x: F.avg_pool2d(x, (2, 2), None, (1, 1.0)), True),
    "ap_ok": (lambda F, x: F.avg_pool2d(x, 3, 2, 1, True, False, 2), False),
    "mp3_float": (lambda F, x: F.max_pool3d(x[None], 2.5), True),
    "ap3_later_float": (lambda F, x: F.avg_pool3d(x[None], (2, 2, 2.0)), True),
}


@pytest.mark.parametrize("case", sorted(POOL))
def test_pool_geometry_types(case):
    fn, error = POOL[case]
    _same(lambda m: fn(m.nn.functional, m.tensor(X1)), error)


@pytest.mark.parametrize("call", [
    lambda m, x: x.sum(dim=(0, 1.5)), lambda m, x: m.sum(x, dim=(0, 1.5)),
    lambda m, x: m.flip(x, dims=(0, 1.5)), lambda m, x: m.amax(x, dim=[0, "a"]),
    lambda m, x: x.sum(dim=(1.5, 0))])
def test_keyword_int_list_later_element(call):
    """An int[] passed by keyword whose later element is no int: the parser's "failed to
    unpack" message, as by position (the first element wrong: "must be tuple of ints")."""
    _same(lambda m: call(m, m.zeros(2, 3)), True)


X1D = np.random.default_rng(4).standard_normal((2, 4, 9)).astype(np.float32)
POOL1D = {
    "mp_float": lambda F, x: F.max_pool1d(x, 2.5),
    "mp_tuple_float": lambda F, x: F.max_pool1d(x, (2.5,)),
    "mp_float_stride": lambda F, x: F.max_pool1d(x, 2, 1.0),
    "mp_float_dilation": lambda F, x: F.max_pool1d(x, 3, 1, 1, 1.0),
    # (F.max_pool1d passes its arguments on by position: the positional message)
    "mp_keyword": lambda F, x: F.max_pool1d(x, kernel_size=2.5),
    "mp_keyword_tuple": lambda F, x: F.max_pool1d(x, kernel_size=(2.5,)),
    "mp_keyword_later": lambda F, x: F.max_pool1d(x, 2, stride=(1, 1.5)),
    "mp_indices": lambda F, x: F.max_pool1d(x, 2.5, return_indices=True),
    "mp_bool": lambda F, x: F.max_pool1d(x, True),
    "ap_float": lambda F, x: F.avg_pool1d(x, 2.0),
    "ap_float_padding": lambda F, x: F.avg_pool1d(x, 3, 2, 1.5),
    "ap_keyword_tuple": lambda F, x: F.avg_pool1d(x, (3,), padding=(1.0,)),
    "ap_str": lambda F, x: F.avg_pool1d(x, "ab"),
    "pixel_shuffle_float": lambda F, x: F.pixel_shuffle(x[None], 2.0),
    "pixel_unshuffle_float": lambda F, x: F.pixel_unshuffle(x[None], 1.0),
}


@pytest.mark.parametrize("case", sorted(POOL1D))
def test_pool1d_and_shuffle_argument_types(case):
    _same(lambda m: POOL1D[case](m.nn.functional, m.tensor(X1D)), True)


@pytest.mark.parametrize("call", [
    lambda F, x: F.max_pool1d(x, 2, None), lambda F, x: F.max_pool1d(x, [3], [2], [1]),
    lambda F, x: F.avg_pool1d(x, 3, None, 1), lambda F, x: F.max_pool1d(x, 2, stride=[]),
    lambda F, x: F.max_pool1d(x, np.int64(3), return_indices=True)[1],
    lambda F, x: F.pixel_shuffle(x.reshape(1, 4, 3, 6), 2)])
def test_pool1d_valid_arguments(call):
    _same(lambda m: call(m.nn.functional, m.tensor(X1D)), False)


@pytest.mark.parametrize("call", [
    lambda x: x.unfold(1, 2.0, 1), lambda x: x.unfold(1, 3, 2.0), lambda x: x.unfold(1.0, 3, 2),
    lambda x: x.unfold(1, size=3.0, step=3), lambda x: x.unfold(1, True, 1)])
def test_tensor_unfold_int_arguments(call):
    """Tensor.unfold's size and step are `int`s: a float is the parser's TypeError, not a
    silently truncated window (its dimension already was checked)."""
    _same(lambda m: call(m.arange(24.).reshape(2, 12)), True)


def test_tensor_unfold_valid():
    _same(lambda m: m.arange(24.).reshape(2, 12).unfold(1, size=3, step=3).tolist(), False)


X4 = np.random.default_rng(5).standard_normal((1, 4, 6, 6)).astype(np.float32)
C = np.random.default_rng(6).standard_normal((1, 16, 9)).astype(np.float32)
IM2COL = {
    "u_float": (lambda F, x, c: F.unfold(x, 2.5), True),
    "u_float_stride_kw": (lambda F, x, c: F.unfold(x, (2, 2), stride=1.0), True),
    "u_later_float": (lambda F, x, c: F.unfold(x, (2, 2.0)), True),
    "u_padding_later_float": (lambda F, x, c: F.unfold(x, 2, padding=(1, 1.0)), True),
    "u_bool": (lambda F, x, c: F.unfold(x, True), True),
    "u_three": (lambda F, x, c: F.unfold(x, (2, 2, 2)), True),
    "u_one": (lambda F, x, c: F.unfold(x, [2]), True),
    "u_dilation_three": (lambda F, x, c: F.unfold(x, 2, dilation=(1, 1, 1)), True),
    "u_ok": (lambda F, x, c: F.unfold(x, 3, 1, 1, 2), False),
    "u_ok_lists": (lambda F, x, c: F.unfold(x, [2, 3], dilation=(1, 1)), False),
    "f_float_kernel": (lambda F, x, c: F.fold(c, (4, 4), 2.0), True),
    "f_float_output": (lambda F, x, c: F.fold(c, (4.0, 4), 2), True),
    "f_output_three": (lambda F, x, c: F.fold(c, (4, 4, 4), 2), True),
    "f_output_one": (lambda F, x, c: F.fold(c, [4], 2), True),
    "f_stride_later_float": (lambda F, x, c: F.fold(c, [4, 4], (2, 2), stride=(1, 1.0)), True),
    "f_ok": (lambda F, x, c: F.fold(c, 4, 2), False),
}


@pytest.mark.parametrize("case", sorted(IM2COL))
def test_unfold_fold_arguments(case):
    """F.unfold/fold: each size `_pair`ed then typed as im2col/col2im's `int[2]` (a float is
    the parser's TypeError naming im2col/col2im; a length other than 2 ATen's message)."""
    fn, error = IM2COL[case]
    _same(lambda m: fn(m.nn.functional, m.tensor(X4), m.tensor(C)), error)

"""PyTorch's argument-parser wording for functions torchish writes in Python where PyTorch
binds them in C++ (`declare.parsed`: torch.narrow / Tensor.narrow, F.one_hot, the
`arg_parser.PARSED_FUNCTIONS`, the shape methods), for the torch.X forms of nn ops, and for
`view()` / `reshape()` without sizes: a missing argument, an unknown keyword, too many
positional arguments or a wrong type raise PyTorch's exception, word for word."""
import inspect
import warnings

import pytest

import torchish
from torchish._ops.arg_parser import PARSED_FUNCTIONS

torch = pytest.importorskip("torch")


def _outcome(T, code):
    """(exception type name, message), or ("ok", the result's shape)."""
    names = {"T": T, "F": T.nn.functional, "x": T.arange(6.0).reshape(2, 3),
             "t": T.tensor([0, 2, 1])}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = eval(code, names)
        except Exception as e:   # noqa: BLE001 (compared with PyTorch's)
            return type(e).__name__, str(e)
    return "ok", tuple(getattr(result, "shape", ()))


def _same(code):
    ours, ref = _outcome(torchish, code), _outcome(torch, code)
    assert ours == ref, (code, ours, ref)


# the caller inspection sees through `parsed`'s wrapper: the call's keywords, positions and
# whether it was the method
WRAPPED = [
    "T.narrow(x, True, 0, 1)", "x.narrow(True, 0, 1)", "T.narrow(x, 0, 0, length=1.5)",
    "x.narrow(0, 0, length=True)", "T.narrow(x, 0, 0, 1, 2)", "x.narrow(0, 0, 1, 2)",
    "x.narrow()", "T.narrow()", "T.narrow(x, 0, start=0, lenght=1)", "x.narrow(0, 0, 1)",
    "T.narrow(x, 1, 1, 2)", "F.one_hot(t, num_classes=3.0)", "F.one_hot(t, 3.0)",
    "F.one_hot()", "F.one_hot(t, 3, 4)", "F.one_hot(t, num_class=3)", "F.one_hot(t, 3)",
    "x.select()", "x.select(foo=1)", "x.select(0, 1, 2)", "x.select(True, 0)",
    "x.select(dim=True, index=0)", "T.select(x, True, 0)", "x.flatten(0, 1, 2)",
    "x.ravel(1)", "x.view_as()", "x.view_as(foo=1)", "x.view_as(x, x)", "x.view_as('a')",
    "x.view_as(other=2)", "x.reshape_as(None)", "x.expand_as(2.5)", "x.expand_as()",
    "x.broadcast_to()", "x.broadcast_to((2, 3), 1)", "x.as_strided((2,), (1,), 0, 1)",
    "x.view_as(x.t())", "x.expand_as(T.ones(4, 2, 3))", "x.chunk()", "x.chunk(foo=1)",
    "x.chunk(1, 2, 3, 4)", "x.chunk(2, 1)", "x.chunk(2, axis=1)", "x.hsplit()",
    "x.tensor_split()", "x.tensor_split(2, foo=1)", "x.split_with_sizes()",
    "x.split_with_sizes([1, 1], 0, 1)", "x.split_with_sizes([1, 1])", "x.unflatten()",
    "x.unflatten(foo=1)", "x.unflatten(1, 2, 3, 4, 5, 6, 7)", "x.unflatten(1, (3, 1))",
]


@pytest.mark.parametrize("code", WRAPPED)
def test_python_level_functions_and_methods(code):
    _same(code)


# PyTorch's wording where the call also gets an argument's type wrong, or it passes to Python's
# dataclass-like check first: kept out (see the report)
_DIFFERENT = {("arange", "()"), ("normal", "()"), ("asarray", "()"), ("asarray", "(foo=1)"),
              ("as_tensor", "(x, 1, 1, 1, 1, 1, 1, 1, 1, 1)"),
              ("asarray", "(x, 1, 1, 1, 1, 1, 1, 1, 1, 1)"),
              ("resize_as_", "(x, 1, 1, 1, 1, 1, 1, 1, 1, 1)")} | {
    (n, "(x, foo=1)") for n in ("cat", "concat", "concatenate", "column_stack", "dstack",
                                "hstack", "vstack", "row_stack", "full", "scalar_tensor",
                                "tril_indices", "triu_indices")}
BAD_CALLS = ["()", "(foo=1)", "(x, foo=1)", "(x, 1, 1, 1, 1, 1, 1, 1, 1, 1)"]
FUNCTIONS = [f"T.{n}{c}" for n in sorted(PARSED_FUNCTIONS) for c in BAD_CALLS
             if (n, c) not in _DIFFERENT]


@pytest.mark.parametrize("code", FUNCTIONS)
def test_parsed_functions(code):
    _same(code)


NN_NAMES = ["relu", "sigmoid", "tanh", "selu", "celu", "threshold", "hardshrink",
            "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "rms_norm", "layer_norm"]
NN = [f"T.{n}{c}" for n in NN_NAMES for c in BAD_CALLS[:3]] + [
    f"F.{n}{c}" for n in ("gelu", "softplus", "softshrink", "hardshrink", "sigmoid", "tanh")
    for c in BAD_CALLS[:2] + ["(x, 1, 1, 1, 1, 1, 1, 1, 1, 1)"] * (n != "gelu")] + [
    "T.relu(x, 1)", "x.relu(1)", "x.relu(foo=1)", "T.relu_(x, foo=1)", "x.sigmoid_(1)",
    "T.sigmoid(input=x, foo=1)", "T.selu(x, x)", "F.gelu(x, approximate='tanh')",
    "F.sigmoid(input=x)", "T.relu(x)", "T.layer_norm(x, (3,))", "F.softplus(x, 2, 10)"]


@pytest.mark.parametrize("code", NN)
def test_nn_ops_torch_forms(code):
    _same(code)


SHAPE_METHODS = [
    "x.view()", "x.view(foo=1)", "x.view('a')", "x.view(None)", "x.view(2.5)",
    "x.view(size=(3, 2))", "x.view(dtype=T.int32)", "x.view(T.int32)", "x.view(3, 2)",
    "x.reshape()", "T.reshape(x)", "x.reshape('a')", "x.reshape(None)", "x.reshape(2.5)",
    "x.reshape(shape=(3, 2))", "T.reshape(x, (6,))", "x.reshape(3, 2)", "x.reshape((3, 2))",
    "x.expand()", "x.expand(foo=1)", "x.expand('a')", "x.expand(size=(2, 2, 3))",
    "x.permute()", "x.permute(foo=1)", "x.permute('a')", "x.permute(None)",
    "x.repeat()", "x.repeat(foo=1)", "x.repeat('a')", "x.repeat(None)", "x.repeat(2.5)",
    "x.flatten(foo=1)", "x.flatten('a')", "x.flatten(None)", "x.flatten(2.5)",
    "x.flatten(1, 2, 3, 4, 5, 6, 7)", "x.transpose()", "x.transpose(foo=1)",
    "x.transpose(1, 2, 3)", "x.transpose(0, 'a')",
]


@pytest.mark.parametrize("code", SHAPE_METHODS)
def test_shape_methods_without_or_with_wrong_sizes(code):
    _same(code)


def test_wrappers_keep_signatures_and_identity():
    for fn in (torchish.narrow, torchish.Tensor.narrow, torchish.nn.functional.one_hot,
               torchish.cat, torchish.Tensor.select, torchish.relu, torchish.Tensor.relu,
               torchish.nn.functional.gelu):
        names = list(inspect.signature(fn).parameters)
        assert "_kw" not in names and "_more" not in names, fn
    assert list(inspect.signature(torchish.narrow).parameters) == [
        "input", "dim", "start", "length"]
    # F.sigmoid is Python's in PyTorch: Python's own wording, not the parser's
    assert torchish.nn.functional.sigmoid is not torchish.sigmoid

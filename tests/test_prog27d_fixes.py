"""Fixes found by the sweep-27 ported programs (PROG27D), differential against real PyTorch:
`torch.types`, the module of annotation aliases (`torch.types.Number`, `Device`, `_size`, ...)
that custom-operator code writes in its type hints: its aliases must be the same typing
constructs as PyTorch's (they were approximations: IntLikeType without SymInt, _size without
tuples, no _TensorOrOptionalTensors/FileLike/_symsize), with torchish's classes in place of
torch's, and `Number` must read as a `Scalar` in a custom op's inferred schema; and
`torch._check` and kin (`_check_value`, `_check_index`, `_check_type`, `_check_not_implemented`,
`_check_with`, `_check_is_size`, `_check_tensor_all`), the asserts of fake kernels and model
shape checks, were refused as unsupported: PyTorch's exception types and messages, checks of
the condition's type, the message callable read only on failure, and traced conditions; so were
`torch._assert` (torchvision-style model code) and `torch._C._log_api_usage_once` /
`torch._C._get_tracing_state`, and `torch._utils` (gradient bucketing's
`_flatten_dense_tensors` / `_unflatten_dense_tensors`, `_get_device_index`) and
`torch.functional` (`from torch.functional import einsum`) were missing modules."""
import types
import typing

import warnings

import pytest

import torchish
import torchish.types as ttypes
from differential import outcome

torch = pytest.importorskip("torch")
import torch.types  # noqa: E402


def _shape(obj):
    """A typing alias as nested tuples of names, so torch's and torchish's classes compare by
    name (torch.Size vs torchish's Size) while the typing structure must be identical."""
    if isinstance(obj, tuple):
        return tuple(_shape(o) for o in obj)
    origin = typing.get_origin(obj)
    if origin is types.UnionType:
        origin = typing.Union     # `X | Y` and `Union[X, Y]` are the same alias
    if origin is not None:
        return (getattr(origin, "__name__", repr(origin)), _shape(typing.get_args(obj)))
    if isinstance(obj, type):
        return obj.__name__
    return repr(obj)


ALIASES = ["Number", "_Number", "Device", "IntLikeType", "FloatLikeType", "BoolLikeType",
           "PySymType", "py_sym_types", "_size", "_symsize", "_TensorOrTensors",
           "_TensorOrOptionalTensors", "FileLike", "_bool", "_int", "_float", "_complex",
           "_str", "_bytes", "Sequence", "Union", "Any"]


@pytest.mark.parametrize("name", ALIASES)
def test_alias_matches_pytorch(name):
    assert _shape(getattr(ttypes, name)) == _shape(getattr(torch.types, name))


def test_class_aliases_are_torchish_classes():
    assert ttypes.Tensor is torchish.Tensor and ttypes.Size is torchish.Size
    assert ttypes._dtype is torchish.dtype and ttypes._device is torchish.device
    assert ttypes._layout is torchish.layout
    assert (torch.types._dtype, torch.types._device) == (torch.dtype, torch.device)


def test_number_hint_is_a_scalar_in_custom_op_schemas():
    def make(T):
        def scale(x: T.Tensor, m: T.types.Number = 2) -> T.Tensor:
            return x * m
        return scale
    ours = torchish.library.infer_schema(make(torchish), mutates_args=())
    theirs = torch.library.infer_schema(make(torch), mutates_args=())
    assert ours == theirs == "(Tensor x, Scalar m=2) -> Tensor"


def test_number_and_all():
    assert isinstance(2.5, ttypes._Number) and not isinstance("2", ttypes._Number)
    assert ttypes.__all__ == torch.types.__all__


def test_import_under_torch_name(tmp_path):
    import subprocess
    import sys
    script = tmp_path / "s.py"
    script.write_text("import torch.types\nfrom torch.types import Number, Device, _size\n"
                      "print(Device, _size, isinstance(1.5, Number))\n"
                      "print(torch.types.Size is torch.Size, torch.types.Tensor is torch.Tensor)\n")
    ours = subprocess.run([sys.executable, "-m", "torchish", str(script)], capture_output=True,
                          text=True, timeout=300)
    theirs = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=300)
    assert ours.returncode == 0, ours.stderr[-2000:]
    assert ours.stdout == theirs.stdout


CHECKS = [
    ("_check", (True,)), ("_check", (False,)), ("_check", (False, lambda: "rows differ")),
    ("_check", (False, "not callable")), ("_check", (True, "not callable")),
    ("_check", (1,)), ("_check", ("yes",)), ("_check", (False, lambda: 42)),
    ("_check_value", (False, lambda: "bad value")), ("_check_index", (False,)),
    ("_check_type", (False, lambda: "bad type")),
    ("_check_not_implemented", (False, lambda: "later")),
    ("_check_with", (ValueError, False, lambda: "vv")), ("_check_with", (int, False, None)),
    ("_check_with", (int, True, None)), ("_check_with", (UserWarning, False, None)),
    ("_check_with", (KeyError, 0, None)),
    ("_check_is_size", (3,)), ("_check_is_size", (-1,)), ("_check_is_size", (-1, lambda: "neg")),
]


@pytest.mark.parametrize("name,args", CHECKS, ids=[f"{n}{i}" for i, (n, _) in enumerate(CHECKS)])
def test_check_family(name, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = outcome(lambda: getattr(torch, name)(*args))
        ours = outcome(lambda: getattr(torchish, name)(*args))
    assert ours == theirs


def test_check_tensor_condition_and_is_size_max():
    for T in (torch, torchish):
        got = [outcome(lambda: T._check(T.tensor(True))),
               outcome(lambda: T._check_tensor_all(T.tensor([True, True]))),
               outcome(lambda: T._check_tensor_all(T.tensor([True, False]))),
               outcome(lambda: T._check_tensor_all(T.tensor([True, False]), lambda: "some")),
               outcome(lambda: T._check_tensor_all(T.tensor([1, 0]))),
               outcome(lambda: T._check_tensor_all(True)),
               outcome(lambda: T._check_tensor_all(T.ones(0, dtype=T.bool))),
               outcome(lambda: T._check_tensor_all_with(IndexError, T.tensor(False))),
               outcome(lambda: T._check_tensor_all_with(int, T.tensor(False)))]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got.append(outcome(lambda: T._check_is_size(5, lambda: "big", max=3)))
            got.append(outcome(lambda: T._check_is_size(2, max=3)))
        got.append([(w.category.__name__, str(w.message)) for w in caught])
        if T is torch:
            theirs = got
    assert got == theirs


def test_check_on_traced_values():
    @torchish.compile
    def f(x):
        torchish._check(x.shape[0] == 3, lambda: "three rows")
        torchish._check_tensor_all(x > -100)   # traced: nothing to check until run time
        return x * 2
    assert f(torchish.ones(3)).tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(RuntimeError, match="^three rows"):
        f(torchish.ones(2))


def test_assert_and_usage_logging():
    for T in (torch, torchish):
        got = [outcome(lambda: T._assert(True, "fine")),
               outcome(lambda: T._assert(False, "shape mismatch")),
               outcome(lambda: T._assert(T.tensor(False), "tensor cond")),
               outcome(lambda: T._assert(T.tensor([True, False]), "many")),
               outcome(lambda: T._assert(0, None)),
               outcome(lambda: T._C._log_api_usage_once("torchvision.models.x")),
               outcome(lambda: T._C._log_api_usage_once(3)),
               outcome(lambda: T._C._get_tracing_state())]
        if T is torch:
            theirs = got
    assert got == theirs

    @torchish.compile
    def f(x):
        torchish._assert(x.sum() > -1e9, "traced")   # no value while tracing: not checked
        torchish._assert(x.dim() == 1, "one dim")
        return x + 1
    assert f(torchish.zeros(2)).tolist() == [1.0, 1.0]
    with pytest.raises(AssertionError, match="^one dim"):
        f(torchish.zeros(2, 2))


def test_flatten_unflatten_dense_tensors():
    import torchish._utils as ours
    import torch._utils as theirs
    for T, U in ((torch, theirs), (torchish, ours)):
        a = T.ones(2, 3, requires_grad=True)
        b = T.arange(4.).view(2, 2)
        flat = U._flatten_dense_tensors([a, b])
        one = U._flatten_dense_tensors([b.t()])
        back = U._unflatten_dense_tensors(flat, [a, b])
        (back[0] * 2).sum().backward()
        got = [flat.tolist(), flat.grad_fn.name(), one.tolist(),
               U._flatten_dense_tensors([a]).grad_fn.name(), type(back).__name__,
               [tuple(t.shape) for t in back], back[1].tolist(), back[0].grad_fn.name(),
               back[0].grad_fn.next_functions[0][0].name(), back[1]._base is flat,
               a.grad.tolist(),
               str(U._flatten_dense_tensors([T.ones(2, dtype=T.int64), T.ones(1)]).dtype),
               outcome(lambda: U._flatten_dense_tensors([]))]
        for args in [("cpu",), ("cpu", True, True), (0,), ("cuda:1",), ("cuda", True),
                     ("cuda",), (None,), (None, True), ("cpu", True),
                     (T.device("cpu"), False, True), ("meta", False, True), (1.5,)]:
            got.append(outcome(lambda: U._get_device_index(*args)))
        if T is torch:
            expected = got
    assert got == expected


def test_torch_functional_module():
    import torch.functional as theirs
    import torchish.functional as ours
    assert ours.__all__ == theirs.__all__
    assert all(getattr(ours, n) is getattr(torchish, n) for n in ours.__all__)
    assert all(getattr(theirs, n) is getattr(torch, n) for n in theirs.__all__)
    got = [ours.einsum("ij,j->i", torchish.ones(2, 3), torchish.arange(3.)).tolist(),
           [t.tolist() for t in ours.split(torchish.arange(5), 2)]]
    assert got == [theirs.einsum("ij,j->i", torch.ones(2, 3), torch.arange(3.)).tolist(),
                   [t.tolist() for t in theirs.split(torch.arange(5), 2)]]

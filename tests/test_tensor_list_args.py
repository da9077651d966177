"""TensorList and int-list arguments of wrong types (a number or None among the tensors, a
Tensor where a list goes, a float among ints): PyTorch's parser's TypeError, word for word,
for the stacking functions, the `*tensors` functions, randint's overloads, tile and
split_with_sizes."""
import pytest

import torchish

torch = pytest.importorskip("torch")


def _error(lib, call):
    with pytest.raises(Exception) as info:
        call(lib)
    return type(info.value).__name__, str(info.value)


def _same_error(call):
    assert _error(torchish, call) == _error(torch, call)


LISTS = ["hstack", "vstack", "row_stack", "dstack", "column_stack", "cat", "stack"]
VARARGS = ["block_diag", "broadcast_tensors", "cartesian_prod", "meshgrid", "atleast_1d",
           "atleast_2d", "atleast_3d"]
BAD_LISTS = {
    "number": lambda f, v: f([v, 1]),
    "none": lambda f, v: f([v, None]),
    "tensor": lambda f, v: f(v),
    "int": lambda f, v: f(3),
}
BAD_VARARGS = {
    "number": lambda f, v: f(v, 2.0),
    "none": lambda f, v: f(v, None),
    "list": lambda f, v: f([v, 1]),
}


@pytest.mark.parametrize("case", list(BAD_LISTS))
@pytest.mark.parametrize("name", LISTS)
def test_stacking_functions_refuse_what_is_no_tensor_list(name, case):
    _same_error(lambda lib: BAD_LISTS[case](getattr(lib, name), lib.ones(3)))


@pytest.mark.parametrize("case", list(BAD_VARARGS))
@pytest.mark.parametrize("name", VARARGS)
def test_varargs_tensor_functions_refuse_a_non_tensor(name, case):
    if name == "meshgrid":   # (without indexing= it warns first)
        _same_error(lambda lib: BAD_VARARGS[case](
            lambda *a: lib.meshgrid(*a, indexing="ij"), lib.ones(3)))
        return
    _same_error(lambda lib: BAD_VARARGS[case](getattr(lib, name), lib.ones(3)))


def test_broadcast_tensors_takes_no_list():
    _same_error(lambda lib: lib.broadcast_tensors([lib.ones(3), lib.ones(3)]))


def test_valid_calls_still_work():
    v = torchish.ones(3)
    assert torchish.row_stack([v, v]).shape == (2, 3)
    assert torchish.column_stack([v, v]).shape == (3, 2)
    assert torchish.hstack((v, v)).shape == (6,)
    assert len(torchish.atleast_2d([v, v])) == 2
    assert torchish.block_diag(v, v).shape == (2, 6)


@pytest.mark.parametrize("args, kwargs", [
    (("a", (2,)), {}), ((0, "b", (2,)), {}), ((0, 5, "ab"), {}), ((0, 5, (2, "a")), {}),
    ((5, 2.5), {}), ((2.5, (2,)), {}), ((0, 5.0, (2,)), {}), ((None, (2,)), {}), ((5,), {}),
    ((3, (2,)), {"low": 1}),
])
def test_randint_argument_errors(args, kwargs):
    _same_error(lambda lib: lib.randint(*args, **kwargs))


@pytest.mark.parametrize("args, kwargs", [
    ((3, (2,)), {}), ((1, 4, (2,)), {}), ((), {"high": 3, "size": (2,)}),
    ((), {"low": 1, "high": 3, "size": (2,)}), ((3,), {"size": (2,)}), ((3, [2, 2]), {}),
])
def test_randint_valid_forms(args, kwargs):
    assert tuple(torchish.randint(*args, **kwargs).shape) == \
        tuple(torch.randint(*args, **kwargs).shape)


@pytest.mark.parametrize("call", [
    lambda lib, x: x.tile(1.5), lambda lib, x: x.tile((1, "a")), lambda lib, x: x.tile("a"),
    lambda lib, x: lib.tile(x, 2.0), lambda lib, x: lib.tile(x, (1.0, 2)),
    lambda lib, x: x.split_with_sizes("a"), lambda lib, x: x.split_with_sizes(3),
    lambda lib, x: lib.split_with_sizes(x, "a"), lambda lib, x: x.split_with_sizes([1, 2.0]),
])
def test_int_list_arguments(call):
    _same_error(lambda lib: call(lib, lib.ones(4, 3)))


def test_int_list_valid_calls():
    x = torchish.ones(4, 3)
    assert x.tile(2).shape == (4, 6) and x.tile(1, 2).shape == (4, 6)
    assert torchish.tile(x, (2,)).shape == (4, 6)
    parts = x.split_with_sizes([1, 3])
    assert [tuple(p.shape) for p in parts] == [(1, 3), (3, 3)]

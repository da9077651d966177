"""NumPy arrays as operands of Tensor operators, against real PyTorch: `Tensor.__eq__` (alone
among the comparisons) takes an array of numbers as a tensor; the other operators give up
(NotImplemented), so NumPy computes `t + a` / `t @ a` and hands the result back through
`Tensor.__array_wrap__` (a Tensor, NumPy's dtype, bool as uint8), or Python raises its
operator TypeError (`a @ t`, `t < a`, `a != t` compares identities)."""
import operator
import warnings

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

ARRAYS = {
    "f64": np.array([[1., 0.], [3., 5.]]),
    "f32": np.array([[1., 0.], [3., 5.]], dtype=np.float32),
    "i64": np.array([[1, 0], [3, 5]]),
    "i8": np.array([[1, 0], [3, 5]], dtype=np.int8),
    "bool": np.array([[True, False], [True, True]]),
    "c128": np.array([[1 + 0j, 0], [3, 5j]]),
    "f16": np.array([[1., 0.], [3., 5.]], dtype=np.float16),
    "0d": np.array(3.),
    "row": np.array([1., 4.]),
    "col": np.array([[1.], [2.]]),
    "bad": np.array([1., 2., 3.]),
    "str": np.array(["a", "b"]),
    "obj": np.array([1, None], dtype=object),
}

TENSORS = {"f32": ([[1., 2.], [3., 4.]], "float32"), "f64": ([[0.1, 2.], [3., 4.]], "float64"),
           "i64": ([[1, 2], [3, 4]], "int64"), "bool": ([[True, False], [False, True]], "bool"),
           "v": ([1., 2.], "float32")}

OPERATORS = {
    "t == a": operator.eq, "a == t": lambda t, a: a == t, "t != a": operator.ne,
    "a != t": lambda t, a: a != t, "t < a": operator.lt, "a >= t": lambda t, a: a >= t,
    "t + a": operator.add, "t * a": operator.mul, "a * t": lambda t, a: a * t,
    "t / a": operator.truediv, "a / t": lambda t, a: a / t, "t @ a": operator.matmul,
    "a @ t": lambda t, a: a @ t, "t.__eq__(a)": lambda t, a: t.__eq__(a),
    "t.__matmul__(a)": lambda t, a: t.__matmul__(a),
    "t.__rmatmul__(a)": lambda t, a: t.__rmatmul__(a),
}


def _outcome(T, tensor, array, op):
    data, dtype = TENSORS[tensor]
    t = T.tensor(data, dtype=getattr(T, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # NumPy's deprecation of PyTorch's __array_wrap__
        try:
            r = OPERATORS[op](t, ARRAYS[array])
        except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
            return type(e).__name__, str(e).split("\n")[0]
    if r is NotImplemented or isinstance(r, bool):
        return r
    # (repr: NaN results compare equal)
    return type(r).__name__, str(r.dtype), tuple(r.shape), repr(r.tolist())


@pytest.mark.parametrize("op", OPERATORS)
@pytest.mark.parametrize("array", ARRAYS)
@pytest.mark.parametrize("tensor", TENSORS)
def test_numpy_operand_matches_pytorch(tensor, array, op):
    assert _outcome(torchish, tensor, array, op) == _outcome(torch, tensor, array, op)


@pytest.mark.parametrize("program", [
    "T.tensor([1.]).matmul('x')", "T.matmul(T.tensor([1.]), 'x')",
    "T.matmul(T.tensor([1.]), other='x')", "T.matmul('x', T.tensor([1.]))",
    "T.tensor([1.]).matmul(np.ones(1))", "T.matmul(np.ones(1), T.tensor([1.]))",
    "T.tensor([1.]) @ 'x'", "'x' @ T.tensor([1.])", "T.tensor([1.]) @ [1.]",
])
def test_matmul_operand_errors(program):
    def run(T):
        try:
            return eval(program, {"T": T, "np": np}).tolist()  # noqa: S307 - fixed programs
        except TypeError as e:
            return str(e)
    assert run(torchish) == run(torch)


def test_inplace_matmul_with_array_rebinds():
    # no __imatmul__: `t @= a` is `t = t @ a`, a new float64 tensor from NumPy
    for T in (torchish, torch):
        t = T.tensor([[1., 2.], [3., 4.]])
        before = t
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t @= np.eye(2)
        assert t is not before and str(t.dtype) == "torch.float64"
        assert t.tolist() == [[1., 2.], [3., 4.]]

"""Small differences from PyTorch closed in sweep 12, each against real PyTorch: names PyTorch
lacks (torch.relu6, Tensor.hardtanh_), matrix_rank's tolerance overloads, which operand a
-0.0/0.0 tie returns (maximum, fmax, amax along a dim), a Python number a node saves
(`_saved_other`), and a grad-mode decorator on a class."""
import math
import warnings

import pytest

import torchish

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("owner,name", [
    ("torch", "relu6"), ("torch", "hardtanh"), ("torch", "hardtanh_"), ("torch", "relu6_"),
    ("Tensor", "relu6"), ("Tensor", "hardtanh"), ("Tensor", "relu6_"), ("Tensor", "hardtanh_"),
    ("F", "relu6"), ("F", "hardtanh"), ("F", "hardtanh_")])
def test_activation_names_as_in_pytorch(owner, name):
    def where(T):
        return {"torch": T, "Tensor": T.Tensor, "F": T.nn.functional}[owner]
    assert hasattr(where(torchish), name) == hasattr(where(torch), name)
    if not hasattr(torch, name) and owner == "torch":
        with pytest.raises(AttributeError) as ours:
            getattr(torchish, name)
        with pytest.raises(AttributeError) as theirs:
            getattr(torch, name)
        assert str(ours.value) == str(theirs.value)


def test_functional_relu6_hardtanh_still_work():
    def run(T):
        x = T.tensor([-2.0, 0.5, 7.0], requires_grad=True)
        a = T.nn.functional.relu6(x * 1, inplace=True)
        b = T.nn.functional.hardtanh_(x * 1, -1.0, 1.0)
        (a + b).sum().backward()
        return a.tolist(), b.tolist(), a.grad_fn.name(), b.grad_fn.name(), x.grad.tolist()
    assert run(torchish) == run(torch)


def _rank_calls(T):
    A = T.eye(3)
    return [lambda: T.linalg.matrix_rank(A, atol=T.tensor([0.1]), rtol=0.1),
            lambda: T.linalg.matrix_rank(A, atol=0.1, rtol=T.ones(2)),
            lambda: T.linalg.matrix_rank(A, tol=0.1, atol=0.1),
            lambda: T.linalg.matrix_rank(A, tol=T.tensor(0.1), rtol=T.tensor(0.1)),
            lambda: T.linalg.matrix_rank(A, 0.1, rtol=0.1),
            lambda: T.linalg.matrix_rank(A, hermitian=True, atol=T.ones(2), rtol=0.1),
            # accepted: a 0-d tensor beside a number, tensors together, one tol
            lambda: T.linalg.matrix_rank(A, atol=T.tensor(0.1), rtol=0.1),
            lambda: T.linalg.matrix_rank(A, atol=T.ones(2), rtol=T.ones(2)),
            lambda: T.linalg.matrix_rank(A, tol=T.tensor([0.5, 2.0])),
            lambda: T.linalg.matrix_rank(A, atol=0.5, rtol=0.1)]


def _outcome(call):
    try:
        return call().tolist()
    except TypeError as e:
        return type(e), str(e)


@pytest.mark.parametrize("i", range(10))
def test_matrix_rank_tolerance_overloads(i):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (PyTorch resizes its result for a batched tol)
        assert _outcome(_rank_calls(torchish)[i]) == _outcome(_rank_calls(torch)[i])


def _ties(T):
    nan = math.nan
    out = []
    for f in ("maximum", "minimum", "fmax", "fmin"):
        a = T.tensor([1.0, 2.0, -0.0, nan, 1.0, nan, 0.0], requires_grad=True)
        b = T.tensor([1.0, 3.0, 0.0, 1.0, nan, nan, -0.0], requires_grad=True)
        r = getattr(T, f)(a, b)
        r.backward(T.arange(1.0, 8.0))
        out.append((f, str(r.tolist()), T.signbit(r).tolist(), str(a.grad.tolist()),
                    str(b.grad.tolist())))
    x = T.tensor([[0.0, -0.0, 1.0], [-0.0, 0.0, 1.0]], requires_grad=True)
    for f in ("amax", "amin"):
        for dim in (0, 1, (-1,)):
            x.grad = None
            r = getattr(x, f)(dim)
            r.sum().backward()
            out.append((f, dim, r.tolist(), T.signbit(r).tolist(), x.grad.tolist()))
    values, indices = x.max(1)
    out.append(("max", T.signbit(values).tolist(), indices.tolist()))
    return out


def test_signed_zero_ties_keep_the_first_operand():
    assert _ties(torchish) == _ties(torch)


def _saved(T):
    x = T.ones(2, requires_grad=True)
    programs = {"mul_": lambda: (x * 1).mul_(2.5), "mul": lambda: x * 2.5,
                "rmul": lambda: 2.5 * x, "mul_int": lambda: x * 2, "add": lambda: x + 2.5,
                "add_": lambda: (x * 1).add_(2.5), "sub": lambda: x - 2.5,
                "rsub": lambda: 2.5 - x, "rsub_t": lambda: T.rsub(x, T.ones(2)),
                "div": lambda: x / 2.5, "div_": lambda: (x * 1).div_(2.5),
                "rdiv": lambda: 2.5 / x, "pow": lambda: x ** 2.5,
                "div_none": lambda: T.div(x, 2.5, rounding_mode=None),
                "div_trunc": lambda: x.div(T.ones(2), rounding_mode="trunc"),
                "div_t": lambda: T.div(x, T.ones(2))}
    out = {}
    for key, program in programs.items():
        node = program().grad_fn
        out[key] = node.name()
        for field in ("other", "self", "alpha", "exponent", "rounding_mode"):
            try:
                v = getattr(node, "_saved_" + field)
            except AttributeError:
                continue
            out[key, field] = (str(v.dtype), tuple(v.shape), v.tolist()) \
                if isinstance(v, T.Tensor) else v
    return out


def test_saved_python_number_operands():
    assert _saved(torchish) == _saved(torch)


def _decorated_class(T, mode):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")

        @getattr(T, mode)()
        class Probe:
            def __init__(self):
                self.inside = T.is_grad_enabled()

            def later(self):
                return T.is_grad_enabled()
        probe = Probe()
    return (type(Probe).__name__, probe.inside, probe.later(),
            [(w.category, str(w.message), w.filename) for w in caught])


@pytest.mark.parametrize("mode", ["no_grad", "enable_grad"])
def test_grad_mode_decorating_a_class(mode):
    assert _decorated_class(torchish, mode) == _decorated_class(torch, mode)

"""A bool operand promoted to a float type is 0.0 or 1.0, and 0.0 * inf is nan, as in PyTorch
(XLA's simplifier would turn `convert(mask) * x` into a select giving 0)."""
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

INF, NAN = float("inf"), float("nan")

PROGRAMS = {
    "inf * False": lambda T: T.tensor(INF) * T.tensor(False),
    "False * nan": lambda T: T.tensor(False) * T.tensor(NAN),
    "mask * inf": lambda T: T.tensor([False, True]) * INF,
    "mul mask vector": lambda T: T.mul(T.tensor([False, True]), T.tensor([INF, NAN])),
    "broadcast": lambda T: T.tensor([[INF], [2.0]]) * T.tensor([False, True]),
    "mul_": lambda T: T.tensor([INF, 1.0]).mul_(T.tensor([False, True])),
    "mask.float()": lambda T: T.tensor([INF, NAN]) * T.tensor([False, True]).float(),
    "compiled mask.float()": lambda T: T.compile(lambda x, m: x * m.to(x.dtype),
                                                 backend="eager")(
        T.tensor([INF, 1.0], dtype=T.float64), T.tensor([False, True])),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_bool_times_inf_is_nan(name):
    ours, theirs = PROGRAMS[name](torchish), PROGRAMS[name](torch)
    assert str(ours.dtype) == str(theirs.dtype)
    assert str(ours.tolist()) == str(theirs.tolist())

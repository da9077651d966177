"""The index checks of index_add / index_copy / index_fill / index_reduce / index_select / take
against real PyTorch: each op has its own accepted index dtypes, order of checks, exception
type and text (a float, narrow-int or bool index; a 2-d index; both at once)."""
import pytest

import torchish

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "int64", "int32", "int16", "uint8", "bool"]

PROGRAMS = [
    "x.index_add(0, i, src)", "x.clone().index_add_(0, i, src)", "T.index_add(x, 0, i, src)",
    "x.index_add(0, i, src.double())", "x.index_add(0, i2, src)",
    "x.index_copy(0, i, src)", "x.clone().index_copy_(0, i, src)", "x.index_copy(0, i2, src)",
    "x.index_copy(0, i, src.double())", "x.index_copy(0, i[:0], src[:0])",
    "x.index_fill(0, i, 2.)", "x.clone().index_fill_(0, i, 2.)", "x.index_fill(0, i2, 2.)",
    "x.index_fill(0, i, T.tensor(2.))", "x.index_fill(0, i[:0], 1.)",
    "T.tensor(1.).index_fill(0, i[:1], 1.)", "x.index_fill(5, i, 1.)",
    "x.index_select(0, i)", "T.index_select(x, 0, i)", "x.index_select(0, i2)",
    "x.index_reduce(0, i, src, 'prod')", "x.index_reduce(0, i2, src, 'prod')",
    "x.index_reduce(0, i, src.double(), 'prod')", "x.index_reduce(0, i, src, 'foo')",
    "x.take(i)", "x.take(i2)", "x.index_add(5, i, src)",
    "x.index_add(0, i * 3, src)", "x.take(i * 5)",
]


def _outcome(T, program, dtype):
    i = T.tensor([0, 1]).to(getattr(T, dtype))
    env = {"T": T, "x": T.ones(3), "src": T.ones(2), "i": i, "i2": i[None]}
    try:
        return eval(program, env).tolist()  # noqa: S307 - the fixed programs above
    except (RuntimeError, IndexError) as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_index_dtype_errors_match_pytorch(program, dtype):
    assert _outcome(torchish, program, dtype) == _outcome(torch, program, dtype)

"""Tensor.apply_ / map_ / map2_ (a Python function per element) against PyTorch: values,
dtypes, element types the function sees, views written through, errors."""
import pytest

import torchish

torch = pytest.importorskip("torch")


def _outcome(fn):
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return type(e).__name__, str(e)
    return out


CASES = {
    "int_sees_ints": lambda m: m.arange(6).reshape(2, 3).apply_(
        lambda v: len(type(v).__name__) + v).tolist(),
    "bool": lambda m: m.tensor([True, False]).apply_(lambda v: not v).tolist(),
    "float": lambda m: m.tensor([1.5, 2.5]).apply_(lambda v: v + 0.25).tolist(),
    "double_sees_floats": lambda m: m.zeros(2, dtype=m.float64).apply_(
        lambda v: float(type(v) is float)).tolist(),
    "int32_truncates": lambda m: m.zeros(2, dtype=m.int32).apply_(lambda v: 2.7).tolist(),
    "map_broadcasts": lambda m: m.zeros(2, 3).map_(m.tensor([1., 2., 3.]),
                                                   lambda a, b: a + b).tolist(),
    "map2_": lambda m: m.zeros(2).map2_(m.ones(2), m.ones(2) * 2,
                                        lambda a, b, c: a + b + c).tolist(),
    "map_bad_broadcast": lambda m: m.zeros(3).map_(m.zeros(2, 3), lambda a, b: a),
    "map_other_requires_grad": lambda m: m.zeros(3).map_(m.zeros(3, requires_grad=True),
                                                         lambda a, b: a),
    "apply_requires_grad": lambda m: m.zeros(3, requires_grad=True).apply_(lambda a: a),
    "map_other_dtype": lambda m: m.zeros(3).map_(m.zeros(3, dtype=m.int64), lambda a, b: a),
    "returns_str": lambda m: m.zeros(3).apply_(lambda a: "x"),
    "not_callable": lambda m: m.zeros(3).apply_(3),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_pytorch(name):
    assert _outcome(lambda: CASES[name](torchish)) == _outcome(lambda: CASES[name](torch))


@pytest.mark.parametrize("m", [torchish, torch], ids=["torchish", "torch"])
def test_writes_through_views_without_a_version_bump(m):
    base = m.zeros(4)
    base[1:3].apply_(lambda a: 7.0)
    t = m.zeros(2, 2).t()
    t.apply_(lambda a: 1.0)
    assert base.tolist() == [0.0, 7.0, 7.0, 0.0] and t.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    x = m.zeros(3)
    x.apply_(lambda a: a + 1)
    assert x._version == 0

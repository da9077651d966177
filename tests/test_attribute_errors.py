"""AttributeError texts against real PyTorch: its C++ classes are named as Python sees them
(`'torch.dtype' object has no attribute 'x'`), and their attributes are read-only."""
import pytest

import torchish

torch = pytest.importorskip("torch")

OBJECTS = {
    "dtype": "T.float32", "layout": "T.strided", "finfo": "T.finfo(T.float32)",
    "iinfo": "T.iinfo(T.int32)", "generator": "T.Generator()",
    "return_types": "T.max(T.ones(2), 0)", "tensor": "T.ones(1)",
    "grad_fn": "(T.ones(1, requires_grad=True) * 2).grad_fn",
    "size": "T.Size([1, 2])", "device": "T.device('cpu')", "memory_format": "T.contiguous_format",
}
SETTABLE = {"dtype": ["xyz", "is_floating_point", "itemsize"], "finfo": ["xyz", "eps", "bits"],
            "iinfo": ["xyz", "bits"], "layout": ["xyz"], "device": ["xyz", "type"],
            "size": ["xyz"]}


def _get(T, obj, attr):
    try:
        getattr(eval(OBJECTS[obj], {"T": T}), attr)  # noqa: S307 - the fixed programs above
    except AttributeError as e:
        return str(e)


def _set(T, obj, attr):
    try:
        setattr(eval(OBJECTS[obj], {"T": T}), attr, 1)  # noqa: S307
    except AttributeError as e:
        return str(e)


@pytest.mark.parametrize("obj", OBJECTS)
def test_missing_attribute_text(obj):
    assert _get(torchish, obj, "xyz") == _get(torch, obj, "xyz")


@pytest.mark.parametrize("obj,attr", [(o, a) for o, attrs in SETTABLE.items() for a in attrs])
def test_read_only_attribute_text(obj, attr):
    theirs = _set(torch, obj, attr)
    assert theirs is not None
    assert _set(torchish, obj, attr) == theirs


def test_dtypes_stay_usable():
    # read-only instances still pickle, copy and compare as before
    import copy
    import pickle
    for d in (torchish.float32, torchish.bfloat16, torchish.bool):
        assert pickle.loads(pickle.dumps(d)) is d
        assert copy.deepcopy(d) is d
        assert str(d) == str(getattr(torch, d.name))

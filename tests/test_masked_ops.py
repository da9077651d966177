"""torch.masked beyond PyTorch's OpInfo samples (tests/test_ops_opinfo.py runs those): mask
broadcasting and its error, dims errors, dtype rules and errors, against PyTorch."""
import pytest

import torchish

torch = pytest.importorskip("torch")

CASES = {
    "broadcast_mask": lambda m: m.masked.sum(m.arange(6.).reshape(2, 3), 1,
                                             mask=m.tensor([1, 0, 1])),
    "mask_too_many_dims": lambda m: m.masked.sum(m.ones(3), mask=m.ones(2, 3, dtype=m.bool)),
    "dims_repeat": lambda m: m.masked.amax(m.ones(2, 3), (1, -1)),
    "dims_range": lambda m: m.masked.amin(m.ones(2, 3), 2),
    "int_sum_int64": lambda m: m.masked.sum(m.ones(2, 3, dtype=m.int16), 0,
                                            mask=m.tensor([True, False, True])),
    "argmax_input_dtype": lambda m: m.masked.argmax(m.tensor([[1., 5., 2.]]), 1,
                                                    mask=m.tensor([True, False, True])),
    "int_amax": lambda m: m.masked.amax(m.tensor([[3, -7, 2]]), 1,
                                        mask=m.tensor([False, True, False])),
    "mean_int": lambda m: m.masked.mean(m.ones(3, dtype=m.int64)),
    "mean_int_dtype": lambda m: m.masked.mean(m.ones(3, dtype=m.int64), dtype=m.int32),
    "median_int_fully_masked": lambda m: m.masked.median(
        m.tensor([[1, 2], [3, 4]]), 1, mask=m.tensor([[True, True], [False, False]])),
    "median_float_fully_masked": lambda m: m.masked.median(
        m.tensor([[1., 2.], [3., 4.]]), 1, mask=m.tensor([[True, True], [False, False]])),
    "var_correction": lambda m: m.masked.var(m.arange(8.).reshape(2, 4), 1, correction=2,
                                             keepdim=True, mask=m.tensor([1, 1, 0, 1]).bool()),
    "std_int": lambda m: m.masked.std(m.arange(6).reshape(2, 3), 1),
    "softmax_int_mask": lambda m: m.masked.softmax(m.tensor([[1., 2., 3.]]), 1,
                                                   mask=m.tensor([[True, False, True]])),
}


def _outcome(m, name):
    try:
        out = CASES[name](m)
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return type(e).__name__, str(e)
    return str(out.dtype), str(out.tolist())   # (str: nan == nan)


@pytest.mark.parametrize("name", CASES)
def test_matches_pytorch(name):
    assert _outcome(torchish, name) == _outcome(torch, name)


def test_masked_tensor_is_unsupported():
    with pytest.raises(NotImplementedError, match="torch.masked.MaskedTensor is not supported"):
        torchish.masked.MaskedTensor

"""Complex input to ops PyTorch does not support for complex: the same refusal.

For every OpInfo in PyTorch's `op_db` whose CPU dtypes include float32 but not complex64, the
first float32 sample is re-run with its floating tensors turned into complex64, on PyTorch and
on torchish. Where PyTorch refuses, torchish must raise the same exception type with the same
message; where PyTorch computes anyway (its OpInfo dtype lists are conservative), torchish must
compute the same values. One sample per op keeps this file fast.
"""
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import torchish  # noqa: E402
from test_ops_opinfo import (CASES, KNOWN_FAILURES, SKIP_VALUES, _case_id,  # noqa: E402
                             _compare, _Converter, _torch_callable, _torchish_callable)

# case id -> why torchish cannot match PyTorch yet (strict xfail: fix, then delete the line)
KNOWN_MISMATCHES = {
    **dict.fromkeys(("nn.functional.linear_cross_entropy.chunked",
                     "nn.functional.linear_cross_entropy.chunked_none"),
                    "PyTorch's acc_dtype ValueError comes before the log_softmax refusal"),
    "nn.functional.adaptive_avg_pool1d": "PyTorch computes an empty batch without reaching "
                                         "its kernel's dtype dispatch",
}


def _complex_cases():
    out = []
    for info in CASES:
        if _case_id(info) in KNOWN_FAILURES or info.name in KNOWN_FAILURES:
            continue
        if info.supports_dtype(torch.float32, "cpu") and \
                not info.supports_dtype(torch.complex64, "cpu"):
            reason = KNOWN_MISMATCHES.get(_case_id(info))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(info, id=_case_id(info), marks=marks))
    return out


def _to_complex(x):
    """The sample's pieces with every float32 tensor made complex64."""
    if isinstance(x, torch.Tensor):
        return x.detach().to(torch.complex64) if x.dtype is torch.float32 else x
    if isinstance(x, (list, tuple)):
        return type(x)(_to_complex(v) for v in x) if not isinstance(x, torch.Size) else x
    if isinstance(x, dict):
        return {k: _to_complex(v) for k, v in x.items()}
    return x


@pytest.mark.parametrize("info", _complex_cases())
def test_complex_input(info):
    ours_fn = _torchish_callable(info)
    if ours_fn is None:
        pytest.skip("no torchish callable")
    sample = next(iter(info.sample_inputs("cpu", torch.float32)), None)
    if sample is None:
        pytest.skip("no float32 sample")
    pieces = _to_complex((sample.input, sample.args, sample.kwargs))
    conv = _Converter(False)
    conv(pieces)
    t_in, t_args, t_kw = conv.torch_side(pieces)
    o_in, o_args, o_kw = conv.ours_side(pieces)
    where = f"{_case_id(info)} complex64: {sample.summary()}"
    torch.manual_seed(0)
    try:
        expected = _torch_callable(info)(t_in, *t_args, **t_kw)
    except Exception as exc:  # noqa: BLE001 - PyTorch refuses: so must torchish, in its words
        torchish.manual_seed(0)
        try:
            ours_fn(o_in, *o_args, **o_kw)
        except Exception as mine:  # noqa: BLE001
            assert (type(mine).__name__, str(mine)) == (type(exc).__name__, str(exc)), where
        else:
            raise AssertionError(f"{where}: computed; PyTorch raises "
                                 f"{type(exc).__name__}: {exc}")
        return
    torchish.manual_seed(0)
    try:
        actual = ours_fn(o_in, *o_args, **o_kw)
    except Exception as exc:  # noqa: BLE001
        raise AssertionError(f"{where}: torchish raised {type(exc).__name__}: {exc}") from exc
    _compare(expected, actual, where, check_values=info.name not in SKIP_VALUES)


@pytest.mark.parametrize("name", ["erf", "floor", "sign", "isposinf"])
def test_complex_refusal_when_compiled(name):
    """The refusals are checked from dtypes alone, so a traced call raises PyTorch's too."""
    z = torch.tensor([1 + 2j, -0.5j])
    with pytest.raises(Exception) as expected:
        getattr(torch, name)(z)
    compiled = torchish.compile(getattr(torchish, name))
    with pytest.raises(type(expected.value)) as actual:
        compiled(torchish.tensor([1 + 2j, -0.5j]))
    assert str(actual.value) == str(expected.value)


def test_complex128_names_its_dtype():
    z = torch.tensor([1 + 2j], dtype=torch.complex128)
    with pytest.raises(NotImplementedError) as expected:
        torch.special.erfcx(z)
    with pytest.raises(NotImplementedError) as actual:
        torchish.special.erfcx(torchish.tensor([1 + 2j], dtype=torchish.complex128))
    assert str(actual.value) == str(expected.value)


@pytest.mark.parametrize("bound", ["tensor", "number"])
@pytest.mark.parametrize("name", ["clamp_min", "clamp_max"])
def test_clamp_bound_refusal(name, bound):
    """A Tensor bound takes PyTorch's maximum/minimum kernel; a number, clamp's own check."""
    def call(lib):
        z = lib.tensor([1 + 2j, -0.5j])
        getattr(z, name)(z if bound == "tensor" else 0)
    with pytest.raises(NotImplementedError) as expected:
        call(torch)
    with pytest.raises(NotImplementedError) as actual:
        call(torchish)
    assert str(actual.value) == str(expected.value)

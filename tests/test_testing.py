"""torchish.testing against torch.testing: assert_close pass/fail and its messages, and
make_tensor's values (same generator calls as PyTorch's, so equal for equal seeds)."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


def _cases(m):
    T = m.tensor
    return [
        (T([1., 2., 3.]), T([1., 2.5, 3.]), {}),
        (T([[1., 2.], [3., 4.]]), T([[1., 2.], [3., 5.]]), {}),
        (T([1, 2, 3]), T([1, 2, 4]), {}),
        (T([1, 5, 7]), T([3, 5, 4]), {}),
        (T([1, 2, 3]), T([1, 2, 4]), dict(rtol=0.1, atol=0.)),
        (T([1., 5, 7]), T([1., 5, 4]), dict(rtol=0., atol=0.)),
        (T([1., 2.]), T([1., 2.], dtype=m.float64), {}),
        (T([1., 2.]), T([1., 2.5], dtype=m.float64), dict(check_dtype=False)),
        (T([1., 2.]), T([1., 2., 3.]), {}),
        (1.0, 1.5, {}), (1, 2, {}), (1.0, 1, {}), (1.0, 1, dict(check_dtype=False)),
        (True, False, {}), (None, 1, {}), (None, None, {}), (2 + 1j, 2 + 1.5j, {}),
        (np.float64(1.0), 1.5, {}), (float("nan"), float("nan"), dict(equal_nan=True)),
        ([T(1.)], [T(2.)], {}), ({"a": T(1.)}, {"a": T(2.)}, {}),
        ({"a": T(1.)}, {"b": T(2.)}, {}), ([1, 2], [1], {}),
        ((T([1.]), [T([2.]), 3.0]), (T([1.]), [T([2.]), 3.5]), {}),
        ({"x": {"y": [T([1, 2]), 4]}}, {"x": {"y": [T([1, 2]), 5]}}, {}),
        (T([float("nan")]), T([float("nan")]), {}),
        (T([float("nan")]), T([float("nan")]), dict(equal_nan=True)),
        (T([1., 2.]), T([1., 3.]), dict(msg="custom")),
        (T([1., 2.]), T([1., 3.]), dict(msg=lambda m: "X" + m)),
        ([T([1., 2.])], [T([1., 3.])], dict(msg=lambda m: "<" + m + ">")),
        (T([1., 2.]), T([1., 3.]), dict(rtol=0.1)),
        (T([1., 2.]), T([1., 3.]), dict(atol=0.1)),
        (T([True]), T([False]), {}),
        (T([1 + 1j]), T([1 + 2j]), {}),
        (T([1 + 1j], dtype=m.complex128), T([1 + 1.00000001j], dtype=m.complex128), {}),
        (np.array([1., 2.]), np.array([1., 3.]), {}),
        (np.array([1, 2]), np.array([1, 2]), {}),
        ("a", "a", {}),
        (T(1.), T(2.), {}),
        (T([0., 2.]), T([1., 3.]), {}),
        (T([1., float("inf")]), T([1., 3.]), {}),
        (T([1., float("inf")]), T([1., float("inf")]), {}),
        (T([1., 2.], dtype=m.bfloat16), T([1., 2.1], dtype=m.bfloat16), {}),
        (T([1., 2.], dtype=m.float16), T([1., 2.01], dtype=m.float16), {}),
        (T([1., 2.], dtype=m.float16), T([1., 2.001], dtype=m.float16), {}),
        (T([1., 2.]), T([1.0000001, 2.000001]), {}),
        (T([1., 2.]), T([1.00001, 2.0001]), {}),
        (T([[1., 2.], [3., 4.]]), T([[1., 3.], [2., 4.]]).t(), dict(check_stride=True)),
        (T([[1., 2.], [3., 4.]]), T([[1., 3.], [2., 4.]]).t(), {}),
        (T([1, 2], dtype=m.uint8), T([1, 3], dtype=m.int8), dict(check_dtype=False)),
        (T([1., 2.]), [1., 2.], {}),
        (T([[1., 2., 3.], [4., 5., 6.]]), T([[1.5, 2., 3.], [4., 5., 9.]]), {}),
        (T([1., 2.], requires_grad=True), T([1., 2.]), {}),
        (T([[1, 2], [3, 0]]), T([[1, 2], [3, 4]]), {}),
        # torch.isclose refuses a negative tolerance: an "unexpected exception" showing the pair
        (T([[1., 2.], [3., 4.]]), T([[1., 2.], [3., 4.]]), dict(rtol=-1.0, atol=0.0)),
        ([T([1.]), {"k": T([2.], dtype=m.float64)}], [T([1.]), {"k": T([2.])}],
         dict(rtol=0, atol=-1, check_dtype=False)),
        (T([1., 2.], requires_grad=True), T([1., 2.]), dict(rtol=-1e-3, atol=0.)),
        (np.ones(2), np.ones(2), dict(rtol=-1e-3, atol=0.)),
        (1.0, 1.0, dict(rtol=-1.0, atol=0.0)),
        (T([1., 2.]), T([1.]), dict(rtol=-1.0, atol=0.0)),
    ]


def _outcome(m, actual, expected, kw):
    try:
        m.testing.assert_close(actual, expected, **kw)
        return "OK"
    except Exception as exc:  # noqa: BLE001 - the outcome is what is compared
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("i", range(len(_cases(torch))))
def test_assert_close_matches_torch(i):
    expected = _outcome(torch, *_cases(torch)[i])
    actual = _outcome(torchish, *_cases(torchish)[i])
    assert actual == expected


def test_message_text():
    """One full message, spelled out (the format users read)."""
    with pytest.raises(AssertionError) as info:
        torchish.testing.assert_close(torchish.tensor([[1., 2.], [3., 4.]]),
                                      torchish.tensor([[1., 2.], [3., 5.]]))
    assert str(info.value) == (
        "Tensor-likes are not close!\n\n"
        "Mismatched elements: 1 / 4 (25.0%)\n"
        "Greatest absolute difference: 1.0 at index (1, 1) (up to 1e-05 allowed)\n"
        "Greatest relative difference: 0.20000000298023224 at index (1, 1) "
        "(up to 1.3e-06 allowed)")


def test_tolerance_arguments():
    for m in (torch, torchish):
        with pytest.raises(ValueError, match="Both 'rtol' and 'atol' must be either specified "
                                             "or omitted, but got no rtol."):
            m.testing.assert_close(m.ones(2), m.ones(2), atol=1.0)


def test_assert_allclose_deprecated():
    for m in (torch, torchish):
        with pytest.warns(FutureWarning, match="assert_allclose"):
            m.testing.assert_allclose(m.tensor([1.0, 2.0]), [1.0, 2.00001])
    outcomes = []
    for m in (torch, torchish):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                m.testing.assert_allclose(m.tensor([1.0, 2.0]), [1.0, 2.1])
            except AssertionError as exc:
                outcomes.append(str(exc))
    assert len(outcomes) == 2 and outcomes[0] == outcomes[1]


DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int8", "uint8",
          "bool", "complex64", "complex128"]
OPTIONS = [{}, dict(low=-2, high=3), dict(low=0.5), dict(high=-1), dict(noncontiguous=True),
           dict(exclude_zero=True, low=-1, high=2)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("k", range(len(OPTIONS)))
def test_make_tensor_values(dtype, k):
    kw = OPTIONS[k]
    outcomes = []
    for m in (torch, torchish):
        m.manual_seed(7)
        try:
            outcomes.append(m.testing.make_tensor((5, 3), dtype=getattr(m, dtype),
                                                  device="cpu", **kw))
        except Exception as exc:  # noqa: BLE001
            outcomes.append(exc)
    e, a = outcomes
    if isinstance(e, Exception):
        assert type(a) is type(e) and str(a) == str(e)
        return
    assert str(a.dtype) == str(e.dtype) and tuple(a.shape) == tuple(e.shape)
    assert a.is_contiguous() == e.is_contiguous()
    ev = e.float().cpu().numpy() if dtype == "bfloat16" else e.cpu().numpy()
    av = np.asarray(a._data).astype(np.float32) if dtype == "bfloat16" else np.asarray(a._data)
    np.testing.assert_array_equal(av, ev)


def test_make_tensor_arguments():
    for m in (torch, torchish):
        t = m.testing.make_tensor(2, 3, dtype=m.float64, device="cpu", requires_grad=True)
        assert t.requires_grad and t.is_leaf and tuple(t.shape) == (2, 3)
        with pytest.raises(ValueError, match="`requires_grad=True` is not supported"):
            m.testing.make_tensor(2, dtype=m.int64, device="cpu", requires_grad=True)
        with pytest.raises(ValueError, match=r"`low` must be less than `high`, but got 3 >= 1"):
            m.testing.make_tensor(2, dtype=m.float32, device="cpu", low=3, high=1)
        with pytest.raises(ValueError, match=r"The value interval specified by `low` and "
                                             r"`high` is \[300, 400\)"):
            m.testing.make_tensor(2, dtype=m.uint8, device="cpu", low=300, high=400)
        with pytest.raises(ValueError, match="cannot be NaN"):
            m.testing.make_tensor(2, dtype=m.float32, device="cpu", low=float("nan"))


def test_import_under_alias(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("import torch\nfrom torch.testing import assert_close, make_tensor\n"
                      "import torch.fft, torch.special\n"
                      "x = make_tensor(4, dtype=torch.float64, device='cpu')\n"
                      "assert_close(torch.fft.ifft(torch.fft.fft(x)).real, x)\n"
                      "import torchish\n"
                      "print(type(torch.special.expit(x)) is torchish.Tensor, torch.fft.__name__)\n")
    out = subprocess.run([sys.executable, "-m", "torchish", str(script)], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "torchish.fft"]

"""Batch norm with parameters or running statistics of another dtype than the input: which
mixes PyTorch's CPU kernel accepts (float32 parameters with a bfloat16/float16 input) and the
error, word for word, of each one it refuses."""
import itertools

import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

F, D, B, H, N = "float32", "float64", "bfloat16", "float16", None

# (input, weight, bias, running stats, training)
CASES = [
    (F, F, F, D, True), (F, F, F, D, False), (F, D, F, F, True), (F, D, D, D, False),
    (D, F, F, F, True), (F, F, D, H, True), (F, F, D, H, False), (F, N, N, B, True),
    (B, F, F, F, True), (H, F, N, F, False), (B, N, N, F, True), (B, F, B, F, True),
    (H, H, H, F, False), (H, N, N, B, True), (D, N, F, D, False), (F, N, N, N, True),
]


def _run(T, case):
    x_dt, w_dt, b_dt, s_dt, training = case
    x = T.arange(12.0).reshape(3, 4).to(getattr(T, x_dt))
    w, b, rm, rv = (None if dt is None else T.full((4,), v, dtype=getattr(T, dt))
                    for dt, v in ((w_dt, 1.5), (b_dt, 0.5), (s_dt, 0.25), (s_dt, 2.0)))
    try:
        y = T.nn.functional.batch_norm(x, rm, rv, w, b, training=training)
    except RuntimeError as e:
        return str(e)
    stats = [] if rm is None else rm.tolist() + rv.tolist()
    return str(y.dtype), str(None if rm is None else rm.dtype), y.float().flatten().tolist(), \
        stats


@pytest.mark.parametrize("case", CASES)
def test_batch_norm_dtype_mix(case):
    ours, theirs = _run(torchish, case), _run(torch, case)
    if isinstance(theirs, str):
        assert ours == theirs
    else:
        assert ours[:2] == theirs[:2]
        assert ours[2] == pytest.approx(theirs[2], rel=1e-2, abs=1e-6)
        assert ours[3] == pytest.approx(theirs[3], rel=1e-6)


def test_batch_norm_refusals_everywhere():
    """Every refused mix of float dtypes (no kernel runs: the checks come first)."""
    names = (F, D, B, H)
    for x_dt, w_dt, b_dt, s_dt in itertools.product(names, names, names + (N,), names):
        for training in (True, False):
            case = (x_dt, w_dt, b_dt, s_dt, training)
            theirs = _run(torch, case)
            if isinstance(theirs, str):
                assert _run(torchish, case) == theirs, case


def test_batch_norm_module_half_input_float_parameters():
    for T in (torch, torchish):
        T.manual_seed(0)
    out = []
    for T in (torch, torchish):
        m = T.nn.BatchNorm1d(4)
        y = m(T.arange(12.0).reshape(3, 4).to(T.bfloat16))
        out.append((str(y.dtype), str(m.running_mean.dtype), y.float().flatten().tolist(),
                    m.running_var.tolist()))
    assert out[0][:2] == out[1][:2]
    assert out[0][2] == pytest.approx(out[1][2], rel=1e-2, abs=1e-6)
    assert out[0][3] == pytest.approx(out[1][3], rel=1e-6)

"""Fixes found by the sweep-22a vision programs (tests/programs/ported/sweep22a_*.py): the
memory layout of flip and binary_cross_entropy_with_logits results, checked against live
PyTorch (skipped without it)."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

_INPUTS = {
    "channels_last": lambda lib, x: x.contiguous(memory_format=lib.channels_last),
    "contiguous": lambda lib, x: x,
    "permuted": lambda lib, x: x.permute(3, 0, 2, 1),
    "transposed": lambda lib, x: x.transpose(2, 3),
    "sliced": lambda lib, x: x[:, :, ::2],
    "expanded": lambda lib, x: x[:, :1].expand(-1, 3, -1, -1),
}
_DATA = np.random.default_rng(0).random((2, 3, 4, 4), dtype=np.float32)


def _make(lib, kind):
    return _INPUTS[kind](lib, lib.tensor(_DATA))


@pytest.mark.parametrize("kind", sorted(_INPUTS))
@pytest.mark.parametrize("dims", [(-1,), (0, 1), (1,)])
def test_flip_preserves_the_input_layout(kind, dims):
    def run(lib):
        out = _make(lib, kind).flip(dims)
        return out.stride(), out.is_contiguous(), out.tolist()
    assert run(torchish) == run(torch)


def test_fliplr_flipud_of_a_transpose():
    def run(lib):
        t = lib.tensor(_DATA[0, 0, :3]).t()
        return t.fliplr().stride(), t.flipud().stride(), t.flipud().tolist()
    assert run(torchish) == run(torch)


@pytest.mark.parametrize("inp", ["channels_last", "contiguous", "transposed"])
@pytest.mark.parametrize("tgt", ["channels_last", "contiguous", "transposed"])
@pytest.mark.parametrize("extra", ["none", "pos_weight", "weight"])
def test_bce_with_logits_result_follows_the_target(inp, tgt, extra):
    def run(lib):
        x = _make(lib, inp)
        y = _make(lib, tgt).sigmoid().round()
        kw = {}
        if extra == "pos_weight":
            kw["pos_weight"] = lib.full((4,), 3.0)
        elif extra == "weight":
            kw["weight"] = lib.tensor(_DATA[:, :, :, :1])
        out = lib.nn.functional.binary_cross_entropy_with_logits(x, y, reduction="none", **kw)
        return out.shape, out.stride(), np.round(np.array(out.tolist()), 5).tolist()
    ours, theirs = run(torchish), run(torch)
    assert ours[:2] == theirs[:2]
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-4, atol=1e-5)


def _outcome(fn):
    try:
        out = fn()
    except Exception as e:   # compared by type and message
        return type(e).__name__, str(e)
    return "ok", round(float(out), 4)


@pytest.mark.parametrize("dtype", ["uint8", "int64", "int32"])
@pytest.mark.parametrize("shape", [(), (3,), (3, 2), (3, 2, 2), (3, 2, 2, 2)],
                         ids=["0d", "1d", "3d-input", "4d-input", "5d-input"])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_byte_targets_only_for_1d_2d_inputs(dtype, shape, smoothing):
    # segmentation masks stored as uint8: nll_loss accepts Byte, nll_loss2d does not
    def run(lib):
        n_in = (4,) if not shape else (shape[0], 4) + shape[1:]
        target = lib.ones(shape[:1] + shape[1:], dtype=getattr(lib, dtype))
        return _outcome(lambda: lib.nn.functional.cross_entropy(
            lib.zeros(n_in), target, label_smoothing=smoothing))
    assert run(torchish) == run(torch)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64", "uint8"])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
def test_interpolate_antialias_dtypes(dtype, mode):
    def run(lib):
        x = (lib.tensor(_DATA) * 255).to(getattr(lib, dtype))
        return _outcome(lambda: lib.nn.functional.interpolate(
            x, size=(3, 2), mode=mode, antialias=True).double().sum())
    ours, theirs = run(torchish), run(torch)
    assert ours[0] == theirs[0]
    if ours[0] == "ok":
        assert ours[1] == pytest.approx(theirs[1], rel=1e-5)
    else:
        assert ours == theirs

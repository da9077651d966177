"""Regression tests for what the sweep22b ported programs' probing exposed, against real
PyTorch: F.ctc_loss / nn.CTCLoss take the lengths as two tensors or two int sequences, and
refuse anything else (a bare int, or a tensor with a tuple) with the parser's TypeError."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

_LP = np.log(np.random.default_rng(0).dirichlet(np.ones(5), size=(6, 2))).astype(np.float32)
_TG = np.array([[1, 2], [3, 3]])


def _call(lib, il, tl, **kw):
    lp = lib.tensor(_LP)
    conv = lambda v: lib.tensor(v) if isinstance(v, np.ndarray) else v
    return lib.nn.functional.ctc_loss(lp, lib.tensor(_TG), conv(il), conv(tl), **kw)


def _outcome(fn):
    try:
        return "ok", fn().item()
    except Exception as exc:   # the type and message are what is compared
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("il,tl", [
    (6, 2), (6.0, 2.0), ((6, 5), 2), (6, [2, 2]),
    (np.array([6, 5]), (2, 2)), ((6, 5), np.array([2, 2])),
    ((6, 5), (2, 2)), ([6, 5], (2, 1)), (np.array([6, 5]), np.array([2, 2])),
])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_ctc_loss_length_kinds(il, tl, reduction):
    kw = dict(reduction=reduction, zero_infinity=True)
    want = _outcome(lambda: _call(torch, il, tl, **kw).sum())
    got = _outcome(lambda: _call(torchish, il, tl, **kw).sum())
    assert got[0] == want[0]
    if want[0] == "ok":
        assert got[1] == pytest.approx(want[1], rel=1e-5)
    else:
        assert got[1] == want[1]


def test_ctc_loss_module_bare_int_lengths():
    def run(lib):
        return lib.nn.CTCLoss(blank=4)(lib.tensor(_LP), lib.tensor(_TG), 6, 2)
    with pytest.raises(TypeError) as want:
        run(torch)
    with pytest.raises(TypeError) as got:
        run(torchish)
    assert str(got.value) == str(want.value)

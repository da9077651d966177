"""`capturable=True` on CPU tensors: PyTorch's optimizers assert at their first step that the
parameters live on an accelerator, worded per optimizer and per implementation (foreach)."""
import pytest

import torchish

torch = pytest.importorskip("torch")

NAMES = ["Adam", "AdamW", "Adamax", "NAdam", "RAdam", "ASGD", "Adadelta", "RMSprop"]


def _outcomes(T):
    out = []
    for name in NAMES:
        for foreach in (None, True):
            p = T.nn.Parameter(T.ones(2))
            opt = getattr(T.optim, name)([p], lr=0.1, capturable=True, foreach=foreach)
            opt.step()   # (no gradient yet: nothing to check)
            p.grad = T.ones(2)
            try:
                opt.step()
                out.append("ok")
            except AssertionError as e:
                out.append(str(e))
    return out


def test_capturable_on_cpu_asserts_as_pytorch():
    assert _outcomes(torchish) == _outcomes(torch)

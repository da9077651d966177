"""Regression tests for what the sweep26d ported programs (text CNN, Luong seq2seq) and their
probes exposed, against real PyTorch: `type(generator)` is torch._C.Generator (reachable as
torch._C.Generator too), `torch.return_types` is there after a plain `import torch`, and a
return type is built from one sequence the way a structseq is (pytree's unflatten does so)."""
import subprocess
import sys

import pytest

import torchish

torch = pytest.importorskip("torch")


def test_generator_type_name():
    for T in (torch, torchish):
        assert T._C.Generator is T.Generator
    assert repr(type(torchish.Generator())) == repr(type(torch.Generator()))
    assert repr(type(torchish.default_generator)) == repr(type(torch.default_generator))
    assert torchish.Generator.__qualname__ == torch.Generator.__qualname__


def test_return_types_after_plain_import():
    # a fresh interpreter: no other test may have imported the submodule already
    code = "import torchish; print(torchish.return_types.topk); print(torchish.return_types.sort)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [repr(torch.return_types.topk), repr(torch.return_types.sort)]


@pytest.mark.parametrize("name", ["max", "sort", "aminmax", "slogdet"])
def test_return_type_from_one_sequence(name):
    got = {}
    for T in (torch, torchish):
        a, b = T.tensor([1.0, 2.0]), T.tensor([0, 1])
        cls = getattr(T.return_types, name)
        r = cls((a, b))
        r2 = cls([a, b])
        got[T] = (repr(r), repr(r2), r.n_fields, r.n_sequence_fields, r.n_unnamed_fields,
                  type(r).__name__, isinstance(r, tuple), len(r))
    assert got[torch] == got[torchish]


@pytest.mark.parametrize("seq", [(1,), (1, 2, 3)])
def test_return_type_wrong_length(seq):
    msgs = []
    for T in (torch, torchish):
        with pytest.raises(TypeError) as e:
            T.return_types.max(seq)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_return_type_roundtrip_of_op_result():
    x = [[3.0, 1.0, 2.0], [0.5, 4.0, 1.5]]
    outs = []
    for T in (torch, torchish):
        r = T.tensor(x).topk(2, dim=1)
        rebuilt = type(r)(tuple(r))
        outs.append((repr(rebuilt), rebuilt.values.tolist(), rebuilt.indices.tolist()))
    assert outs[0] == outs[1]

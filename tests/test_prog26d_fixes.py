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


def test_return_types_after_plain_import(tmp_path):
    # a fresh interpreter: no other test may have imported the submodule already. Under
    # `python -m torchish` (torch is torchish) the classes print PyTorch's names; after a plain
    # `import torchish`, torchish's own, as every other class (so that they pickle)
    names = ["topk", "sort", "linalg_qr"]
    script = tmp_path / "types.py"
    script.write_text("import torch\n" + "".join(
        f"print(torch.return_types.{n})\n" for n in names))
    out = subprocess.run([sys.executable, "-m", "torchish", str(script)], capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [repr(getattr(torch.return_types, n)) for n in names]
    code = "import torchish; " + "; ".join(f"print(torchish.return_types.{n})" for n in names)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        repr(getattr(torch.return_types, n)).replace("torch.", "torchish.") for n in names]


def test_return_types_pickle():
    # (a return type pickles by a name that resolves to the class itself)
    import pickle
    got = {}
    for T in (torch, torchish):
        x = T.tensor([[1.0, 3.0], [2.0, 0.0]])
        r = pickle.loads(pickle.dumps(T.max(x, 0)))
        q = pickle.loads(pickle.dumps(T.linalg.qr(x)))
        got[T] = (repr(r), type(r).__name__, type(q).__name__, q.Q.shape)
    assert got[torch] == got[torchish]
    assert torchish.linalg.qr(x).__class__ is torchish.return_types.linalg_qr   # (one class)


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

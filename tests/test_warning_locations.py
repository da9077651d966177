"""Warnings raised on behalf of a user call name the frame PyTorch's do: the user's line where
PyTorch's does (C++ warnings, Python warnings with `stacklevel=2` called from user code), a
line of the library where PyTorch's names one of its own files; same category and message."""
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

_LIBRARY = {torch: os.path.dirname(torch.__file__), torchish: os.path.dirname(torchish.__file__)}

CASES = {
    "softmax": lambda t: t.nn.functional.softmax(t.ones(2, 3)),
    "log_softmax": lambda t: t.nn.functional.log_softmax(t.ones(2, 3)),
    "softmin": lambda t: t.nn.functional.softmin(t.ones(2, 3)),
    "Softmax()": lambda t: t.nn.Softmax()(t.ones(2, 3)),
    "mse_loss size_average": lambda t: t.nn.functional.mse_loss(t.ones(2), t.ones(2),
                                                                size_average=True),
    "l1_loss reduce": lambda t: t.nn.functional.l1_loss(t.ones(2), t.ones(2), reduce=False),
    "MSELoss size_average": lambda t: t.nn.MSELoss(size_average=False),
    "CrossEntropyLoss reduce": lambda t: t.nn.CrossEntropyLoss(reduce=False),
    "mse_loss target size": lambda t: t.nn.functional.mse_loss(t.ones(2, 3), t.ones(3)),
    "GRU dropout": lambda t: t.nn.GRU(3, 4, dropout=0.5),
    "LSTM dropout": lambda t: t.nn.LSTM(3, 4, num_layers=1, dropout=0.5),
    "RNN dropout": lambda t: t.nn.RNN(3, 4, dropout=0.3),
    "TransformerEncoder nested": lambda t: t.nn.TransformerEncoder(
        t.nn.TransformerEncoderLayer(4, 2), 2),
    "MultiheadAttention masks": lambda t: t.nn.MultiheadAttention(4, 2)(
        t.ones(2, 1, 4), t.ones(2, 1, 4), t.ones(2, 1, 4),
        key_padding_mask=t.zeros(1, 2, dtype=t.bool), attn_mask=t.zeros(2, 2)),
    "upsample": lambda t: t.nn.functional.upsample(t.ones(1, 1, 2, 2), scale_factor=2),
    "upsample_nearest": lambda t: t.nn.functional.upsample_nearest(t.ones(1, 1, 2, 2),
                                                                   scale_factor=2),
    "upsample_bilinear": lambda t: t.nn.functional.upsample_bilinear(t.ones(1, 1, 2, 2),
                                                                     scale_factor=2),
    "dropout2d 2-D": lambda t: t.nn.functional.dropout2d(t.ones(2, 3)),
    "dropout2d 3-D": lambda t: t.nn.functional.dropout2d(t.ones(2, 3, 4)),
    "dropout3d 3-D": lambda t: t.nn.functional.dropout3d(t.ones(2, 3, 4)),
    "Dropout2d 2-D": lambda t: t.nn.Dropout2d()(t.ones(2, 3)),
    "kl_div mean": lambda t: t.nn.functional.kl_div(t.ones(2), t.ones(2), reduction="mean"),
    "KLDivLoss": lambda t: t.nn.KLDivLoss()(t.ones(2), t.ones(2)),
    "init.normal": lambda t: t.nn.init.normal(t.ones(2)),
    "trunc_normal_": lambda t: t.nn.init.trunc_normal_(t.ones(2), mean=10.),
    "clip_grad_norm": lambda t: t.nn.utils.clip_grad_norm([t.ones(2, requires_grad=True)], 1.),
    "clip_grad_norm_ empty": lambda t: t.nn.utils.clip_grad_norm_((p for p in []), 1.),
    "weight_norm": lambda t: t.nn.utils.weight_norm(t.nn.Linear(2, 2)),
    "Hardtanh min_value": lambda t: t.nn.Hardtanh(min_value=-2.),
    "NLLLoss2d": lambda t: t.nn.NLLLoss2d(),
    "var dof": lambda t: t.ones(1).var(),
    "std dof": lambda t: t.ones(1).std(),
    "affine_grid": lambda t: t.nn.functional.affine_grid(t.eye(2, 3)[None], [1, 1, 1, 1]),
    "out resized": lambda t: t.add(t.ones(2), t.ones(2), out=t.ones(1)),
    "state_dict positional": lambda t: t.nn.Linear(2, 2).state_dict({}, "a"),
    "T of 3-D": lambda t: t.ones(2, 2, 2).T,
    "grad of non-leaf": lambda t: (t.ones(2, requires_grad=True) * 2).grad,
    "range": lambda t: t.range(0, 2),
}


def _seen(lib, fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(lib)
    out = []
    for w in caught:
        if w.filename == __file__:
            where = ("user", w.lineno)
        else:
            assert w.filename.startswith(_LIBRARY[lib]), w.filename
            where = "library"
        out.append((w.category, str(w.message).split(" (Triggered internally")[0], where))
    return out


@pytest.mark.parametrize("case", CASES)
def test_warning_names_the_frame_pytorch_names(case):
    expected = _seen(torch, CASES[case])
    assert expected, "the case should warn in PyTorch"
    assert _seen(torchish, CASES[case]) == expected


# TORCH_WARN_ONCE warnings: once per process, so each library runs in a fresh one
_ONCE = textwrap.dedent("""
    import sys, warnings
    t = __import__(sys.argv[1])
    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            t.where(t.ones(2, dtype=t.uint8), t.ones(2), t.zeros(2))
            t.lu(t.eye(2))
            t.eye(2).lu(get_infos=True)
            t.ones(2, dtype=t.complex64).to(t.float32)
            t.zeros(2).index_reduce_(0, t.tensor([1]), t.ones(1), "amax")
            t.zeros(2).scatter(0, t.tensor([1]), 2.0, reduce="add")   # a value: no warning
            t.zeros(2).scatter_(0, t.tensor([1]), t.ones(1), reduce="multiply")
            t.chain_matmul(t.ones(2, 3), t.ones(3, 2))
            t.meshgrid(t.ones(2), t.ones(3))
    for w in caught:
        where = w.lineno if w.filename == __file__ else "library"
        print(repr((w.category.__name__, str(w.message).split(" (Triggered internally")[0],
                    where)))
""")


def test_once_per_process_warnings_match_pytorch(tmp_path):
    script = tmp_path / "once.py"
    script.write_text(_ONCE)

    def run(lib):
        done = subprocess.run([sys.executable, str(script), lib], capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout.splitlines()
    expected = run("torch")
    assert len(expected) == 7
    assert run("torchish") == expected

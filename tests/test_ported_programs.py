"""PyTorch programs run unchanged: each script in tests/programs/ported/ is written for real
PyTorch (`import torch`) and run under `python -m torchish`; its output must agree line for line
with what real PyTorch printed for the same script, recorded in tests/programs/expected/ by
tools/record_program_outputs.py (the recording names the script's SHA-256, so an edited script
must be recorded again). A few programs also run under live PyTorch when it is installed, to
check the recordings against it.

Numbers in a line are compared with a relative tolerance (XLA's and PyTorch's CPU kernels
round differently); everything else (reprs, grad_fn names, shapes, dtypes, error messages)
must be identical. A script may widen the tolerance with a `# tolerance: 1e-3` line.
"""
import math
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDER = os.path.join(ROOT, "tests", "programs", "ported")
SCRIPTS = sorted(f for f in os.listdir(FOLDER) if f.endswith(".py"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from record_program_outputs import EXPECTED, header, run_under_pytorch  # noqa: E402
from fork_runner import ForkRunner  # noqa: E402

# checked against live PyTorch on every run (when installed): quick ones, across the areas
LIVE = ["autograd_basics.py", "ops_printing.py", "ops_random.py", "nn_custom_module.py"]
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf")


def _run(args, cwd=FOLDER):
    env = dict(os.environ, PYTHONHASHSEED="0")
    out = subprocess.run([sys.executable] + args, capture_output=True, text=True, cwd=cwd,
                         env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-4000:]
    return out.stdout.splitlines()


def _tolerance(path):
    found = re.search(r"^# tolerance: (\S+)", open(path).read(), re.M)
    return float(found.group(1)) if found else 1e-5


def _last_digit(text):
    """One unit in the last printed digit of a float: a value near a rounding boundary may print
    either way. Integers (counts, shapes, indices) get none."""
    mantissa, _, exponent = text.lower().partition("e")
    if "." not in mantissa and not exponent:
        return 0.0
    decimals = len(mantissa.partition(".")[2])
    return 10.0 ** (int(exponent or 0) - decimals)


def _same_line(ours, theirs, tol):
    if NUMBER.sub("#", ours) != NUMBER.sub("#", theirs):
        return False
    for a, b in zip(NUMBER.findall(ours), NUMBER.findall(theirs)):
        x, y = float(a), float(b)
        if x == y or (math.isnan(x) and math.isnan(y)):
            continue
        allowed = max(tol * max(abs(x), abs(y), 1.0), _last_digit(a), _last_digit(b))
        if not abs(x - y) <= allowed * 1.0001:
            return False
    return True


def test_there_are_programs():
    assert len(SCRIPTS) >= 1


def test_python_m_torchish_imports_torchish(tmp_path):
    # otherwise every comparison below would be PyTorch against itself
    script = tmp_path / "which.py"
    script.write_text("import torch\nimport torch.nn\nprint(torch.__name__, torch.nn.__name__)\n")
    assert _run(["-m", "torchish", str(script)]) == ["torchish torchish.nn"]


def test_python_m_torchish_gives_the_script_an_absolute_file(tmp_path):
    # scripts find their data files next to themselves through __file__, as under `python x.py`
    (tmp_path / "where.py").write_text("import os\nprint(os.path.isabs(__file__))\n")
    assert _run(["-m", "torchish", "where.py"], cwd=tmp_path) == ["True"]


_CLASS_NAMES = """\
import copy, io, pickle, torch
x = torch.ones(2, requires_grad=True)
y = x * 2
m = torch.nn.Sequential(torch.nn.Linear(2, 2))
print(type(x), type(x.shape), type(x.dtype), type(x.device))
print(type(m[0]), type(torch.optim.SGD(m.parameters(), lr=0.1)), type(m[0].weight))
print(type(y.grad_fn), type(y.grad_fn.next_functions[0][0]), torch.autograd.graph.Node)
buf = io.BytesIO()
torch.save(m, buf)
buf.seek(0)
print(type(torch.load(buf, weights_only=False)[0]), pickle.loads(pickle.dumps(y.detach())))
from torch.nn.utils import prune   # (submodules loaded on first use, by their package's name)
print(prune.L1Unstructured, torch.nn.utils.parametrize.ParametrizationList)
"""


def test_python_m_torchish_classes_carry_torch_names(tmp_path):
    # what PyTorch 2.13 prints for the same script (its node classes have no module); pickles
    # name `torch.*` classes, which resolve through the alias
    (tmp_path / "names.py").write_text(_CLASS_NAMES)
    assert _run(["-m", "torchish", "names.py"], cwd=tmp_path) == [
        "<class 'torch.Tensor'> <class 'torch.Size'> <class 'torch.dtype'> "
        "<class 'torch.device'>",
        "<class 'torch.nn.modules.linear.Linear'> <class 'torch.optim.sgd.SGD'> "
        "<class 'torch.nn.parameter.Parameter'>",
        "<class 'MulBackward0'> <class 'AccumulateGrad'> <class 'torch.autograd.graph.Node'>",
        "<class 'torch.nn.modules.linear.Linear'> tensor([2., 2.])",
        "<class 'torch.nn.utils.prune.L1Unstructured'> "
        "<class 'torch.nn.utils.parametrize.ParametrizationList'>"]


def _recorded(name):
    """PyTorch's recorded output for the script as it is now (fails for a stale recording)."""
    path = os.path.join(EXPECTED, name[:-3] + ".txt")
    assert os.path.exists(path), f"no recording: run python tools/record_program_outputs.py {name}"
    first, *lines = open(path).read().splitlines()
    version = first.split()[2]
    assert first == header(name, version), \
        f"{name} changed since its output was recorded: python tools/record_program_outputs.py {name}"
    return lines


def _assert_same_output(ours, expected, tol):
    for i, (a, b) in enumerate(zip(ours, expected)):
        assert _same_line(a, b, tol), f"line {i + 1}:\n  torchish: {a}\n  pytorch:  {b}"
    assert len(ours) == len(expected)


def test_every_recording_has_its_program():
    names = {f[:-4] for f in os.listdir(EXPECTED) if f.endswith(".txt")}
    assert names == {s[:-3] for s in SCRIPTS}


@pytest.fixture(scope="module")
def runner():
    """`python -m torchish` without a fresh interpreter's imports (see tests/fork_runner.py);
    the two tests above run the real command line."""
    if not hasattr(os, "fork"):
        yield None
        return
    forks = ForkRunner()
    yield forks
    forks.close()


@pytest.mark.parametrize("name", SCRIPTS)
def test_program_prints_what_pytorch_prints(name, runner, tmp_path):
    path = os.path.join(FOLDER, name)
    expected = _recorded(name)
    if runner is None:
        ours = _run(["-m", "torchish", path])
    else:
        code, out, err = runner.run([path], FOLDER, tmp_path)
        assert code == 0, err[-4000:]
        ours = out.splitlines()
    _assert_same_output(ours, expected, _tolerance(path))


@pytest.mark.parametrize("name", LIVE)
def test_recording_matches_live_pytorch(name):
    pytest.importorskip("torch")
    _assert_same_output(run_under_pytorch(name), _recorded(name), 1e-5)

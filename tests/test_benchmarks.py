"""The benchmark scripts run as a new user runs them: `python benchmarks/<name>.py`."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT_DIRS = ["benchmarks", "examples"]


@pytest.mark.parametrize("folder", SCRIPT_DIRS)
def test_no_script_shadows_a_standard_module(folder):
    """A script's folder comes first on sys.path: `benchmarks/random.py` once replaced the
    standard `random` module and broke every benchmark at `import jax`."""
    names = {f[:-3] for f in os.listdir(os.path.join(ROOT, folder)) if f.endswith(".py")}
    assert not names & set(sys.stdlib_module_names)


@pytest.mark.parametrize("args, expect", [
    (["benchmarks/autograd.py", "--repeat", "1"], ["MLP fwd+bwd", "per recorded op"]),
    (["benchmarks/train_step.py", "--steps", "1", "--repeat", "1"],
     ["(a) MLP + Adam", "(b) LeNet + SGD momentum", "(c) GPT + AdamW", "compiled MiB"]),
])
def test_benchmark_runs_and_prints_its_table(args, expect):
    out = subprocess.run([sys.executable] + args, capture_output=True, text=True, cwd=ROOT,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    for text in expect:
        assert text in out.stdout

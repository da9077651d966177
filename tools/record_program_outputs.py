"""Record what real PyTorch prints for the ported programs (tests/programs/ported/*.py).

Each output goes to tests/programs/expected/NAME.txt, headed by the PyTorch version and the
SHA-256 of the script it came from; tests/test_ported_programs.py compares torchish's output
with it (and refuses an output recorded from an older version of the script). Recording once
instead of running PyTorch in every test run halves the programs' share of the suite, and the
comparison then also runs where PyTorch is not installed. The suite still runs a few programs
under live PyTorch to check the recordings against it.

Usage: ``python tools/record_program_outputs.py [NAME.py ...]`` (all programs by default; needs
torch 2.13).
"""
import hashlib
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(ROOT, "tests", "programs", "ported")
EXPECTED = os.path.join(ROOT, "tests", "programs", "expected")


def script_hash(name):
    with open(os.path.join(PROGRAMS, name), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def header(name, version):
    return f"# PyTorch {version} output of {name}, script sha256 {script_hash(name)}"


def run_under_pytorch(name):
    """The script's stdout lines under real PyTorch (as the tests run it)."""
    env = dict(os.environ, PYTHONHASHSEED="0")
    out = subprocess.run([sys.executable, os.path.join(PROGRAMS, name)], capture_output=True,
                         text=True, cwd=PROGRAMS, env=env, timeout=600)
    if out.returncode:
        raise RuntimeError(f"{name} failed under PyTorch:\n{out.stderr[-4000:]}")
    return out.stdout.splitlines()


def main(names):
    import torch
    os.makedirs(EXPECTED, exist_ok=True)
    names = names or sorted(f for f in os.listdir(PROGRAMS) if f.endswith(".py"))
    for name in names:
        lines = run_under_pytorch(name)
        with open(os.path.join(EXPECTED, name[:-3] + ".txt"), "w") as f:
            f.write("\n".join([header(name, torch.__version__)] + lines) + "\n")
        print(f"{name}: {len(lines)} lines")


if __name__ == "__main__":
    main(sys.argv[1:])

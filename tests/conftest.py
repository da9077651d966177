"""Test-suite configuration.

TORCHISH_TEST_DEVICE selects the device every test runs on (`cpu` when unset, `cuda` on a GPU
machine): it becomes torchish's default device, so tensors created without `device=` land there.
"""
import os
import sys

# The oracle (PyTorch) runs one intra-op thread in the test workers and the scripts they
# start: the suite's workers already fill the cores, and PyTorch's OpenMP threads spin while
# they wait for a busy core (a PyTorch training script took 52 s instead of 16 s under load).
# Set before anything imports torch; a value the caller set wins.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# The suite compiles tens of thousands of small XLA kernels and runs most of them once; on the
# CPU, LLVM's optimisation of them was a fifth of the suite's time. Tests compare values within
# tolerances, so they compile at LLVM level 0 (here and in the scripts they start). Level 0 drops
# fused multiply-adds, which moves some last bits: tests of bit-exact numbers are marked
# `xla_default_numerics` and run in a child process with XLA's defaults
# (tests/test_xla_default_numerics.py). TORCHISH_TEST_XLA_OPTIMIZE=1 keeps the defaults for all.
# Set before anything starts a JAX backend.
XLA_LEVEL_0 = (os.environ.get("TORCHISH_TEST_DEVICE", "cpu") == "cpu"
               and os.environ.get("TORCHISH_TEST_XLA_OPTIMIZE") != "1")
LEVEL_0_FLAG = "--xla_backend_optimization_level=0"
if XLA_LEVEL_0 and LEVEL_0_FLAG not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + LEVEL_0_FLAG).strip()

import pytest  # noqa: E402

import torchish  # noqa: E402
from fork_runner import share_mlir_context  # noqa: E402

share_mlir_context()   # (one MLIR context per thread for the kernels' lowerings: see there)

DEVICE = os.environ.get("TORCHISH_TEST_DEVICE", "cpu")


def pytest_configure(config):
    torchish.set_default_device(DEVICE)
    config.addinivalue_line("markers", "xla_default_numerics: asserts bits that XLA's default "
                            "CPU optimisation gives (run in a child process when the suite "
                            "compiles at level 0)")


# Single tests that run for 10-30 s (each a child process: a benchmark, the default-numerics
# pytest, the training examples). Collected last, they start when the other worker is almost
# done and it idles until they end; run first, they overlap with everything else.
LONG_FIRST = ("tests/test_benchmarks.py::test_benchmark_runs_and_prints_its_table",
              "tests/test_xla_default_numerics.py::",
              "tests/test_examples.py::test_training_example_losses_match_pytorch")


def pytest_collection_modifyitems(config, items):
    # (a stable sort: every xdist worker collects the same order, as xdist requires)
    items.sort(key=lambda item: not item.nodeid.startswith(LONG_FIRST))
    if not XLA_LEVEL_0:
        return
    moved = pytest.mark.skip(reason="runs in tests/test_xla_default_numerics.py's child process, "
                                    "with XLA's default optimisation")
    for item in items:
        if item.get_closest_marker("xla_default_numerics"):
            item.add_marker(moved)


def pytest_report_header(config):
    try:  # the differential tests expect the pinned oracle (pyproject's `oracle` extra)
        import torch
        oracle = f"PyTorch {torch.__version__}"
    except ImportError:
        oracle = "no PyTorch: differential tests skip"
    return f"torchish test device: {DEVICE}; oracle: {oracle}"


@pytest.fixture
def cpu_tensors():
    """For tests of CPU-only behaviour checked against the CPU-only oracle (CPU autocast,
    messages that print tensors): tensors made without `device=` live on the CPU."""
    with torchish.device("cpu"):
        yield


@pytest.fixture
def two_threads(monkeypatch):
    """PyTorch's and torchish's intra-op thread count set to 2, for bit-exact CPU kernels:
    PyTorch cuts a long reduction or row loop into one share per thread, which moves its
    vector boundaries."""
    torch = pytest.importorskip("torch")
    from torchish import _functions
    monkeypatch.setattr(_functions, "_threads", [2])
    monkeypatch.setattr(_functions, "_threads_set", [True])
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


@pytest.fixture(autouse=True)
def _restore_global_state():
    """Tests may change global state (default dtype, grad mode, print options): undo it. Also
    the distributions' default argument validation, which PyTorch's dynamo (torch.compile)
    turns off process-wide the first time it compiles, and torchish.compile too, as PyTorch:
    later distribution tests in that worker would compare libraries that validate nothing."""
    dtype = torchish.get_default_dtype()
    grad = torchish.is_grad_enabled()
    oracle = sys.modules.get("torch")
    validate = getattr(getattr(getattr(oracle, "distributions", None), "Distribution", None),
                       "_validate_args", None)
    ours = torchish.distributions.Distribution._validate_args
    yield
    if validate is not None:
        oracle.distributions.Distribution.set_default_validate_args(validate)
    torchish.distributions.Distribution.set_default_validate_args(ours)
    torchish.set_default_dtype(dtype)
    torchish.set_grad_enabled(grad)
    torchish.set_printoptions(profile="default")


# A worker that dies in native code is not yet a failure: the suite has met a rare segfault in
# jaxlib during Python's garbage collection (about one full run in four, never the same test,
# each passing alone; README "Differences to know"). The crashed test runs once more in a fresh
# worker and fails if that crashes too; every crash is listed at the end of the run.
CRASHED = []


@pytest.hookimpl(optionalhook=True)
def pytest_handlecrashitem(crashitem, report, sched):
    if crashitem in CRASHED or not hasattr(sched, "mark_test_pending"):
        return
    CRASHED.append(crashitem)
    sched.mark_test_pending(crashitem)
    report.outcome = "rerun"


def pytest_report_teststatus(report):
    if report.outcome == "rerun":
        return "rerun", "R", "RERUN"


def pytest_terminal_summary(terminalreporter):
    if CRASHED:
        terminalreporter.write_sep("=", "worker crashed (the test ran again in a fresh worker)")
        for nodeid in CRASHED:
            terminalreporter.write_line(nodeid)

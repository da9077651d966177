"""Test-suite configuration.

TORCHISH_TEST_DEVICE selects the device every test runs on (`cpu` when unset, `cuda` on a GPU
machine): it becomes torchish's default device, so tensors created without `device=` land there.
"""
import os

# The oracle (PyTorch) runs one intra-op thread in the test workers and the scripts they
# start: the suite's workers already fill the cores, and PyTorch's OpenMP threads spin while
# they wait for a busy core (a PyTorch training script took 52 s instead of 16 s under load).
# Set before anything imports torch; a value the caller set wins.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402

import torchish  # noqa: E402

DEVICE = os.environ.get("TORCHISH_TEST_DEVICE", "cpu")


def pytest_configure(config):
    torchish.set_default_device(DEVICE)


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


@pytest.fixture(autouse=True)
def _restore_global_state():
    """Tests may change global state (default dtype, grad mode, print options): undo it."""
    dtype = torchish.get_default_dtype()
    grad = torchish.is_grad_enabled()
    yield
    torchish.set_default_dtype(dtype)
    torchish.set_grad_enabled(grad)
    torchish.set_printoptions(profile="default")

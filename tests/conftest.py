"""Test-suite configuration.

TORCHISH_TEST_DEVICE selects the device every test runs on (`cpu` when unset, `cuda` on a GPU
machine): it becomes torchish's default device, so tensors created without `device=` land there.
"""
import os

import pytest

import torchish

DEVICE = os.environ.get("TORCHISH_TEST_DEVICE", "cpu")


def pytest_configure(config):
    torchish.set_default_device(DEVICE)


def pytest_report_header(config):
    return f"torchish test device: {DEVICE}"


@pytest.fixture(autouse=True)
def _restore_global_state():
    """Tests may change global state (default dtype, grad mode, print options): undo it."""
    dtype = torchish.get_default_dtype()
    grad = torchish.is_grad_enabled()
    yield
    torchish.set_default_dtype(dtype)
    torchish.set_grad_enabled(grad)
    torchish.set_printoptions(profile="default")

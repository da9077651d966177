"""Shared by the torch.distributions differential tests (test_distributions*.py)."""
import re

import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

TD = torch.distributions
OD = torchish.distributions


def both(fn):
    """fn(mod, T) built once with torch and once with torchish."""
    return fn(TD, torch.tensor), fn(OD, torchish.tensor)


def close(ours, theirs, rtol=1e-5, atol=1e-6):
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, torchish.Tensor), type(ours)
        assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
        assert str(ours.dtype) == str(theirs.dtype), (ours.dtype, theirs.dtype)
        np.testing.assert_allclose(ours.detach().cpu().numpy(), theirs.detach().cpu().numpy(),
                                   rtol=rtol, atol=atol)
    else:
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)


def cpu_repr(x):
    """repr(x) as the CPU-only oracle prints it: tensors on another device lose `device=`."""
    return re.sub(r",\s*device='[^']*'", "", repr(x))

"""Comparing logs of one program run under torchish and under PyTorch: nested lists of
values, floats within a relative tolerance, everything else (strings, ints, None) equal."""
import numpy as np


def close(a, b, rtol=1e-4, atol=1e-6):
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(close(x, y, rtol, atol) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return bool(np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True))
    return a == b


def assert_logs_match(ours, theirs, rtol=1e-4, atol=1e-6):
    assert len(ours) == len(theirs), (len(ours), len(theirs))
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert close(a, b, rtol, atol), (i, a, b)

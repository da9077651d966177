"""torch.use_deterministic_algorithms / set_deterministic_debug_mode and their queries,
differential against PyTorch (JAX's CPU kernels are deterministic: only the flags are kept)."""
import pytest

import torchish

torch = pytest.importorskip("torch")

CALLS = [("use", (True,), {"warn_only": 1}), ("use", (1,), {}),
         ("use", (False,), {"warn_only": True}), ("debug", ("warn",), {}), ("debug", (True,), {}),
         ("debug", ("x",), {}), ("debug", (3,), {}), ("debug", (1.0,), {}), ("debug", (0,), {}),
         ("debug", ("error",), {}), ("use", (True,), {"warn_only": True}), ("use", (False,), {})]


def _states(T):
    rows = []
    try:
        for kind, args, kwargs in CALLS:
            f = T.use_deterministic_algorithms if kind == "use" else T.set_deterministic_debug_mode
            try:
                f(*args, **kwargs)
                rows.append((T.are_deterministic_algorithms_enabled(),
                             T.is_deterministic_algorithms_warn_only_enabled(),
                             T.get_deterministic_debug_mode()))
            except (RuntimeError, TypeError) as e:
                rows.append((type(e).__name__, str(e)))
    finally:
        T.use_deterministic_algorithms(False)
    return rows


def test_deterministic_flags_as_pytorch():
    assert _states(torchish) == _states(torch)

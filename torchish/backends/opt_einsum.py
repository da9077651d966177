"""`torch.backends.opt_einsum`: whether torch.einsum asks opt_einsum (installed with JAX) for
the contraction order of three or more operands, and with which strategy. torchish records
einsum as PyTorch's pairwise ops in that order (_ops/linalg_einsum.py), so these flags change
the graph and the rounding exactly as they do in PyTorch."""
import contextlib

try:
    import opt_einsum as _opt_einsum
except ImportError:   # PyTorch then contracts left to right
    _opt_einsum = None

enabled = True
strategy = "auto" if _opt_einsum is not None else None


def is_available():
    return _opt_einsum is not None


def get_opt_einsum():
    return _opt_einsum


def _set_enabled(value):
    global enabled
    if value and not is_available():
        raise ValueError(
            f"opt_einsum is not available, so setting `enabled` to {value} will not reap the "
            "benefits of calculating an optimal path for einsum. torch.einsum will fall back to "
            "contracting from left to right. To enable this optimal path calculation, please "
            "install opt-einsum.")
    enabled = value


def _set_strategy(value):
    global strategy
    if not is_available():
        raise ValueError(
            f"opt_einsum is not available, so setting `strategy` to {value} will not be "
            "meaningful. torch.einsum will bypass path calculation and simply contract from left "
            "to right. Please install opt_einsum or unset `strategy`.")
    if not enabled:
        raise ValueError(
            f"opt_einsum is not enabled, so setting a `strategy` to {value} will not be "
            "meaningful. torch.einsum will bypass path calculation and simply contract from left "
            "to right. Please set `enabled` to `True` as well or unset `strategy`.")
    if value not in ["auto", "greedy", "optimal"]:
        raise ValueError("`strategy` must be one of the following: [auto, greedy, optimal] but "
                         f"is {value}")
    strategy = value


def set_flags(_enabled=None, _strategy=None):
    previous = (enabled, strategy if is_available() else None)
    if _enabled is not None:
        _set_enabled(_enabled)
    if _strategy is not None:
        _set_strategy(_strategy)
    return previous


@contextlib.contextmanager
def flags(enabled=None, strategy=None):
    previous = set_flags(enabled, strategy)
    try:
        yield
    finally:
        set_flags(*previous)


def _path_strategy():
    """The `optimize=` argument for opt_einsum's contract_path, or None to contract left to
    right (read at each call: the flags are plain module attributes users assign)."""
    return strategy if enabled and is_available() else None

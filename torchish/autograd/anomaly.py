"""Anomaly detection: with `check_nan`, backward raises at the first node whose gradient
holds a NaN, naming it as PyTorch does (torchish does not record forward tracebacks)."""
import warnings

_enabled = [False]
_check_nan = [True]


class detect_anomaly:
    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self._prev = _enabled[0], _check_nan[0]
        _enabled[0], _check_nan[0] = True, self.check_nan

    def __exit__(self, *exc):
        _enabled[0], _check_nan[0] = self._prev


class set_detect_anomaly:
    def __init__(self, mode, check_nan=True):
        self._prev = _enabled[0], _check_nan[0]
        _enabled[0], _check_nan[0] = bool(mode), check_nan

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _enabled[0], _check_nan[0] = self._prev


def is_anomaly_enabled():
    return _enabled[0]


def is_anomaly_check_nan_enabled():
    return _check_nan[0]


def check_nan(node, grads):
    """PyTorch's anomaly-mode error for a node whose backward produced NaN."""
    import jax.numpy as jnp
    for i, g in enumerate(grads):
        if g is None:
            continue
        arr = g._data if hasattr(g, "_data") else g
        if bool(jnp.isnan(arr).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               "output.")

"""Anomaly detection switches (accepted; torchish does not record forward tracebacks)."""

_enabled = [False]


class detect_anomaly:
    def __init__(self, check_nan=True):
        self.check_nan = check_nan

    def __enter__(self):
        self._prev = _enabled[0]
        _enabled[0] = True

    def __exit__(self, *exc):
        _enabled[0] = self._prev


class set_detect_anomaly(detect_anomaly):
    def __init__(self, mode, check_nan=True):
        self._prev = _enabled[0]
        _enabled[0] = bool(mode)

    def __enter__(self):
        pass


def is_anomaly_enabled():
    return _enabled[0]

"""A context manager that sets some of a backend module's flags and restores them."""
import contextlib


@contextlib.contextmanager
def flags_of(module, **values):
    values = {k: v for k, v in values.items() if v is not None}
    saved = {k: getattr(module, k) for k in values}
    for k, v in values.items():
        setattr(module, k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(module, k, v)

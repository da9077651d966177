"""Turn JAX's errors (raised while tracing an op) into the errors PyTorch raises.

The dispatcher hands every TypeError/ValueError from a compiled forward to `translate`. Only
errors raised inside JAX (or NumPy/ml_dtypes under it) are rewritten, as a RuntimeError,
PyTorch's type for a kernel's failure: a broadcasting failure gets PyTorch's exact message, any
other keeps JAX's first line after the op's name. An error raised by torchish's own code (an op
body or a helper checking its arguments, with PyTorch's type and text) is the intended one and
goes through unchanged, as does JAX's complaint about a concrete value needed under tracing,
which is a bug in an op body and must stay visible.
"""
import os

import jax
import jaxlib
import ml_dtypes
import numpy

_FOREIGN = tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                 for m in (jax, jaxlib, numpy, ml_dtypes))


def broadcast_error(shapes):
    """PyTorch's message for the first pair of shapes that do not broadcast, or None."""
    result = []
    for shape in shapes:
        shape = tuple(shape)
        n = max(len(result), len(shape))
        a = [1] * (n - len(result)) + list(result)
        b = [1] * (n - len(shape)) + list(shape)
        for i in range(n - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                return (f"The size of tensor a ({a[i]}) must match the size of tensor b "
                        f"({b[i]}) at non-singleton dimension {i}")
        result = [max(x, y) if min(x, y) != 0 else 0 for x, y in zip(a, b)]
    return None


def _raised_by_jax(exc):
    """Whether the innermost frame of `exc`'s traceback is JAX's (or NumPy's) code."""
    cause = exc.__cause__
    # JAX_TRACEBACK_FILTERING=remove_frames keeps the full traceback on an attached cause
    full = cause if type(cause).__name__ == "UnfilteredStackTrace" else exc
    tb = full.__traceback__ or exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_FOREIGN)


def translate(plan, leaves, exc):
    """The exception to raise for `exc`, raised while running `plan` on `leaves`."""
    if not _raised_by_jax(exc) or isinstance(exc, jax.errors.ConcretizationTypeError):
        return exc
    text = str(exc)
    if "broadcast" in text or "incompatible shapes" in text:
        shapes = [getattr(x, "shape", ()) for x in leaves]
        msg = broadcast_error(shapes)
        if msg:
            return RuntimeError(msg)
    return RuntimeError(f"{plan.op.name}: {text.splitlines()[0] if text else type(exc).__name__}")


def on_one_device(leaves):
    """`leaves` with 0-dim CPU arrays moved to the one other device the rest are on (PyTorch
    takes a 0-dim CPU tensor with CUDA tensors as a scalar); RuntimeError, as PyTorch, when
    the operands are on two devices otherwise. Called only after a jitted call refused them."""
    from .._device import from_jax_device
    arrays = [x for x in jax.tree_util.tree_leaves(leaves) if isinstance(x, jax.Array)]
    found = []
    for x in arrays:
        for d in x.devices():
            if d not in found:
                found.append(d)
    names = [from_jax_device(d) for d in found]
    others = [d for d, n in zip(found, names) if n.type != "cpu"]
    cpu_scalars_only = all(x.ndim == 0 for x in arrays
                           if from_jax_device(next(iter(x.devices()))).type == "cpu")
    if len(others) != 1 or len(found) > 2 or not cpu_scalars_only:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                           f"two devices, {names[0]} and {names[1]}!")
    return jax.tree_util.tree_map(
        lambda x: jax.device_put(x, others[0]) if isinstance(x, jax.Array) else x, leaves)

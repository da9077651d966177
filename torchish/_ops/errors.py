"""Turn JAX's errors (raised while tracing an op) into the errors PyTorch raises."""


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


def translate(plan, leaves, exc):
    text = str(exc)
    if "broadcast" in text or "incompatible shapes" in text:
        shapes = [getattr(x, "shape", ()) for x in leaves]
        msg = broadcast_error(shapes)
        if msg:
            return RuntimeError(msg)
    return RuntimeError(f"{plan.op.name}: {text.splitlines()[0] if text else type(exc).__name__}")

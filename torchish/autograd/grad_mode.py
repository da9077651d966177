"""Grad modes: `no_grad`, `enable_grad`, `set_grad_enabled`, `inference_mode`.

Each works as a context manager and as a decorator, as in PyTorch.
"""
import functools
import inspect
import warnings

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_multithreading_enabled"]

# A one-element list so the dispatcher can read it without a function call.
GRAD_ENABLED = [True]
_INFERENCE = [False]
# The active `torchish.func` transforms, innermost last: True for a reverse-mode one, inside
# which results computed under no_grad are constants (`dispatch` marks them stop-gradient);
# a `ForwardLevel` for vmap/jvp/jacfwd; False for torchish's own no_grad.
FUNC_LEVELS = []


class ForwardLevel:
    """A vmap/jvp/jacfwd level (falsy: not a reverse-mode one). Grad mode stays the caller's,
    but ops on the transform's values record nothing (PyTorch's batched and dual wrappers do not
    require grad: the transform's own node on the outer tape carries the gradient). Inside
    vmap an op on captured tensors alone records as usual; inside jvp nothing records."""
    __slots__ = ("jvp",)

    def __init__(self, jvp):
        self.jvp = jvp

    def __bool__(self):
        return False


def is_grad_enabled():
    return GRAD_ENABLED[0]


def is_inference_mode_enabled():
    return _INFERENCE[0]


class _GradModeContext:
    """Base: subclasses set `_target` (the grad mode inside the block)."""
    _target = True

    def __enter__(self):
        self._prev = GRAD_ENABLED[0]
        GRAD_ENABLED[0] = self._target

    def __exit__(self, *exc):
        GRAD_ENABLED[0] = self._prev
        return False

    def __call__(self, fn):
        if inspect.isclass(fn):   # (deprecated: only the construction runs in the mode)
            warnings.warn("Decorating classes is deprecated and will be disabled in future "
                          "versions. You should only decorate functions or methods. To "
                          "preserve the current behavior of class decoration, you can "
                          "directly decorate the `__init__` method and nothing else.",
                          FutureWarning, stacklevel=2)
            cls = fn
            fn = lambda *args, **kwargs: cls(*args, **kwargs)   # noqa: E731
        factory = self._clone

        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args, **kwargs):
                gen = fn(*args, **kwargs)
                with factory():
                    value = next(gen)
                while True:
                    try:
                        sent = yield value
                    except GeneratorExit:
                        gen.close()
                        raise
                    with factory():
                        try:
                            value = gen.send(sent)
                        except StopIteration as stop:
                            return stop.value
            return gen_wrapper

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with factory():
                return fn(*args, **kwargs)
        return wrapper

    def _clone(self):
        return self.__class__()


class no_grad(_GradModeContext):
    _target = False

    def __init__(self, orig_func=None):
        # `@torch.no_grad` without parentheses is accepted by PyTorch too.
        self._orig = orig_func

    def __new__(cls, orig_func=None):
        self = super().__new__(cls)
        if orig_func is not None and callable(orig_func):
            return cls()(orig_func)
        return self


class enable_grad(no_grad):
    _target = True


class internal_no_grad(no_grad):
    """no_grad for torchish's own code (a custom Function's forward): inside a reverse-mode
    `torch.func` transform its results are not made constants; JAX differentiates them."""

    def __enter__(self):
        super().__enter__()
        self._pushed = bool(FUNC_LEVELS)
        if self._pushed:
            FUNC_LEVELS.append(False)

    def __exit__(self, *exc):
        if self._pushed:
            FUNC_LEVELS.pop()
        return super().__exit__(*exc)


class set_grad_enabled(_GradModeContext):
    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError("set_grad_enabled(): argument 'enabled' (position 1) must be bool, "
                            f"not {type(mode).__name__}")
        self._target = mode
        self._prev = GRAD_ENABLED[0]
        GRAD_ENABLED[0] = self._target  # takes effect immediately when used as a function

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        GRAD_ENABLED[0] = self._prev
        return False

    def __call__(self, fn):
        GRAD_ENABLED[0] = self._prev  # as a decorator it must not change the mode now
        return _Fixed(self._target)(fn)

    def clone(self):
        return set_grad_enabled(self._target)


class _Fixed(_GradModeContext):
    def __init__(self, target):
        self._target = target

    def _clone(self):
        return _Fixed(self._target)


class inference_mode(_GradModeContext):
    """Like `no_grad` (torchish has no separate inference tensors)."""

    def __init__(self, mode=True):
        self.mode = mode
        self._target = not mode

    def __new__(cls, mode=True):
        self = super().__new__(cls)
        if callable(mode):
            return cls()(mode)
        return self

    def __enter__(self):
        self._prev_inf = _INFERENCE[0]
        _INFERENCE[0] = self.mode
        super().__enter__()

    def __exit__(self, *exc):
        _INFERENCE[0] = self._prev_inf
        return super().__exit__(*exc)

    def _clone(self):
        return inference_mode(self.mode)


_MULTITHREADING = [True]


class set_multithreading_enabled:
    """Context manager (and function) for the engine's multithreaded backward: torchish's
    engine runs on the calling thread either way, so it only records the setting."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self._prev = _MULTITHREADING[0]
        _MULTITHREADING[0] = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _MULTITHREADING[0] = self._prev
        return False

    def clone(self):
        return set_multithreading_enabled(self.mode)

"""`torch._dynamo.exc`: the exception types scripts catch around compiled code."""
from .._compile import CompileError


class TorchDynamoException(RuntimeError):
    pass


class Unsupported(TorchDynamoException, CompileError):
    """Code a compiled function cannot trace (with `fullgraph=True` it is raised; otherwise
    that signature runs eagerly, where PyTorch would break the graph)."""


class InvalidBackend(TorchDynamoException):
    def __init__(self, name):
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         "available backends.")


class BackendCompilerFailed(TorchDynamoException):
    """A custom backend raised, or returned something that is not callable."""

    def __init__(self, backend_fn, inner_exception, first_useful_frame=None):
        self.backend_name = getattr(backend_fn, "__name__", "?")
        self.inner_exception = inner_exception
        super().__init__(
            f"backend={self.backend_name!r} raised:\n{type(inner_exception).__name__}: "
            f"{inner_exception}\n\nSet TORCHDYNAMO_VERBOSE=1 for the internal stack trace "
            "(please do this especially if you're reporting a bug to PyTorch). For even more "
            "developer context, set TORCH_LOGS=\"+dynamo\"\n")


class InternalTorchDynamoError(TorchDynamoException):
    pass


class RestartAnalysis(TorchDynamoException):
    pass


class UserError(TorchDynamoException):   # (not an Unsupported, in PyTorch 2.13 either)
    pass


class FailOnRecompileLimitHit(Exception):
    """A `fullgraph=True` function needed more compiled signatures than the recompile limit."""


class UncapturedHigherOrderOpError(TorchDynamoException):
    pass


class ObservedException(TorchDynamoException):
    pass


class TorchRuntimeError(TorchDynamoException):
    """An op failed while the compiler ran it on fake values (cond's branch checks raise it)."""

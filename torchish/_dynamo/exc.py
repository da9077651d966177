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
    pass


class InternalTorchDynamoError(TorchDynamoException):
    pass


class RestartAnalysis(TorchDynamoException):
    pass


class UserError(Unsupported):
    pass


class UncapturedHigherOrderOpError(TorchDynamoException):
    pass


class ObservedException(TorchDynamoException):
    pass

"""`torch.ops` (ATen ops by schema, routed to torchish's own functions, and custom ops from
`torch.library`). PyTorch's `torch._ops` classes are attached to torchish's `_ops` package,
which is the op registry here, so `torch._ops.OpOverload` resolves as in PyTorch."""
from .. import _ops as _registry_package
from .namespace import OpOverload, OpOverloadPacket, _OpNamespace, _Ops, ops

for _cls in (OpOverload, OpOverloadPacket, _OpNamespace, _Ops):
    _cls.__module__ = "torchish._ops"
    setattr(_registry_package, _cls.__name__, _cls)
_registry_package.ops = ops

__all__ = ["ops", "OpOverload", "OpOverloadPacket"]

"""`torch.return_types`: the classes of multi-output ops' tuples (`torch.return_types.max`),
every one `_ops.return_types._rt` made (torchish/__init__.py imports this module after the op
modules that make them; later ones, the `<op>_out` twins, join as they are made). Each is a
node of `torch.utils._pytree`, as PyTorch registers its structseqs."""
from ._ops.return_types import ON_NEW as _ON_NEW, RETURN_TYPES as _RETURN_TYPES
from .utils import _pytree


def _register(cls):
    globals()[cls.__name__] = cls
    if not cls.__name__.startswith("_") and cls.__name__ not in __all__:
        __all__.append(cls.__name__)
    _pytree.register_pytree_node(cls, lambda r: (list(r), None),
                                 lambda children, _: cls(tuple(children)))


__all__ = []
for _cls in list(_RETURN_TYPES.values()):
    _register(_cls)
_ON_NEW.append(_register)
__all__.sort()

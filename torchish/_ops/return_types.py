"""`torch.return_types`: the classes of the tuples PyTorch's multi-output ops return. PyTorch's
are structseqs (CPython's `os.stat_result` kind): tuple subclasses with named read-only fields,
`n_fields`, built from one sequence, with none of a named tuple's `_fields`, `_asdict`,
`_replace` or `_make`. Ours behave so, and are JAX pytree nodes (for torchish.compile, jax.jit)."""
import operator

import jax

RETURN_TYPES = {}   # by name: every return type, exported by torchish.return_types
ON_NEW = []   # callbacks given each class made after them (torchish.return_types registers
# them as torch.utils._pytree nodes)


class _ClassOnly:
    """The field names as a class attribute for torchish's own code (`returns._fields` of an op
    declaration, read by recording and out_arg); an instance has no such attribute, as
    PyTorch's structseqs."""

    def __init__(self, fields):
        self.fields = fields

    def __get__(self, obj, cls=None):
        if obj is not None:
            raise AttributeError("_fields")   # (then __getattr__ gives PyTorch's text)
        return self.fields


def _new(name, fields):
    shown = f"torch.return_types.{name}"

    def __new__(cls, *args, **kwargs):
        if len(args) == len(fields) > 1 and not (len(args) == 2 and isinstance(args[1], dict)):
            return tuple.__new__(cls, args)   # our own callers: the fields one by one
        if not args and "sequence" not in kwargs:
            raise TypeError("structseq() missing required argument 'sequence' (pos 1)")
        sequence = args[0] if args else kwargs["sequence"]
        try:
            values = tuple(sequence)
        except TypeError:
            raise TypeError("constructor requires a sequence") from None
        if len(values) != len(fields):
            raise TypeError(f"{shown}() takes a {len(fields)}-sequence ({len(values)}-sequence "
                            f"given)")
        return tuple.__new__(cls, values)
    return __new__


def _setattr(name, fields):
    shown = f"torch.return_types.{name}"

    def __setattr__(self, attr, value):
        if attr in fields:
            raise AttributeError("readonly attribute")
        raise AttributeError(f"'{shown}' object has no attribute '{attr}'")
    return __setattr__


_HIDDEN = {"_fields", "__slots__", "__getattr__", "__module__"}


def _rt(name, fields=("values", "indices")):
    """The class `torch.return_types.<name>` (made once: modules share it)."""
    fields = tuple(fields)
    known = RETURN_TYPES.get(name)
    if known is not None:
        assert known._fields == fields, name
        return known
    shown = f"torch.return_types.{name}"

    def __getattr__(self, attr):
        raise AttributeError(f"'{shown}' object has no attribute '{attr}'")

    def __repr__(self):
        return f"{shown}(\n" + ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self)) + ")"

    def __reduce__(self):
        return type(self), (tuple(self), {})

    def __dir__(self):   # (what PyTorch's lists: not our own hooks)
        return sorted(set(object.__dir__(self)) - _HIDDEN)

    namespace = {f: property(operator.itemgetter(i)) for i, f in enumerate(fields)}
    namespace.update(
        __slots__=(), __new__=_new(name, fields), __repr__=__repr__, __reduce__=__reduce__,
        __dir__=__dir__, __getattr__=__getattr__, __setattr__=_setattr(name, fields), __match_args__=fields,
        __doc__=None, _fields=_ClassOnly(fields), n_fields=len(fields),
        n_sequence_fields=len(fields), n_unnamed_fields=0,
        # (torchish.return_types holds it, so it pickles; presented as torch.return_types.<name>
        # where `torch` is torchish, as the other classes: _torch_alias.present_as_torch)
        __module__="torchish.return_types")
    cls = RETURN_TYPES[name] = type(name, (tuple,), namespace)
    jax.tree_util.register_pytree_node(cls, lambda r: (tuple(r), None),
                                       lambda _, children: tuple.__new__(cls, children))
    for callback in ON_NEW:
        callback(cls)
    return cls


for _name in ("max", "min", "sort", "topk", "kthvalue", "mode", "median", "cummax", "cummin",
              "nanmedian"):
    _rt(_name)
_rt("aminmax", ("min", "max"))
_rt("frexp", ("mantissa", "exponent"))
_rt("histogram", ("hist", "bin_edges"))
_SLOGDET = _rt("slogdet", ("sign", "logabsdet"))
_LINALG_SLOGDET = _rt("linalg_slogdet", ("sign", "logabsdet"))

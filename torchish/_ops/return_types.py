"""`torch.return_types`: the named tuples PyTorch's multi-output ops return."""
import collections

from .._dtype import missing_attribute


RETURN_TYPES = {}   # by name: every return type, exported by torchish.return_types


def _rt(name, fields=("values", "indices")):
    """The named tuple class `torch.return_types.<name>` (made once: modules share it)."""
    known = RETURN_TYPES.get(name)
    if known is not None:
        assert known._fields == tuple(fields), name
        return known
    cls = RETURN_TYPES[name] = collections.namedtuple(name, fields)
    # (torchish.return_types holds it, so it pickles; presented as torch.return_types.<name>
    # where `torch` is torchish, as the other classes: _torch_alias.present_as_torch)
    cls.__module__ = "torchish.return_types"
    # PyTorch's are structseqs, built from one sequence (`torch.return_types.max((v, i))`, as
    # pytree's unflatten does); our own callers pass the fields one by one
    made = cls.__new__

    def __new__(kind, *args, **kwargs):
        if len(args) == 1 and not kwargs and len(fields) > 1:
            args = tuple(args[0])
            if len(args) != len(fields):
                raise TypeError(f"torch.return_types.{name}() takes a {len(fields)}-sequence "
                                f"({len(args)}-sequence given)")
        return made(kind, *args, **kwargs)
    cls.__new__ = __new__
    cls.n_fields = cls.n_sequence_fields = len(fields)
    cls.n_unnamed_fields = 0
    cls.__getattr__ = missing_attribute(f"torch.return_types.{name}")
    cls.__repr__ = lambda self: (f"torch.return_types.{name}(\n" + ",\n".join(
        f"{f}={getattr(self, f)!r}" for f in fields) + ")")
    return cls


for _name in ("max", "min", "sort", "topk", "kthvalue", "mode", "median", "cummax", "cummin",
              "nanmedian"):
    _rt(_name)
_rt("aminmax", ("min", "max"))
_rt("frexp", ("mantissa", "exponent"))
_rt("histogram", ("hist", "bin_edges"))
_SLOGDET = _rt("slogdet", ("sign", "logabsdet"))
_LINALG_SLOGDET = _rt("linalg_slogdet", ("sign", "logabsdet"))

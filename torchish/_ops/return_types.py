"""`torch.return_types`: the named tuples PyTorch's multi-output ops return."""
import collections

from .._dtype import missing_attribute


def _rt(name, fields=("values", "indices")):
    """A named tuple class that prints as `torch.return_types.<name>(...)`."""
    cls = collections.namedtuple(name, fields)
    cls.__module__ = "torch.return_types"
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


RETURN_TYPES = {n: _rt(n) for n in ("max", "min", "sort", "topk", "kthvalue", "mode",
                                    "median", "cummax", "cummin", "nanmedian")}
RETURN_TYPES["aminmax"] = _rt("aminmax", ("min", "max"))
RETURN_TYPES["frexp"] = _rt("frexp", ("mantissa", "exponent"))
RETURN_TYPES["histogram"] = _rt("histogram", ("hist", "bin_edges"))
_SLOGDET = RETURN_TYPES["slogdet"] = _rt("slogdet", ("sign", "logabsdet"))
_LINALG_SLOGDET = RETURN_TYPES["linalg_slogdet"] = _rt("linalg_slogdet", ("sign", "logabsdet"))

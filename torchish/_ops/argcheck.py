"""Argument types, as PyTorch's python argument parser checks them: what `op` derives from a
declaration (`_argcheck`) and the check a new plan runs (`_check_arguments`)."""
import inspect

from .errors import argument_error
from .opdef import DIM_NAMES, LIST_NAMES, given


def _argcheck(opname, params, dyn, statics, scalar_operands, public):
    """What `_check_arguments` needs, from the declaration; None: the op is not checked."""
    if scalar_operands is None:
        if not public or opname.startswith("_"):
            return None
        scalar_operands = False
    numbers = frozenset(dyn if scalar_operands is True else scalar_operands or ())
    unknown = numbers - set(dyn)
    if unknown:
        raise ValueError(f"{opname}: scalar_operands names no dynamic parameter: {unknown}")
    required = {p.name for p in params if p.default is inspect.Parameter.empty}
    defaults = {p.name: p.default for p in params}
    # (position, required, whether None is a valid value)
    dims = tuple((i, p in required, p not in required and getattr(defaults[p], "nullable", True))
                 for i, p in enumerate(statics) if p in DIM_NAMES)
    return numbers, LIST_NAMES.intersection(dyn), required.intersection(dyn), dims


def _check_arguments(definition, statics, kinds):
    """Raise PyTorch's TypeError for an operand its signature refuses (see `op`'s
    `scalar_operands`); asked when a plan is made, so valid calls never pay for it."""
    numbers, lists, required, dims = definition.argcheck
    for pname, kind in zip(definition.tensors, kinds):
        if kind is None:
            if pname in required:
                raise argument_error(definition, pname, "Tensor", type(None))
        elif isinstance(kind, type):
            if pname not in numbers:
                raise argument_error(definition, pname, "Tensor", kind)
        elif kind[0] == "?":
            if len(kind) == 4 and pname in lists:   # (PyTorch counts arguments from 0 here)
                raise TypeError(f"expected Tensor as element {kind[2]} in argument "
                                f"{list(definition.sig.parameters).index(pname)}, but got "
                                f"{kind[3].__name__}")
            raise argument_error(definition, pname, "Tensor", kind[1])
        elif kind[0] == "L" and pname not in lists:
            raise argument_error(definition, pname, "Tensor", list)
    if definition.joint_scalars and any(isinstance(k, type) for k in kinds) and any(
            isinstance(k, tuple) and not k[1] for k in kinds[1:]):
        got = ["NoneType" if k is None else k.__name__ if isinstance(k, type) else "Tensor"
               for k in kinds]
        raise argument_error(definition, None, None, got, "mixed")
    for i, required_dim, nullable in dims:
        value = statics[i]
        if not ((value is None and nullable) or _is_index(value) or not given(value) or (
                isinstance(value, (list, tuple)) and all(map(_is_index, value)))):
            raise argument_error(definition, definition.statics[i], "int", type(value),
                                    "must" if required_dim else "combination")
    for name, needs in definition.given_with.items():
        value = statics[definition.statics.index(name)]
        if given(value) and not given(statics[definition.statics.index(needs)]):
            raise argument_error(definition, name, None, type(value), "combination")


def _is_index(value):
    return hasattr(type(value), "__index__")

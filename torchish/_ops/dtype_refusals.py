"""Ops PyTorch refuses for a family of dtypes, declared per family and asked in one place.

JAX computes nearly everything for every dtype; PyTorch's CPU kernels do not: complex
operands reach kernels dispatched on real types only, the "shell" unsigned types
(uint16/32/64) and the float8 types have only a handful of kernels. Each family declares a
`Family` (complex_refusals.py, unsigned_support.py, float8_refusals.py):
- `members`: its dtypes;
- `dispatch(definition, kinds, compute)`: the dtype the call's kernel dispatches on (the
  promoted dtype for a family of kernels picked by it, an operand's for the others), or None;
- `ops`: op name -> refusal, for the ops the dispatcher runs;
- `others`: name -> refusal, for code outside the dispatcher (creation, random fills, Python
  composites), which calls `refuse`.
A refusal is a kernel name (PyTorch's NotImplementedError '"<kernel>" not implemented for
'<dtype>''), an (exception type, message) pair ("{dtype}" in it: PyTorch's name of the dtype),
None (that overload has a kernel), or a function of (statics, kinds) giving one of those.

`check` runs where a plan is built (plans.Plan), after promotion: once per op signature, so
a refused call raises every time and an allowed one costs nothing after its first call, and
traced calls (whose kinds carry dtypes) refuse alike.
"""
import importlib

__all__ = ["Family", "check", "refuse", "validate", "FAMILIES"]

FAMILIES = []


class Family:
    __slots__ = ("name", "members", "dispatch", "ops", "others", "aliases")

    def __init__(self, name, members, dispatch, ops, others=None, aliases=False):
        self.name = name
        self.aliases = aliases   # (its table may list alias names too: not validated)
        self.members = frozenset(members)
        self.dispatch = dispatch
        self.ops = ops
        self.others = others or {}
        FAMILIES.append(self)


def _error(refusal, d):
    if isinstance(refusal, str):
        return NotImplementedError(f'"{refusal}" not implemented for \'{d._legacy}\'')
    exc, message = refusal
    return exc(message.replace("{dtype}", d._legacy))


def _resolve(refusal, statics, kinds):
    return refusal(statics, kinds) if callable(refusal) else refusal


def check(definition, statics, kinds, compute):
    """Raise PyTorch's error when a family refuses the op `definition` for this call:
    `statics` maps static argument names to values, `kinds` are the operands' kinds, `compute`
    the promoted dtype (None for ops without promotion)."""
    name = definition.name
    for family in FAMILIES:
        refusal = family.ops.get(name)
        if refusal is None:
            continue
        d = family.dispatch(definition, kinds, compute)
        if d is None or d not in family.members:
            continue
        refusal = _resolve(refusal, statics, kinds)
        if refusal is not None:
            raise _error(refusal, d)


def refuse(name, *dtypes, statics=None):
    """PyTorch's refusal of `name` (an `others` entry, else an `ops` entry) for the first of
    `dtypes` (None entries skipped) a family with such an entry has; for callers outside the
    dispatcher."""
    for family in FAMILIES:
        refusal = family.others.get(name, family.ops.get(name))
        if refusal is None:
            continue
        members = [d for d in dtypes if d is not None and d in family.members]
        if not members:
            continue
        kinds = tuple((d, False) for d in dtypes if d is not None)
        refusal = _resolve(refusal, statics or {}, kinds)
        if refusal is not None:
            raise _error(refusal, family.dispatch(None, kinds, None) or members[0])


def validate(registry):
    """Every `ops` entry names a declared op (called once all op families are imported)."""
    for family in FAMILIES:
        if family.aliases:
            continue
        missing = sorted(n for n in family.ops if n not in registry)
        if missing:
            raise KeyError(f"{family.name} refusals name no op: {missing}")


# ---- dispatch rules shared by families --------------------------------------------------

def tensor_dtypes(kinds):
    """The dtypes of the tensor operands among `kinds` (tensor lists flattened), in order."""
    for k in kinds:
        if type(k) is tuple and k:
            if k[0] == "L":
                yield from tensor_dtypes(k[1])
            elif not isinstance(k[0], str):
                yield k[0]


def compute_or_operand(members, on_operand=frozenset(), common=frozenset()):
    """A dispatch rule for kernels chosen by the dtype they compute in (the op's promoted
    dtype): `a + 1.5` picks a float kernel, `a + 1` one of the operand's type; ops without
    promotion (indexing, flips) dispatch on their first member operand; ops in `on_operand`
    run a refused kernel on the operand before their result dtype applies; ops in `common`
    run in the tensor operands' common dtype though declared without promotion."""
    def dispatch(definition, kinds, compute):
        name = definition.name if definition is not None else None
        if compute is not None and name not in on_operand:
            return compute
        if name in common:
            from .. import _dtype as dt
            return dt.result_dtype([k[0] for k in kinds if type(k) is tuple and k
                                    and isinstance(k[0], dt.dtype)], [], [])
        for d in tensor_dtypes(kinds):
            if d in members:
                return d
        return None
    return dispatch


# the families declare themselves when imported (whichever module is imported first)
for _module in ("complex_refusals", "unsigned_support", "float8_refusals"):
    importlib.import_module(f"{__package__}.{_module}")

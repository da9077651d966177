"""What an op declaration is: `OpDef` (what `op` registers), the type-promotion kinds, the
`omitted` markers of static defaults, and `REGISTRY`, every declared op by name.

The lowest layer of the registry (see `registry.py` for the whole picture)."""
import enum


class Promote(enum.Enum):
    NONE = 0              # operands keep their dtypes (shape ops, indexing)
    DEFAULT = 1           # promoted dtype in and out
    INT_TO_FLOAT = 2      # integer/bool results become the default float dtype (div, sqrt)
    ALWAYS_BOOL = 3       # compute in the promoted dtype, return bool (comparisons)
    COMPLEX_TO_FLOAT = 4  # complex inputs give real results (abs)
    INT_TO_LONG = 5       # bool/integer inputs accumulate in int64 (sum, cumsum, prod)
    INT_TO_FLOAT_REAL = 6  # integers give the default float, complex its real dtype (angle)


REGISTRY = {}

# Required parameters with these names are static (ints, shapes, strings) unless an op lists
# its dynamic parameters explicitly with `tensors=`.
STATIC_NAMES = frozenset({
    "dim", "dim0", "dim1", "dim2", "k", "n", "split_size_or_sections", "start", "length",
    "dimension", "size", "step", "shifts", "dims", "equation", "chunks", "reduce", "steps",
    "key", "shape", "stride", "dtype", "destination"})

# Dynamic parameters with these names take a list of Tensors (PyTorch's TensorList).
LIST_NAMES = frozenset({"tensors"})   # (cat, stack; take_along_dim's `indices` is one Tensor)

# Dynamic parameters with these names are non-differentiable operands (see `op`'s
# `non_differentiable`, which adds others: a loss's `target`, a class `weight`).
NON_DIFFERENTIABLE_NAMES = frozenset({"index", "indices", "mask", "condition", "offsets",
                                      "targets", "input_lengths", "target_lengths"})

# Static parameters holding a dimension (or dimensions): PyTorch's parser refuses other types.
DIM_NAMES = frozenset({"dim", "dim0", "dim1", "dim2"})


class OpDef:
    def __init__(self, name, body, tensors, statics, promote, promoted, grad_fn,
                 differentiable, saves, view, returns):
        self.name = name
        self.body = body
        self.tensors = tensors
        self.statics = statics
        self.promote = promote
        self.promoted = frozenset(promoted)
        self.grad_fn = grad_fn
        self.differentiable = differentiable
        self.saves = saves
        self.view = view
        self.returns = returns
        self.check = None
        self.check_traced = False
        self.kinds_check = None
        self.backward_refusal = None
        self.layout = None   # the result-layout rule (see result_layout.py)
        self.plans = {}

    def __repr__(self):
        return f"<op {self.name}>"


class Omitted:
    """The default of a static parameter whose mere presence picks PyTorch's overload:
    `x.sum()` is `sum` (SumBackward0) but `x.sum(None)` is `sum.dim_IntList` (SumBackward1);
    `sort(stable=False)` is SortBackward1. Declare `dim=omitted(None)`: the body, `view` and
    `check` receive the value, while `grad_fn` callables (and `given_with`) see the marker,
    so `given(statics["dim"])` tells the two calls apart. Prints as its value.
    `nullable=False`: PyTorch's overloads take the parameter only as a value (`prod`'s
    `int dim`): an explicit None is the parser's "invalid combination" TypeError."""
    __slots__ = ("value", "nullable")

    def __init__(self, value, nullable=True):
        self.value = value
        self.nullable = nullable

    def __repr__(self):
        return repr(self.value)


_OMITTED = {}


def omitted(value=None, *, nullable=True):
    """The marker default for `value` (one instance per value: plans are keyed on it)."""
    # (keyed by type too: False == 0)
    return _OMITTED.setdefault((type(value), value, nullable), Omitted(value, nullable))


def given(value):
    return not isinstance(value, Omitted)


def value_of(value):
    """What the body receives for a static argument (an `omitted` default's value)."""
    return value.value if isinstance(value, Omitted) else value


def in_overload(definition, statics, name):
    """Whether the overload PyTorch picked has static parameter `name` (and its node saves
    it): given, or not `omitted`, or going with a parameter that was given (`keepdim`)."""
    needs = definition.given_with.get(name)
    return given(statics[name]) or (needs is not None and given(statics[needs]))

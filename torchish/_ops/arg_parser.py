"""What PyTorch's Python argument parser does with keyword names and missing arguments,
for the generated bindings (`declare._generate`) of ops PyTorch binds from C++: NumPy's
`axis=` and `keepdims=` for `dim` and `keepdim`, and its TypeError for a required argument
left out. The `nn.functional` functions and the ops PyTorch writes in Python
(torch/functional.py, torch/_tensor.py) take neither: Python parses their calls."""
import inspect

# the parser's NumPy-compatible names (python_arg_parser.cpp). Not its `x`/`a`/`x1` for
# `input` and `x2` for `other`: hardly ever written, while every keyword-only parameter costs
# each call of every binary op about 20 ns.
NUMPY_NAMES = {"dim": ("axis",), "keepdim": ("keepdims",)}

# registry ops PyTorch defines in Python (torch/functional.py, torch/_tensor.py)
_PYTHON_LEVEL = frozenset({"cdist", "norm", "split", "tensordot"})


# torch.X functions torchish writes in Python (`_ops.plain_functions`) that PyTorch binds in
# C++: they are bound through `declare.parsed`, so that a call leaving out a required
# argument, passing an unknown keyword or too many positional arguments gets the parser's
# TypeError (checked against PyTorch 2.13 in tests/test_mend28.py)
PARSED_FUNCTIONS = frozenset("""
    allclose arange argwhere as_strided as_strided_ as_tensor asarray bartlett_window 
    bincount binomial blackman_window broadcast_to cat chunk clone column_stack combinations
    concat concatenate corrcoef cosine_similarity cov detach_ diagflat dsplit dstack empty_like
    equal eye fill fill_ flatten fliplr flipud float_power full full_like geqrf gradient
    hamming_window hann_window hsplit hstack imag index_put index_put_ is_same_size
    kaiser_window linspace logdet logspace lu_solve lu_unpack masked_select matmul matrix_exp
    multinomial nonzero  orgqr pairwise_distance pdist poisson qr  randint_like
    randn_like  ravel real repeat_interleave resize_as_ rot90 row_stack scalar_tensor
    segment_reduce select slogdet split_with_sizes std std_mean svd take_along_dim tensor
    tensor_split triangular_solve   unflatten var var_mean
    view_as_complex view_as_real vsplit vstack where zero_ reshape tile
    ones_like zeros_like tril_indices triu_indices
    """.split())


class _Required:
    """The default a generated binding gives its required parameters and the NumPy names,
    so that a call leaving one out reaches `parse` instead of Python's TypeError."""

    def __repr__(self):
        return "<required>"


REQUIRED = _Required()


# `nn=True` ops whose `nn.functional` form PyTorch writes in Python (`F.sigmoid(input)`),
# while it binds `torch.X` in C++: their `F.X` is a binding of its own (`declare.functional_ops`)
PYTHON_FUNCTIONAL = frozenset({"sigmoid", "tanh"})


def parsed_by_pytorch(definition, fname, dunder):
    """Whether PyTorch's parser reads this binding's arguments (the operators' are Python's;
    an `nn=True` op's `F.X`, the op's own function, is C++ but for `PYTHON_FUNCTIONAL`)."""
    return not (dunder or fname in _PYTHON_LEVEL or definition.name in _PYTHON_LEVEL)


def numpy_names(sig, self_param):
    """{parameter: its NumPy names} for `sig`'s parameters that have some."""
    return {p.name: tuple(a for a in NUMPY_NAMES[p.name] if a not in sig.parameters)
            for p in sig.parameters.values()
            if p.name in NUMPY_NAMES and p.name != self_param and p.kind is not p.VAR_POSITIONAL}


def parse(definition, name, self_param, values, names):
    """The binding's arguments `names` once NumPy's names are read and required ones checked
    (called only when one of those is absent or a NumPy name was given)."""
    params = definition.sig.parameters
    for param, aliases in numpy_names(definition.sig, self_param).items():
        given = [a for a in aliases if values[a] is not REQUIRED]
        if not given:
            continue
        if values[param] is not (REQUIRED if params[param].default is params[param].empty
                                 else params[param].default) or len(given) > 1:
            # the parameter was matched already: the parser knows no such keyword
            raise TypeError(f"{name}() got an unexpected keyword argument "
                            f"'{given[-1] if len(given) > 1 else given[0]}'")
        values[param] = values[given[0]]
    if self_param is not None and values[self_param] is REQUIRED:
        self_param = None   # (no self: the function form, `torch.abs_()`, an in-place
        # method PyTorch also binds as a function taking `input` first)
    elif self_param is not None and name.endswith("_"):
        from .._tensor import Tensor
        if not isinstance(values[self_param], Tensor):   # (its first argument's check)
            from .declare import _caller
            from .errors import inplace_self_error
            raise inplace_self_error(definition, name, self_param, values, _caller(1, name))
    ordered = [p for p in params.values()
               if p.name != self_param and p.kind is not p.VAR_POSITIONAL]
    missing = [i for i, p in enumerate(ordered) if values[p.name] is REQUIRED]
    if missing:
        from .declare import _caller
        from .errors import earlier_type_error
        raise _overloads_error(definition, name, self_param, values, ordered) or \
            earlier_type_error(definition, name, self_param, values, _caller(1, name),
                               ordered[missing[0]].name) or \
            _missing(definition, name, ordered, missing[0])
    return tuple(values[n] for n in names)


def _overloads_error(definition, name, self_param, values, ordered):
    """Where PyTorch lists overloads of `name`, its parser's word on the call (which
    arguments it passed by keyword is read from the calling frame); else None."""
    from .declare import _caller
    from .errors import _keywords_of_call
    from .overloads import parser_error
    keywords = [k for k in _keywords_of_call(_caller(2, name)) if k in values]
    named = set(keywords).union(*(
        (p,) for p, aliases in NUMPY_NAMES.items() if set(aliases) & set(keywords)))
    passed = [p for p in ordered if p.name not in named]
    while passed and (values[passed[-1].name] is REQUIRED or
                      values[passed[-1].name] is passed[-1].default):
        passed.pop()   # (left out, or a trailing default the call need not have passed)
    return parser_error(name, self_param is not None, [values[p.name] for p in passed],
                        {k: values[k] for k in keywords})


def _missing(definition, name, ordered, first):
    # every required parameter from the first one missing on, passed by keyword or not, with
    # the plural the other way round
    names = [f'"{p.name}"' for p in ordered[first:] if p.default is inspect.Parameter.empty]
    return TypeError(f"{name}() missing {len(names)} required positional argument"
                     f"{'s' if len(names) == 1 else ''}: {', '.join(names)}")


def numpy_kwargs(kwargs):
    """`kwargs` with NumPy's names replaced by PyTorch's, for a Python-level wrapper of a
    generated binding that reads the arguments itself (`sorting._with_fix`)."""
    renamed = {a: p for p, names in NUMPY_NAMES.items() for a in names}
    return {renamed.get(k, k): v for k, v in kwargs.items()}


def numpy_axis(name, dim, axis, default):
    """`dim` of a Python-level function that also takes NumPy's `axis` (REQUIRED when the
    call did not give it)."""
    if axis is REQUIRED:
        return dim
    if dim != default:   # (dim given: the parser matched it, and knows no `axis`)
        raise TypeError(f"{name}() got an unexpected keyword argument 'axis'")
    return axis

"""Declaring an op (`op`): the `OpDef` it registers and the bindings generated from it
(`torchish.X`, `Tensor.X`, `Tensor.X_`, the dunders), each a function with the body's
signature that calls the dispatcher."""
import copy
import functools
import inspect
import sys

from .._tensor import Tensor
from .arg_parser import (_PYTHON_LEVEL, PYTHON_FUNCTIONAL, REQUIRED, numpy_names, parse,
                         parsed_by_pytorch)
from .argcheck import _argcheck, check_dims, sequence_dims, varargs_check
from .dispatch import dispatch, dispatch_out
from .errors import (_PACKAGE, _WRAPPERS, ArgumentTypeError, hidden_overloads,
                     hidden_overloads_error, inplace_self_error, too_many_positional,
                     unexpected_keywords)
from .inplace import dispatch_inplace
from .result_layout import default_layout
from .overloads import table
from .opdef import NON_DIFFERENTIABLE_NAMES, REGISTRY, STATIC_NAMES, OpDef, Promote
from .recording import _saved_outputs
from .torch_function import _REPORTED_AS, _register

# the dispatcher a generated binding calls, by `_generate`'s `entry`
_ENTRIES = {"dispatch": dispatch, "dispatch_inplace": dispatch_inplace}


def op(name=None, *, promote=Promote.DEFAULT, promoted=None, tensors=None, grad_fn=None,
       differentiable=True, saves="inputs", view=None, multi_view=False, returns=None,
       function=True, method=True, inplace=False, dunders=(), nn=False, aliases=(),
       inplace_grad_fn=None, check=None, check_traced=False, kinds_check=None,
       opmath_scalars=False, opmath=False,
       scalar_operands=None, joint_scalars=False, casts_input=False, identity_if=None,
       given_with=None, non_differentiable=(), scalars_as_tensors=False, kernel=None,
       optional_tensors=None, saved_as=None, inplace_backward=None,
       cpp_out_name=None, layout=False, undefined_grad=None, ints_check=None,
       inplace_error=None, scalar_flags=None, backward_refusal=None):
    """Declare an op (see `registry`'s docstring); returns the generated public function.

    grad_fn:   the PyTorch node name, or a callable (kinds, statics) -> name where `kinds`
               is a tuple per dynamic parameter of "T" (tensor), "s" (scalar), None or "L".
    saves:     "inputs" | "result" | () | a tuple of parameter names and outputs | a dict
               {parameter: the parameters whose gradient needs it}: which values PyTorch
               saves for backward (modifying them in place makes backward raise; saved-tensor
               hooks pack them, inputs first). An output is "result" (the differentiable
               outputs), "result<n>" (output n) or a field of `returns` ("indices"), which
               wins over a parameter of the same name; `grad_fn._saved_<name>` reads it.
               Or a callable (kinds) -> one of those, where PyTorch's overloads save
               different values (`pow`'s PowBackward0/1/2).
    view:      callable(*dynamic_args, **statics) -> view steps (or None: not a view this
               time); the view aliases the first tensor argument. View ops compute no value
               (the view reads its base lazily), so `view` must also validate the arguments.
    multi_view: the op returns several views (split, unbind): `view` gives a list of steps
               per output.
    method:    True binds Tensor.<name> with the first parameter as self; a parameter name
               binds with that parameter as self.
    check:     callable(compute_dtype, *dynamic_args, **statics) -> exception or None, asked
               about the operands as passed (Tensors, scalars) when no operand is a JAX
               tracer; what it returns is raised once the forward has run. For errors PyTorch
               raises from values (integer division by zero), which a compiled body cannot.
    check_traced: True: `check` is asked about traced operands too (inside `torchish.compile`
               or a transform); it must then read only what a tracer knows (shapes, dtypes),
               so shape errors it finds are raised there as well.
    kinds_check: callable(kinds) raising PyTorch's error for operand dtypes it refuses
               (kinds: a tensor's `(dtype, is 0-d, ...)`, a Python scalar's type); asked when
               a plan is made, so valid calls never pay for it.
    inplace_grad_fn: the node name of the in-place variant when PyTorch's differs
               (`elu_` records EluBackward1).
    inplace_backward: the in-place variant's gradient from its result, where PyTorch's
               formula reads the result (`elu_`: is_result=True): callable(grad, result,
               **statics) -> the gradient of self, on arrays, raising PyTorch's backward
               errors. That node saves (and packs) the result, not self, and its backward reads
               what unpacking gives. (An op with one tensor parameter.)
    opmath_scalars: for a half-precision (bfloat16, float16) result, a Python scalar or
               0-d `other` keeps float32, as PyTorch's CPU kernels take it (`x * 0.1`
               rounds once, not 0.1 first).
    scalar_operands: which dynamic parameters take a Python number where PyTorch's signature
               says Tensor: True (all: `add`, whose name PyTorch's parser lets numbers stand
               for tensors, or `isin`, with Scalar overloads for each), a tuple of names
               (those with a Scalar overload: `pow`'s, `eq`'s `other`), or False (none).
               Anything else in a Tensor parameter (a list, None where there is no default,
               a string) is PyTorch's TypeError "argument 'x' (position n) must be Tensor".
               Default None: False for public ops (a `torchish.X`, `Tensor.X` or
               `nn.functional.X` binding), unchecked for private ones, whose callers are
               torchish's own code. Parameters named in `LIST_NAMES` take lists.
    joint_scalars: the `scalar_operands` share one Scalar overload (clamp's min and max): a
               number beside a tensor of one or more dims is PyTorch's "invalid combination"
               TypeError; a 0-d tensor beside a number is read as a number.
    casts_input: a `dtype` argument converts `input` before the op runs (a ToCopyBackward0
               node of its own), as PyTorch's softmax and log_softmax do.
    identity_if: a predicate on the input Tensor; where it holds, the function and method
               return the input itself (PyTorch's conj, positive and real of a real tensor:
               the same object, no node).
    given_with: {parameter: the parameter it needs}: static parameters (defaults
               `omitted(...)`) that only an overload taking the other has, as `keepdim`
               only comes with `dim` (`x.sum(keepdim=True)` is PyTorch's "invalid
               combination" TypeError).
    opmath:    a half-precision (bfloat16, float16) compute dtype computes in float32 and
               rounds the result once, as PyTorch's CPU kernels do; JAX would round every
               intermediate (and constant) to the half type.
    non_differentiable: tensor parameters PyTorch's derivative formulas declare
               non-differentiable besides those named in `NON_DIFFERENTIABLE_NAMES` (indices,
               masks): the node has no edge for them (`next_functions` leaves them out), and
               one that requires grad is PyTorch's "not differentiable with respect to
               argument" error.
    scalars_as_tensors: a Python number in a tensor parameter counts as a (wrapped) tensor
               operand, with a `(None, 0)` edge, as PyTorch's parser wraps numbers for
               add/sub/mul/div; otherwise a number selects PyTorch's Scalar overload, whose
               node has no edge for it (`x.pow(2)`, `x.clamp(0, 1)`).
    optional_tensors: the parameters PyTorch types `Tensor?`: absent (None), its node still
               has an (undefined) edge for them, `(None, 0)` in `next_functions`. Default:
               the tensor parameters whose default is None.
    saved_as:  {PyTorch's name in `grad_fn._saved_<name>`: the parameter it reads}, where the
               body's parameter names are not PyTorch's (`_rpow`: `self` is `other`), a
               callable(**statics, **operand values) giving a value the body derives (selu's
               `scale`, a slice's `end`), or returning autograd.saved_tensors.ABSENT where
               this call's node has no such field, or None for a body parameter whose name
               PyTorch's node has no field for.
    cpp_out_name: callable(kinds) -> True where PyTorch's error for a result its in-place
               form cannot write names the tensor's dtype as C++ does ("long int", not
               "Long"), as clamp's Scalar overloads do.
    kernel:    PyTorch's kernel name in its messages (default: the op's name without a
               leading underscore), or a callable (kinds, statics) -> name.
    undefined_grad: callable(**statics) -> True where PyTorch's derivative formula
               gives every operand an undefined gradient (norms of order 0): the node's
               backward sends None, so `.grad` stays None; or the positions of operands
               whose formula then computes with the undefined gradient (dist's `other`), so
               a backward needing their gradient raises PyTorch's error.
    ints_check: (static parameter names, callable(the binding's arguments by name)) raising
               PyTorch's TypeError for them, asked by the binding before the plan lookup
               whenever one of them is no int (a plan key cannot tell `[1.0, 3]` from
               `[1, 3]`), where PyTorch's errors for them are no parser error of the op's own
               (`split`: a Python-level function there, calling `split_with_sizes` for a
               sequence).
    inplace_error: callable(*dynamic_args) -> PyTorch's exception or None, asked when the
               in-place form fails (its forward raises a RuntimeError, or its result's shape
               is not self's), where PyTorch's in-place kernel says something else than the
               out-of-place one (`addmm_`: "Bad in-place call: ...").
    scalar_flags: {keyword of the body: dynamic parameter}: the body's keyword is told whether
               that operand came as a Python number (PyTorch's Scalar overload) rather than a
               tensor, a 0-d one included: the arrays the body gets cannot tell, its plan's
               operand kinds can (complex `pow`'s Scalar-exponent shortcuts). No binding
               takes the keyword.
    backward_refusal: callable(kinds, statics) -> the exception PyTorch's backward raises for
               these operand kinds (its formula calls a kernel that lacks their dtype), or
               None; asked once per plan when its pullback is made (`recording`).
    layout:    the rule laying out the results' memory as PyTorch's kernel does, a callable
               (definition, operand tensors, results) from `result_layout` (default: that
               module's rule for the op's name or family; None: row-major results).
    """
    def deco(body):
        opname = name or body.__name__
        sig = inspect.signature(body)
        if scalar_flags:   # (the bindings' signature leaves the flags out)
            sig = sig.replace(parameters=[p for p in sig.parameters.values()
                                          if p.name not in scalar_flags])
        params = list(sig.parameters.values())
        dyn = tuple(tensors) if tensors is not None else tuple(
            p.name for p in params if p.default is inspect.Parameter.empty
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY)
            and p.name not in STATIC_NAMES)
        statics = tuple(p.name for p in params if p.name not in dyn)
        definition = OpDef(opname, body, dyn, statics, promote,
                           dyn if promoted is None else promoted, grad_fn, differentiable,
                           saves, view, returns)
        definition.inplace_grad_fn = inplace_grad_fn
        definition.saved_outputs = _saved_outputs(saves, returns)
        definition.check = check
        definition.check_traced = check_traced
        definition.kinds_check = kinds_check
        definition.backward_refusal = backward_refusal
        definition.undefined_grad = undefined_grad
        definition.cpp_out_name = cpp_out_name
        definition.opmath_scalars = opmath_scalars
        definition.opmath = opmath
        definition.scalar_operands = scalar_operands
        definition.bound = bool(function or method or nn or dunders or inplace)
        definition.argcheck = _argcheck(opname, params, dyn, statics, scalar_operands,
                                        definition.bound)
        definition.joint_scalars = joint_scalars
        definition.casts_input = casts_input
        definition.identity_if = identity_if
        definition.given_with = dict(given_with or {})
        definition.non_differentiable = tuple(
            n for n in dyn if n in NON_DIFFERENTIABLE_NAMES) + tuple(non_differentiable)
        definition.scalars_as_tensors = scalars_as_tensors
        definition.optional_tensors = frozenset(p.name for p in params if p.name in dyn and (
            p.default is None if optional_tensors is None else p.name in optional_tensors))
        definition.kernel = kernel
        definition.layout = default_layout(opname, body.__module__) if layout is False \
            else layout
        definition.saved_as = dict(saved_as or {})
        definition.multi_view = multi_view
        definition.varargs = next((p.name for p in params if p.kind is p.VAR_POSITIONAL),
                                  None)
        # parameters passed positionally (those before *varargs); the rest go by keyword
        definition.positional = tuple(p.name for p in params[:[q.kind for q in params].index(
            inspect.Parameter.VAR_POSITIONAL)]) if definition.varargs else ()
        definition.inplace_backward = None
        definition.ints_check = ints_check
        definition.inplace_error = inplace_error
        if scalar_flags:
            definition.plans = _FlaggedPlans(definition, scalar_flags)
        REGISTRY[opname] = definition
        definition.sig = sig
        definition.bindings = {"function": function, "method": method, "inplace": inplace,
                               "dunders": dunders, "nn": nn, "aliases": aliases}
        fn = _generate(definition, sig, "dispatch")
        _register(fn, definition, "torch." + opname)
        definition.function = fn
        if inplace:
            definition.inplace_fn = _generate(definition, sig, "dispatch_inplace",
                                              opname + "_", self_param=next(iter(sig.parameters)))
            _register(definition.inplace_fn, definition, opname + "_", method=True)
        _bind(definition, sig)
        definition.inplace_variant = None if inplace_backward is None else \
            _from_result(definition, inplace_backward)
        return fn
    return deco


class _FlaggedPlans(dict):
    """The plans of an op declaring `scalar_flags`: a plan is stored (before its forward is
    first traced) with a variant of the op whose body has the flags its operand kinds give."""

    def __init__(self, definition, flags):
        super().__init__()
        self._flags = tuple((flag, definition.tensors.index(param))
                            for flag, param in flags.items())
        self._definition = definition
        self._variants = {}

    def __setitem__(self, key, plan):
        flags = tuple(isinstance(plan.kinds[i], type) for _, i in self._flags)
        variant = self._variants.get(flags)
        if variant is None:
            variant = copy.copy(self._definition)
            variant.body = functools.partial(self._definition.body, **{
                flag: value for (flag, _), value in zip(self._flags, flags)})
            self._variants[flags] = variant
        plan.op = variant
        super().__setitem__(key, plan)


def _from_result(definition, backward):
    """The OpDef the in-place form plans with where its gradient comes from the result: it
    saves the result (`grad_fn._saved_result`), under the in-place node's name."""
    if len(definition.tensors) != 1:
        raise TypeError(f"{definition.name}: inplace_backward needs one tensor parameter")
    variant = copy.copy(definition)
    variant.plans = {}
    variant.saves = "result"
    variant.saved_outputs = ("result",)
    variant.inplace_backward = backward
    return variant


def _generate(definition, sig, entry, fname=None, out=False, self_param=None, dunder=False,
              python=False):
    """A Python function with the body's exact signature that calls the dispatcher.

    Generated source (like namedtuple) keeps argument parsing at Python's native speed.
    `out=True` adds PyTorch's keyword-only `out=None` (see `dispatch_out`). An argument type
    error of this op passing through gets the binding's name and, for a method (`self_param`:
    the parameter bound as self), positions counted without self; a dunder returns
    NotImplemented instead, so Python raises its own operator TypeError (`t + [1]`) or
    compares by identity (`t == None`). (A try block costs nothing until it catches.)
    Where PyTorch's argument parser reads the call, a required parameter defaults to a marker
    and NumPy's `axis`/`keepdims` are keyword-only parameters: `arg_parser.parse` handles a
    call that leaves one out or uses those names. As PyTorch's parser, a binding then checks
    the positional count first, a missing argument before an unknown keyword (`**_kw`), and
    words a count the listed overload(s) cannot take as "invalid combination" where PyTorch
    has several (or deprecated hidden ones: `errors._HIDDEN_OVERLOADS`). `python=True`: a
    binding PyTorch writes in Python (`arg_parser.PYTHON_FUNCTIONAL`), whose calls Python parses.
    """
    fname = fname or definition.name
    params, defaults, required = [], {}, []
    parsed = not python and parsed_by_pytorch(definition, fname, dunder)
    aliases = numpy_names(sig, self_param) if parsed else {}
    star = False
    # PyTorch also takes the sizes as one sequence by keyword (`x.permute(dims=(1, 0))`)
    keyword = _VARARGS_KEYWORD.get(definition.name) if not dunder else None
    for p in sig.parameters.values():
        text = p.name
        if p.kind is p.VAR_POSITIONAL:
            text = "*" + (p.name if keyword is None else "_varargs")
            star = True
        elif p.kind is p.KEYWORD_ONLY and not star:
            params.append("*")
            star = True
        if p.default is not inspect.Parameter.empty:
            defaults[f"_d_{p.name}"] = p.default
            text += f"=_d_{p.name}"
        elif p.kind is not p.VAR_POSITIONAL and parsed:
            required.append(p.name)   # (a missing one is PyTorch's TypeError, below)
            text += "=_REQUIRED"
        params.append(text)
    numpy = [a for names in aliases.values() for a in names]
    if numpy:
        params += [f"{a}=_REQUIRED" for a in numpy] if star else \
            ["*"] + [f"{a}=_REQUIRED" for a in numpy]
        star = True
    dyn = "".join(f"{n}, " for n in definition.tensors)
    stat = "".join(f"{n}, " for n in definition.statics)
    body = f"    return _entry(_op, ({dyn}), ({stat}))\n"
    if definition.identity_if is not None:
        first = next(iter(sig.parameters))
        body = (f"    if isinstance({first}, _Tensor) and _op.identity_if({first}):\n"
                f"        return {first}\n" + body)
    if definition.casts_input:
        body = ("    if dtype is not None and isinstance(input, _Tensor):\n"
                "        input, dtype = input.to(dtype), None\n" + body)
    if out:
        params += ["out=None"] if star else ["*", "out=None"]
        body = (f"    if out is not None:\n"
                f"        return _out(_op, ({dyn}), ({stat}), out, {fname!r})\n" + body)
    if definition.argcheck is not None:
        if definition.varargs and not dunder:   # (see `varargs_check`)
            # (as a plan key, (0, 1.0) is (0, 1): a size after the first that is no int is
            # found by the last one's class, or the sum's for more than two)
            v = definition.varargs
            body = (f"    if {v} and ({v}[0].__class__ is not int or {v}[-1].__class__ is not "
                    f"int or len({v}) > 2 and sum({v}).__class__ is not int):\n"
                    f"        {v} = _varargs_check(_op, {v}) or {v}\n"
                    f"        _check_dims(_op, ({stat}))\n" + body)
        for d in sequence_dims(definition):   # (see `check_dims`)
            # (as a plan key, (0, 1.0) is (0, 1): the first and last element are tested
            # inline, the middle ones of a longer sequence by `check_dims`)
            body = (f"    if {d}.__class__ in _SEQUENCES and {d} and ({d}[0].__class__ is not "
                    f"int or {d}[-1].__class__ is not int or len({d}) > 2):\n"
                    f"        _check_dims(_op, ({stat}))\n" + body)
        if definition.ints_check is not None and not dunder:
            names, _ = definition.ints_check
            body = (f"    if {' or '.join(f'{n}.__class__ is not int' for n in names)}:\n"
                    f"        _op.ints_check[1](locals())\n" + body)
        body = _catch_argument_errors(body, fname, self_param, dunder)
    if entry == "dispatch_inplace" and self_param is not None and not dunder:
        body = "".join("    " + line + "\n" for line in body.splitlines())
        body = ("    try:\n" + body + "    except AttributeError:\n"
                f"        if isinstance({self_param}, _Tensor):\n            raise\n"
                f"        raise _not_self(_op, {fname!r}, {self_param!r}, locals(), "
                f"_caller(0, {fname!r})) from None\n")
    if required or numpy:   # (one comparison per name: a call pays only for the `is`)
        names = required + [n for n in aliases if n not in required]
        tests = [f"{n} is _REQUIRED" for n in required] + [
            f"{a} is not _REQUIRED" for a in numpy]
        body = (f"    if {' or '.join(tests)}:\n"
                f"        {''.join(n + ', ' for n in names)}= _parse(_op, {fname!r}, "
                f"{self_param!r}, locals(), {tuple(names)!r})\n" + body)
    python_level = fname in _PYTHON_LEVEL or definition.name in _PYTHON_LEVEL
    method = self_param is not None
    if not (dunder or python_level) and (
            table(fname, method) is not None or hidden_overloads(fname, method) or
            (method and len(sig.parameters) == 1) or
            (parsed and (keyword is not None or any(n != self_param for n in required)))):
        # (PyTorch's parser words an unknown keyword its own way here: with overloads, or
        # where a required argument is also missing, which its check finds first; the
        # catch-all costs a call ~20 ns, so bindings whose parameters all have defaults
        # leave the message to Python, which words it as PyTorch does)
        params.append("**_kw")
        check = (f"    if _kw:\n        raise _unexpected(_op, {fname!r}, {self_param!r}, "
                 f"locals(), _kw, _caller(0, {fname!r}))\n")
        body = check + body
    more = parsed and not definition.varargs
    if more:   # (Python's own message for extra arguments counts them from 0: see above;
        # PyTorch's parser counts them before it reads keywords)
        if "*" in params:
            params[params.index("*")] = "*_more"
        else:
            params.insert(len(params) - (params[-1] == "**_kw"), "*_more")
        body = (f"    if _more:\n        raise _too_many(_op, {fname!r}, {self_param!r}, "
                f"locals(), _caller(0, {fname!r}))\n" + body)
        if method and len(sig.parameters) == 1 and "**_kw" in params:
            # (a method without parameters refuses keywords before counting, as Python's
            # own no-argument methods do)
            body = check + body.replace(check, "", 1)
    if keyword is not None and definition.varargs:
        v = definition.varargs   # (no sizes: missing, once the parser took `input`)
        params.insert(params.index("*_varargs") + 1, f"{keyword}=_REQUIRED")
        body = (f"    if {keyword} is _REQUIRED:\n"
                f"        if not _varargs and isinstance({next(iter(sig.parameters))}, _Tensor):\n"
                f"            raise _unexpected(_op, {fname!r}, "
                f"{self_param!r}, locals(), {{}}, _caller(0, {fname!r}))\n"
                f"        {v} = _varargs\n"
                f"    elif _varargs:\n        raise TypeError(\"{fname}() got multiple values "
                f"for argument '{keyword}'\")\n    else:\n        {v} = ({keyword},)\n" + body)
    src = f"def {fname}({', '.join(params)}):\n" + body
    namespace = dict(defaults, _entry=_ENTRIES[entry], _op=definition, _out=dispatch_out,
                     _ArgErr=ArgumentTypeError, _caller=_caller, _Tensor=Tensor,
                     _REQUIRED=REQUIRED, _varargs_check=varargs_check,
                     _parse=_parse_hidden if hidden_overloads(fname, method) else parse,
                     _check_dims=check_dims, _SEQUENCES=(tuple, list),
                     _unexpected=unexpected_keywords, _too_many=too_many_positional,
                     _not_self=inplace_self_error)
    exec(src, namespace)
    fn = namespace[fname]
    if more or "**_kw" in params:   # (introspection sees the parameters PyTorch documents)
        full = inspect.signature(fn)
        fn.__signature__ = full.replace(parameters=[
            p for p in full.parameters.values() if p.name not in ("_more", "_kw")])
    fn.__doc__ = definition.body.__doc__
    fn.__module__ = "torchish"
    # (Python names a function by it in its own TypeErrors; PyTorch's Python-level methods
    # are Tensor's)
    fn.__qualname__ = f"Tensor.{fname}" if self_param and python_level else fname
    return fn


# ops taking sizes as varargs -> PyTorch's keyword for them as one sequence
_VARARGS_KEYWORD = {"view": "size", "permute": "dims", "expand": "size", "repeat": "repeats"}


class _PythonLevel:
    """What the parser-error helpers read of an op, for a Python-level function."""

    def __init__(self, fn, name):
        self.name, self.sig, self.varargs = name, inspect.signature(fn), None
        self.fn = fn   # (`errors.earlier_type_error` runs it to find a wrong-typed argument)


def parsed(fn, name=None, method=False):
    """`fn`, a function torchish writes in Python where PyTorch binds one from C++ (`narrow`,
    `nn.functional.one_hot`), behind a generated wrapper of its signature that gives a call
    with a required argument left out, an unknown keyword or too many positional arguments
    PyTorch's parser's TypeError (with its overloads' wording where it lists several; as
    Tensor `method`, positions counted without self) instead of Python's. A valid call pays
    one more Python call (~60 ns) and the flag tests.

    The wrapper is compiled as if it stood at `fn`'s `def` (as `overrides.entry`'s are), so
    the code that looks for the user's frame (a message's keywords and positional count, a
    warning's stacklevel) counts it as torchish's; `errors.called_as_method` reads which form
    it is from its globals."""
    fn = getattr(fn, "_python_level", fn)   # (re-binding a wrapped function wraps it once)
    name = name or fn.__name__
    sig = inspect.signature(fn)
    params, call, defaults, required, star = [], [], {}, [], False
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"parsed({name}): *args/**kwargs are not supported")
        if p.kind is p.KEYWORD_ONLY and not star:
            params.append("*_more")
            star = True
        if p.default is p.empty:
            required.append(p.name)
            params.append(f"{p.name}=_REQUIRED")
        else:
            defaults[f"_d_{p.name}"] = p.default
            params.append(f"{p.name}=_d_{p.name}")
        call.append(p.name if p.kind is not p.KEYWORD_ONLY else f"{p.name}={p.name}")
    if not star:
        params.append("*_more")
    self_param = next(iter(sig.parameters)) if method else None
    tests = ["_more", "_kw"] + [f"{n} is _REQUIRED" for n in required]
    src = (f"def {name}({', '.join(params)}, **_kw):\n"
           f"    if {' or '.join(tests)}:\n"
           f"        raise _refuse(_op, {name!r}, {self_param!r}, locals(), "
           f"_caller(0, {name!r}))\n"
           f"    try:\n        return _fn({', '.join(call)})\n"
           f"    except (AttributeError, TypeError):\n"
           f"        _e = _retype(_op, {name!r}, {self_param!r}, locals(), "
           f"_caller(0, {name!r}))\n"
           f"        if _e is None:\n            raise\n"
           f"        raise _e from None\n")
    from .errors import not_a_tensor, parser_refusal
    namespace = dict(defaults, _fn=fn, _op=_PythonLevel(fn, name), _REQUIRED=REQUIRED,
                     _refuse=parser_refusal, _caller=_caller, _parsed_method=method,
                     _retype=not_a_tensor)
    code = fn.__code__
    exec(compile(src, code.co_filename, "exec"), namespace)
    wrapper = namespace[name]
    wrapper.__code__ = wrapper.__code__.replace(co_firstlineno=code.co_firstlineno)
    wrapper = functools.update_wrapper(wrapper, fn)
    del wrapper.__wrapped__   # (introspection sees `fn`'s signature through __signature__)
    wrapper.__signature__ = sig
    wrapper._python_level = fn
    return wrapper


def _parse_hidden(definition, name, self_param, values, names):
    """`parse` for a binding of `errors._HIDDEN_OVERLOADS`: too few arguments for the overload
    PyTorch lists are its "invalid combination" (`x.add()`), not a missing argument."""
    from .errors import _outside, call_arguments
    given = {k: v for k, v in values.items() if v is not REQUIRED}
    if self_param is not None and self_param not in given:
        self_param = None   # (the function form of an in-place method: `torch.addmv_()`)
    elif self_param is not None and name.endswith("_") and \
            not isinstance(given[self_param], Tensor):   # (`torch.addmv_("a")`)
        raise inplace_self_error(definition, name, self_param, values, _caller(1, name))
    error = hidden_overloads_error(name, self_param is not None, *call_arguments(
        definition, self_param, given, _outside(_caller(1, name))))
    if error is not None:
        raise error
    return parse(definition, name, self_param, values, names)


def _caller(depth, name=None):
    """The frame that called the generated binding `depth` + 1 frames up, past a Python-level
    function of torchish's of the binding's `name` (`cat` over the `cat` op's binding) and
    generic wrappers."""
    frame = sys._getframe(depth + 2)
    while name is not None and frame.f_code.co_name in (name, *_WRAPPERS) and \
            frame.f_code.co_filename.startswith(_PACKAGE) and frame.f_back is not None:
        frame = frame.f_back
    return frame


def _catch_argument_errors(body, fname, self_param, dunder):
    body = "".join("    " + line + "\n" for line in body.splitlines())
    handler = ("        return NotImplemented\n" if dunder else
               f"        raise e.finish({fname!r}, {self_param!r}, locals(), "
               f"_caller(0, {fname!r})) from None\n")
    return ("    try:\n" + body + "    except _ArgErr as e:\n"
            "        if e.op is not _op:\n            raise\n" + handler)


def _bind(definition, sig):
    b = definition.bindings
    method = b["method"]
    checked = definition.argcheck is not None
    names = (definition.name,) + tuple(b["aliases"])
    first = next(iter(sig.parameters))
    if method:
        self_param = method if isinstance(method, str) else first
        for name in names:
            meth = _generate(definition, sig, "dispatch", name, self_param=self_param) \
                if checked else definition.function
            if meth is not definition.function:
                _register(meth, definition, name, method=True, self_param=self_param)
            if self_param != first:
                meth = _reorder_method(meth, self_param, sig)
            setattr(Tensor, name, meth)
    # (an nn-only op's in-place form is F.X_ / F.X(inplace=True): no Tensor.X_, as in PyTorch)
    if b["inplace"] and (method or not b["nn"]):
        for name in names:
            if checked and name != definition.name:
                fn = _generate(definition, sig, "dispatch_inplace", name + "_", self_param=first)
                _register(fn, definition, name + "_", method=True)
            else:
                fn = definition.inplace_fn
            setattr(Tensor, name + "_", fn)
    for dunder in b["dunders"]:
        if dunder.startswith("__r") and dunder not in _SELF_FIRST_RDUNDERS and not (
                definition.name == "rsub" or definition.name.startswith("_r")):
            # (the operands come swapped: the subclass's routing `__rX__` dispatches it)
            setattr(Tensor, dunder, _swapped(definition, dunder) if checked else (
                lambda self, other, _f=definition.function: _f(other, self)))
            continue
        inplace = dunder in _INPLACE_DUNDERS
        fn = definition.inplace_fn if inplace else definition.function
        if checked:
            fn = _generate(definition, sig, "dispatch_inplace" if inplace else "dispatch",
                           dunder, dunder=True)
            _register(fn, definition, _REPORTED_AS.get(dunder, dunder), method=True,
                      dunder=dunder not in _UNARY_DUNDERS)
        setattr(Tensor, dunder, fn)


_UNARY_DUNDERS = frozenset({"__neg__", "__pos__", "__abs__", "__invert__"})


def _swapped(definition, dunder):
    """`Tensor.__radd__`: the op with the operands swapped; NotImplemented on a bad operand."""
    raw = _generate(definition, definition.sig, "dispatch", dunder, dunder=True)
    return lambda self, other: raw(other, self)


# reflected operators PyTorch binds to the op with the tensor first: `1 + x` is add(x, 1), so
# its node's edges are (x, the number)
_SELF_FIRST_RDUNDERS = frozenset({"__rshift__", "__radd__", "__rmul__"})

_INPLACE_DUNDERS = frozenset(f"__i{n}__" for n in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift",
    "rshift", "matmul"))


def _reorder_method(fn, self_name, sig):
    names = list(sig.parameters)
    pos = names.index(self_name)

    def method(self, *args, **kwargs):
        if len(args) < pos:   # (an argument before self left out: self by name)
            return fn(*args, **kwargs, **{self_name: self})
        args = list(args)
        args.insert(pos, self)
        return fn(*args, **kwargs)
    method.__name__ = fn.__name__
    return method


def public_functions():
    """name -> function for every op bound into the `torchish` namespace; those PyTorch
    gives `out=` (`out_arg.OUT_NAMES`) take it, under their own name (for its errors)."""
    from .out_arg import OUT_NAMES
    out = {}
    for d in REGISTRY.values():
        if d.bindings["function"]:
            for name in (d.name,) + tuple(d.bindings["aliases"]):
                # an alias gets its own binding where its errors name it
                if name in OUT_NAMES or (name != d.name and d.argcheck is not None):
                    out[name] = _generate(d, d.sig, "dispatch", name, out=name in OUT_NAMES)
                    _register(out[name], d, "torch." + name)
                else:
                    out[name] = d.function
    return out


def functional_ops():
    """name -> function for every `nn=True` op, as `torch.nn.functional` binds it."""
    out = {}
    for d in REGISTRY.values():
        if d.bindings["nn"]:
            out[d.name] = d.function
            if d.name in PYTHON_FUNCTIONAL:   # (Python parses its calls: a binding of its own)
                out[d.name] = _generate(d, d.sig, "dispatch", python=True)
                _register(out[d.name], d, "torch.nn.functional." + d.name)
    return out

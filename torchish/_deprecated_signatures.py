"""PyTorch's deprecated signatures of a few arithmetic ops, with the scalar first, as code older
than PyTorch 1.5 writes them (`p.data.add_(-lr, grad)`, `exp_avg_sq.addcmul_(1 - beta2, grad,
grad)`, `torch.addmm(beta, M, alpha, m1, m2)`); PyTorch 2.13 still takes them, warning once
per process. A call whose positional arguments fit one of these forms (numbers where its
scalars go, tensors elsewhere) is rewritten to the current signature, scalars by keyword; any
other call goes straight to the op's binding."""
import functools
import warnings

from ._tensor import Tensor
from ._warnings import _WARN_ALWAYS, user_stacklevel
from ._ops.torch_function import report_as

_MM = {"addmm": ("mat1", "mat2"), "addmv": ("mat", "vec"), "addr": ("vec1", "vec2"),
       "addbmm": ("batch1", "batch2"), "baddbmm": ("batch1", "batch2")}
# op -> its deprecated forms: parameter names in order, "#" marking a scalar
FORMS = {"add": [("input", "#alpha", "other")], "sub": [("input", "#alpha", "other")],
         "addcmul": [("input", "#value", "tensor1", "tensor2")],
         "addcdiv": [("input", "#value", "tensor1", "tensor2")],
         **{name: [("#beta", "input", "#alpha") + pair, ("#beta", "input") + pair]
            for name, pair in _MM.items()}}
_OUT_DTYPE = ("addmm", "baddbmm")   # (a second current function signature, with out_dtype)
_WARNED = [False]   # one warning per process, for whichever form comes first (as PyTorch's)


_NUMBERS = (int, float, complex, bool)


def _is_number(x):
    return isinstance(x, (int, float, complex)) or (isinstance(x, Tensor) and x.ndim == 0)


def _match(forms, args, kwargs, method):
    """(tensors, scalars by name, the form) of the deprecated form this call fits (its
    tensors after the positional arguments may come by keyword), or None."""
    for form in forms:
        params = [p for p in form if not (method and p == "input")]
        if len(args) > len(params) or not any(p[0] == "#" for p in params[:len(args)]):
            continue
        tensors, scalars = [], {}
        for p, a in zip(params, args):
            if p[0] == "#":
                if not _is_number(a):
                    break
                scalars[p[1:]] = a.item() if isinstance(a, Tensor) else a
            elif isinstance(a, Tensor):
                tensors.append(a)
            else:
                break
        else:
            rest = params[len(args):]
            if all(p[0] != "#" and isinstance(kwargs.get(p), Tensor) for p in rest) and \
                    not set(scalars) & set(kwargs):
                return tensors + [kwargs[p] for p in rest], scalars, params, rest
    return None


def _warn(name, params, method, forms):
    if _WARNED[0] and not _WARN_ALWAYS[0]:
        return
    _WARNED[0] = True
    out = "" if method else ", *, Tensor out = None"
    old = ", ".join(("Number " + p[1:]) if p[0] == "#" else "Tensor " + p for p in params)
    tensors = [p for p in forms[0] if p[0] != "#" and not (method and p == "input")]
    numbers = [p[1:] for p in forms[0] if p[0] == "#"]
    now = ", ".join("Tensor " + p for p in tensors)
    keywords = ", ".join(f"Number {p} = 1" for p in numbers) + \
        ("" if method else ", Tensor out = None")
    current = [f"{name}({now}, *, {keywords})"]
    if not method and name in _OUT_DTYPE:
        current.append(f"{name}({now}, torch.dtype out_dtype, *, {keywords})")
    warnings.warn(f"This overload of {name} is deprecated:\n\t{name}({old}{out})\nConsider "
                  f"using one of the following signatures instead:\n\t" + "\n\t".join(current)
                  + " (Triggered internally at /__w/pytorch/pytorch/torch/csrc/utils/"
                  "python_arg_parser.cpp:1841.)", UserWarning, stacklevel=user_stacklevel())


def _wrap(name, binding, method, forms):
    shortest = min(len(f) for f in forms)   # (counting self: a method's args do)
    first = forms[0].index(next(p for p in forms[0] if p[0] == "#"))   # (same in each form)
    if method and first > forms[0].index("input"):
        first -= 1
    first += method

    @functools.wraps(binding)
    def wrapper(*args, **kwargs):   # (a name errors._WRAPPERS lists: errors look past it)
        # cheap tests first: enough arguments, and a number where a deprecated form has one
        if len(args) + len(kwargs) >= shortest and len(args) > first and (
                type(args[first]) in _NUMBERS or _is_number(args[first])):
            found = _match(forms, args[method:], kwargs, method)
            if found is not None:
                tensors, scalars, params, by_keyword = found
                _warn(name, params, method, forms)
                rest = {k: v for k, v in kwargs.items() if k not in by_keyword}
                return binding(*args[:method], *tensors, **scalars, **rest)
        return binding(*args, **kwargs)
    return wrapper


def install(namespace):
    """Wrap the `torchish` functions (in `namespace`) and Tensor methods of these ops."""
    for op, forms in FORMS.items():
        binding = namespace[op]
        namespace[op] = _wrap(op, binding, False, forms)
        report_as(binding, namespace[op])   # (`func is torch.add` in __torch_function__)
        for name in (op, op + "_"):
            setattr(Tensor, name, _wrap(name, getattr(Tensor, name), True, forms))

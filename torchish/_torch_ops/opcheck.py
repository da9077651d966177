"""`torch.library.opcheck`: PyTorch's four registration checks of a custom operator, run on
sample arguments. Here a fake kernel is checked against the real kernel's results (torchish
has no fake tensors), and "aot_dispatch" runs the operator under `torchish.compile`."""
import numpy as np


class OpCheckError(Exception):
    pass


class MetadataMismatchError(RuntimeError):
    pass


def _tensors(tree):
    from .._tensor import Tensor
    if isinstance(tree, Tensor):
        yield tree
    elif isinstance(tree, (list, tuple)):
        for item in tree:
            yield from _tensors(item)
    elif isinstance(tree, dict):
        for item in tree.values():
            yield from _tensors(item)


def _copied(tree):
    """The arguments with every tensor a fresh copy (requires_grad kept), as PyTorch's checks
    each run on their own copies."""
    from .._tensor import Tensor
    if isinstance(tree, Tensor):
        return tree.detach().clone().requires_grad_(tree.requires_grad)
    if isinstance(tree, (list, tuple)):
        return type(tree)(_copied(t) for t in tree)
    if isinstance(tree, dict):
        return {k: _copied(v) for k, v in tree.items()}
    return tree


def _overload(op):
    from .namespace import OpOverload, OpOverloadPacket
    if isinstance(op, OpOverloadPacket):
        return op.default
    if isinstance(op, OpOverload):
        return op
    return op._opoverload   # (a CustomOpDef)


def _named_values(overload, args, kwargs):
    params = overload._schema.arguments
    named = dict(zip((p.name for p in params), args))
    named.update(kwargs)
    return [(p, named.get(p.name)) for p in params]


def check_schema(op, args, kwargs, **tolerances):
    from .. import no_grad
    overload = _overload(op)
    args, kwargs = _copied(args), _copied(kwargs)
    before = [(p, [t.detach().clone() for t in _tensors(v)])
              for p, v in _named_values(overload, args, kwargs)]
    op(*args, **kwargs)
    with no_grad():
        for (p, old), (_, value) in zip(before, _named_values(overload, args, kwargs)):
            if not p.is_write and any(not bool((a == b).all()) for a, b in
                                      zip(old, _tensors(value))):
                raise RuntimeError(f"Argument {p.name} is not defined as mutable but was "
                                   f"mutated")


def check_autograd_registration(op, args, kwargs, **tolerances):
    overload = _overload(op)
    kernel = overload._fn
    if not any(t.requires_grad for t in _tensors((args, kwargs))):
        return
    key = kernel._kernel()[0]
    if not kernel.opaque and key not in ("CompositeImplicitAutograd", "Autograd",
                                         "AutogradCPU"):
        raise AssertionError(f"{overload.name()}: at least one input tensor requires grad "
                             f"but the operator has a {key} kernel and no Autograd kernel "
                             f"(register one with torch.library.register_autograd)")


def _fake_of(op):
    """The op's fake kernel; PyTorch's refusal when it has none (tracing needs one)."""
    overload = _overload(op)
    fake = overload._fn.fake
    if fake is None:
        if not overload._schema.returns:   # (PyTorch generates the fake of such an op)
            return None
        from ..library import _opdef
        opdef = _opdef(op)
        name = opdef._init_fn.__name__ if opdef is not None else overload._opname
        raise RuntimeError(f"There was no fake impl registered for "
                           f"{opdef if opdef is not None else overload}. This is necessary "
                           f"for torch.compile/export/fx tracing to work. Please use "
                           f"`{name}.register_fake` to add an fake impl.")
    return fake


def check_faketensor(op, args, kwargs, **tolerances):
    from .. import no_grad
    fake = _fake_of(op)
    if fake is None:
        return
    with no_grad():
        real = op(*_copied(args), **_copied(kwargs))
        got = fake(*_copied(args), **_copied(kwargs))
    real_t, got_t = list(_tensors(real)), list(_tensors(got))
    if len(real_t) != len(got_t):
        raise RuntimeError(f"fake impl returned {len(got_t)} tensors, the kernel "
                           f"{len(real_t)}")
    for r, g in zip(real_t, got_t):
        problem = (f"Shapes {r.shape} and {g.shape} are not equal!" if r.shape != g.shape else
                   f"Dtypes {r.dtype} and {g.dtype} are not equal!" if r.dtype != g.dtype
                   else None)
        if problem:
            raise MetadataMismatchError(
                f"When comparing the output of {_overload(op)} on FakeTensor and concrete "
                f"Tensors, found mismatched tensor metadata: {problem}")


def check_aot_dispatch_dynamic(op, args, kwargs, rtol=None, atol=None):
    from .. import compile as compile_
    _fake_of(op)   # (PyTorch traces with the fake kernel)
    eager = op(*_copied(args), **_copied(kwargs))
    traced = compile_(lambda a, k: op(*a, **k))(_copied(args), _copied(kwargs))
    for e, t in zip(_tensors(eager), _tensors(traced)):
        np.testing.assert_allclose(t.detach().numpy(), e.detach().numpy(),
                                   rtol=1e-6 if rtol is None else rtol,
                                   atol=1e-6 if atol is None else atol)


TESTS = {"test_schema": check_schema,
         "test_autograd_registration": check_autograd_registration,
         "test_faketensor": check_faketensor,
         "test_aot_dispatch_static": check_aot_dispatch_dynamic,
         "test_aot_dispatch_dynamic": check_aot_dispatch_dynamic}
DEFAULT = ("test_schema", "test_autograd_registration", "test_faketensor",
           "test_aot_dispatch_dynamic")


def opcheck(op, args, kwargs=None, *, test_utils=DEFAULT, raise_exception=True, atol=None,
            rtol=None):
    kwargs = {} if kwargs is None else kwargs
    if isinstance(test_utils, str):
        test_utils = (test_utils,)
    if not isinstance(test_utils, (tuple, list)) or not set(test_utils) <= set(TESTS):
        raise ValueError(f"opcheck(op, ..., test_utils={test_utils}), expected test_utils to "
                         f"be subset of {tuple(TESTS)} but it was not")
    results = {}
    for name in test_utils:
        try:
            TESTS[name](op, args, kwargs, rtol=rtol, atol=atol)
            results[name] = "SUCCESS"
        except Exception as ex:
            if raise_exception:
                raise OpCheckError(f"opcheck(op, ...): {name} failed with {ex} (scroll up for "
                                   f"stack trace)") from ex
            results[name] = ex
    return results

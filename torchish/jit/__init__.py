"""`torch.jit`: TorchScript's decorators and entry points, run eagerly.

torchish has no TorchScript compiler; JAX's tracer plays that part (`torchish.compile`). So
`torch.jit.script` and `torch.jit.trace` hand back PyTorch's kinds of objects (a
RecursiveScriptModule, TopLevelTracedModule or ScriptFunction, see `_script`) that run the
Python code eagerly, computing exactly what the compiled version would, and the marker
decorators (`ignore`, `unused`, `export`, ...) leave functions untouched. `jit.save` and
`jit.load` round-trip a scripted module through torchish's own archive (its class is pickled
by reference); TorchScript archives and IR (`.code`, `.graph`) are not supported.
"""
import concurrent.futures
import functools
import types

from .._unsupported import module_getattr
from ..nn import Module
from ._script import (RecursiveScriptModule, ScriptFunction, ScriptModule,
                      TopLevelTracedModule, TracedModule, load, save, script_function,
                      script_module, trace_module as _trace_module)

__all__ = ["script", "trace", "trace_module", "script_method", "script_if_tracing", "ignore",
           "unused", "export", "interface", "is_scripting", "is_tracing", "annotate", "Final",
           "Attribute", "fork", "wait", "Future", "freeze", "optimize_for_inference",
           "ScriptModule", "ScriptFunction", "RecursiveScriptModule", "Error", "TracerWarning",
           "isinstance", "enable_onednn_fusion", "onednn_fusion_enabled", "set_fusion_strategy",
           "optimized_execution", "fuser", "strict_fusion", "save", "load", "TracedModule",
           "TopLevelTracedModule"]

_builtin_isinstance = isinstance


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    if _builtin_isinstance(obj, Module):
        return script_module(obj)
    if _builtin_isinstance(obj, (types.FunctionType, functools.partial)) or \
            _builtin_isinstance(obj, types.MethodType):
        return script_function(obj)
    return obj   # a class (TorchScript class), an already scripted object


def _run_example(func, example_inputs, example_kwarg_inputs):
    """Tracing runs the function once on the example (its errors are the trace's)."""
    if example_kwarg_inputs is not None:
        return func(**example_kwarg_inputs)
    if example_inputs is None:
        raise RuntimeError("example_kwarg_inputs or example_inputs must be provided")
    if not _builtin_isinstance(example_inputs, tuple):
        example_inputs = (example_inputs,)
    return func(*example_inputs)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False,
          _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    if _builtin_isinstance(func, ScriptModule) or _builtin_isinstance(func, ScriptFunction):
        return func
    if _builtin_isinstance(func, types.MethodType) and \
            _builtin_isinstance(func.__self__, Module) and func.__name__ == "forward":
        func = func.__self__   # (PyTorch traces the module for its bound forward)
    _run_example(func, example_inputs, example_kwarg_inputs)
    if _builtin_isinstance(func, Module):
        return _trace_module(func)
    return script_function(func)


def trace_module(mod, inputs, *args, **kwargs):
    for name, example in inputs.items():
        _run_example(getattr(mod, name), example, None)
    return _trace_module(mod)


def _marker(fn=None, **options):
    """A decorator usable bare (`@jit.ignore`) or called (`@jit.ignore(drop=True)`)."""
    if callable(fn):
        return fn
    return lambda f: f


ignore = unused = export = script_method = script_if_tracing = interface = _marker
copy_to_script_wrapper = _marker


def is_scripting():
    return False


def is_tracing():
    return False


def annotate(the_type, the_value):
    return the_value


def isinstance(obj, target_type):
    """TorchScript's refinement helper; eagerly, Python's isinstance of the origin type."""
    origin = getattr(target_type, "__origin__", target_type)
    return _builtin_isinstance(obj, origin)


class _FinalType:
    def __getitem__(self, item):
        return item

    def __repr__(self):
        return "typing.Final"


Final = _FinalType()


def Attribute(value, type=None):  # noqa: A002 - PyTorch's parameter name
    return value


class Future(concurrent.futures.Future):
    """What `fork` returns: already done (the call runs at once)."""

    def wait(self):
        return self.result()

    def value(self):
        return self.result()


def fork(func, *args, **kwargs):
    future = Future()
    try:
        future.set_result(func(*args, **kwargs))
    except BaseException as exc:  # noqa: BLE001 - re-raised by wait(), as PyTorch's
        future.set_exception(exc)
    return future


def wait(future):
    return future.wait()


def _expect_script_module(mod, what):
    if not _builtin_isinstance(mod, ScriptModule):
        raise RuntimeError(f"{what} expects a ScriptModule as input. Please use "
                           f"torch.jit.script or torch.jit.trace to script your 'nn.Module'.")


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """PyTorch's checks; the module itself then stands for its frozen copy (its parameters
    stay parameters here)."""
    _expect_script_module(mod, "Freezing")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    return mod


def optimize_for_inference(mod, other_methods=None):
    _expect_script_module(mod, "optimize_for_inference")
    return mod


def run_frozen_optimizations(mod, optimize_numerics=True, preserved_methods=None):
    return None


class Error(RuntimeError):
    pass


class TracerWarning(Warning):
    pass


_onednn = [False]


def enable_onednn_fusion(enabled):
    _onednn[0] = bool(enabled)


def onednn_fusion_enabled():
    return _onednn[0]


def set_fusion_strategy(strategy):
    return [("STATIC", 2), ("DYNAMIC", 10)]


class _NullContext:
    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            return fn(*args, **kwargs)
        return wrapped


optimized_execution = fuser = strict_fusion = _NullContext


__getattr__ = module_getattr(__name__)

"""`torch.jit`: TorchScript's decorators and entry points, run eagerly.

torchish has no TorchScript compiler; JAX's tracer plays that part (`torchish.compile`). So
`torch.jit.script` and `torch.jit.trace` hand back what they were given, which computes
exactly what the scripted or traced version would, and the marker decorators (`ignore`,
`unused`, `export`, ...) leave functions untouched. Serializing TorchScript (`jit.save`,
`jit.load`) is not supported.
"""
import concurrent.futures
import functools

from .._unsupported import missing, module_getattr
from ..nn import Module

__all__ = ["script", "trace", "trace_module", "script_method", "script_if_tracing", "ignore",
           "unused", "export", "interface", "is_scripting", "is_tracing", "annotate", "Final",
           "Attribute", "fork", "wait", "Future", "freeze", "optimize_for_inference",
           "ScriptModule", "ScriptFunction", "RecursiveScriptModule", "Error", "TracerWarning",
           "isinstance", "enable_onednn_fusion", "onednn_fusion_enabled", "set_fusion_strategy",
           "optimized_execution", "fuser", "strict_fusion", "save", "load"]

_builtin_isinstance = isinstance


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False,
          _module_class=None, _compilation_unit=None, example_kwarg_inputs=None,
          _store_inputs=True):
    return func


def trace_module(mod, inputs, *args, **kwargs):
    return mod


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


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    return mod


def optimize_for_inference(mod, other_methods=None):
    return mod


def run_frozen_optimizations(mod, optimize_numerics=True, preserved_methods=None):
    return None


class ScriptModule(Module):
    """Base of scripted modules: `class M(torch.jit.ScriptModule)` is a plain nn.Module here
    (and nothing torchish returns is one: `script` hands back the module itself)."""


class ScriptFunction:
    """The type of scripted functions; `script` returns the function itself, so no object is
    one."""


RecursiveScriptModule = ScriptModule


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


def save(m, f, _extra_files=None):
    raise missing(__name__, "save")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    raise missing(__name__, "load")


__getattr__ = module_getattr(__name__)

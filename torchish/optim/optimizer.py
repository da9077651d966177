"""`torchish.optim.Optimizer`: PyTorch 2.13's optimizer base class, plus the compiled update.

The bookkeeping half (param groups, `state`, `state_dict` / `load_state_dict` in PyTorch's exact
layout, hooks, `zero_grad`, `__repr__`) mirrors `torch/optim/optimizer.py` so checkpoints and
user code move between the two libraries unchanged.

The arithmetic half is what a built-in optimizer plugs into: it declares

* `_prepare(group, p)`   -> the dict of state tensors its rule reads and writes for `p`
                            (initialising `self.state[p]` lazily, as torch's `_init_group`),
* `_static(group)`       -> a tuple of the Python flags the rule branches on (amsgrad, nesterov,
                            `weight_decay != 0`, ...),
* `_hyper(group)`        -> the numeric hyperparameters (lr, betas, eps, ...),
* `_rule(static, hp, param, grad, state)` -> `(new_param, new_state)`, a pure JAX function
                            on real arrays (complex parameters are viewed as real, as torch does).

`_jit_step` then runs the whole update of a param group as ONE `jax.jit` computation over the
lists of params, grads and state arrays (cached per optimizer class and flag tuple; the
hyperparameters are traced scalars, so an lr scheduler changing lr does not retrace), and writes
the results back with `Tensor._set_data`. The rules reproduce torch's single-tensor code term by
term: scalar factors are computed in float64 (torch computes them as Python floats) and cast to
the parameter dtype exactly where torch's kernels cast a Python scalar, and `fence` /
`div_scalar` stop XLA from fusing a product into an FMA or a division into a reciprocal where
torch's separate kernels round. On CPU the results are bit-identical to torch's whenever torch's
`sqrt` is correctly rounded. A bfloat16/float16 parameter's rule runs in float32 (`_half_rule`),
`rnd` rounding each tensor op's result to the half type as torch's kernel stores it; `cast_alpha`
gives the scalars that torch's `add` rounds to the half type (`mul`/`div`/`addcmul`... keep them
float32). foreach=True and fused=True steps run the same single-tensor rule, except where
torch's foreach op order rounds differently (`hp["_foreach"]`; its in-place `_foreach_mul_`
rounds its scalar to the half type: `cast_mul`). `step` counters stay float32 0-dim arrays.
Nothing reads array values in Python, so `step()` also runs on tracers (inside `jax.jit`).
"""
import functools
import warnings
import weakref
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain

import jax
import jax.numpy as jnp

from .._eager_jit import eager_jit
from .._storage import held_elsewhere
from .._tensor import Tensor
from .._hook_handle import RemovableHandle
from ._rule_math import (  # noqa: F401 (the rules import them from here)
    _half_rule, _HALF, cast, cast_alpha, cast_mul, div_scalar, f64, fence, lerp, rnd)

__all__ = ["Optimizer", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook", "required"]


def _torch():
    # torchish/__init__ may import torchish.optim while it is still initialising
    import torchish
    return torchish


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """Register a pre hook common to all optimizers: `hook(optimizer, args, kwargs)`."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Register a post hook common to all optimizers: `hook(optimizer, args, kwargs)`."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


def _get_scalar_dtype(is_fused=None):
    t = _torch()
    if is_fused:
        return t.float32
    return t.float64 if t.get_default_dtype() is t.float64 else t.float32


def _to_scalar(x):
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


def _typename(obj):
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    if module in {"", "builtins"}:
        return qualname
    return f"{module}.{qualname}"


def _check_fused_foreach(fused, foreach, differentiable):
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _check_lr(lr):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


# ---------------------------------------------------------------------------------------------
# Helpers for the pure update rules (they run inside jax.jit).

def nonzero(x):
    """`x != 0` for a hyperparameter used as a branch: a Tensor counts as nonzero (no sync)."""
    return True if isinstance(x, Tensor) else bool(x != 0)


def _hp(x):
    """A hyperparameter as a jit argument: Python numbers as floats (weakly typed, so a new
    value never retraces), Tensors as their 0-dim array (works for tracers too)."""
    if isinstance(x, Tensor):
        return _to_scalar(x)._data.reshape(())
    if isinstance(x, (jax.Array, jax.core.Tracer)):  # torchish.compile passes lr traced
        return x
    return float(x)


def _as_real(x):
    return jnp.stack([jnp.real(x), jnp.imag(x)], axis=-1)


def _as_complex(x):
    return jax.lax.complex(x[..., 0], x[..., 1])


_JIT_CACHE = {}


def _trace_update(rule, static, hp, params, grads, states, foreach=False):
    if foreach:     # the rules follow torch's foreach op order where it rounds differently
        hp = dict(hp, _foreach=True)
    new_params, new_states = [], []
    for p, g, st in zip(params, grads, states):
        cplx = jnp.iscomplexobj(p)
        if cplx:
            shape = p.shape + (2,)
            p, g = _as_real(p), _as_real(g)
            st = {k: (_as_real(v) if jnp.iscomplexobj(v) else v) for k, v in st.items()}
        if p.dtype in _HALF and g.dtype == p.dtype:
            p, st = _half_rule(rule, static, hp, p, g, dict(st))
        else:
            p, st = rule(static, hp, p, g, dict(st))
        if cplx:
            p = _as_complex(p)
            st = {k: (_as_complex(v) if v.shape == shape else v) for k, v in st.items()}
        new_params.append(p)
        new_states.append(st)
    return new_params, new_states


def _compiled(cls, static, foreach=False):
    """The jitted update for an optimizer class, flag tuple and `foreach` flag; parameters and
    state are donated (the caller passes copies of arrays that others still hold)."""
    key = (cls, static, foreach)
    fn = _JIT_CACHE.get(key)
    if fn is None:
        fn = eager_jit(functools.partial(_trace_update, cls._rule, static, foreach=foreach),
                       donate_argnums=(1, 3))
        _JIT_CACHE[key] = fn
    return fn


def _is_tracer(x):
    return isinstance(x, jax.core.Tracer)


class Optimizer:
    r"""Base class for all optimizers (PyTorch's `torch.optim.Optimizer`).

    Args:
        params (iterable): an iterable of Tensors, of (name, Tensor) pairs, or of dicts.
        defaults (dict): default values of the optimization options.
    """

    # what a `capturable=True` step asserts of its tensors, and whether its list of devices
    # names xla, by `foreach` (PyTorch words it per optimizer and per implementation)
    _CAPTURABLE = {False: ("params and state_steps", True),
                   True: ("params and state_steps", False)}

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()

        self._patch_step_function()

        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))

        self.state = defaultdict(dict)
        self.param_groups = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]

        for param_group in param_groups:
            self.add_param_group(param_group)

        self._warned_capturable_if_run_uncaptured = True

    # ---- pickling / copying ------------------------------------------------------------------
    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        self.defaults.setdefault("differentiable", False)

    def _steps_to_tensors(self, keys=("step",), device_if=None, fused_key=None):
        """`__setstate__` helper: old checkpoints stored `step` as a Python number."""
        t = _torch()
        for group in self.param_groups:
            on_device = bool(device_if and any(group.get(k) for k in device_if))
            fused = group.get(fused_key) if fused_key else None
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) == 0:
                    continue
                for key in keys:
                    # indexed, not looked up: like PyTorch, a state saved by another kind of
                    # optimizer (SGD's momentum_buffer only) fails here with KeyError 'step'
                    if not isinstance(p_state[key], Tensor):
                        val = float(p_state[key])
                        p_state[key] = (
                            t.tensor(val, dtype=_get_scalar_dtype(is_fused=fused),
                                     device=p.device)
                            if on_device else
                            t.tensor(val, dtype=_get_scalar_dtype(), device=p.device))

    def __repr__(self):
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    def _accelerator_graph_capture_health_check(self):
        # JAX has no CUDA-graph capture to check against.
        return

    _cuda_graph_capture_health_check = _accelerator_graph_capture_health_check

    def _optimizer_step_code(self):
        """Entry point for profilers (as in torch); does nothing."""

    # ---- step hooks --------------------------------------------------------------------------
    @staticmethod
    def profile_hook_step(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self, *_ = args
            for pre_hook in chain(_global_optimizer_pre_hooks.values(),
                                  self._optimizer_step_pre_hooks.values()):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{func} must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
            out = func(*args, **kwargs)
            self._optimizer_step_code()
            for post_hook in chain(self._optimizer_step_post_hooks.values(),
                                   _global_optimizer_post_hooks.values()):
                post_hook(self, args, kwargs)
            return out
        return wrapper

    def _patch_step_function(self):
        self._zero_grad_profile_name = (
            f"Optimizer.zero_grad#{self.__class__.__name__}.zero_grad")
        hooked = getattr(self.__class__.step, "hooked", None)
        if not hooked:
            self.__class__.step = self.profile_hook_step(self.__class__.step)
            self.__class__.step.hooked = True

    def register_step_pre_hook(self, hook):
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    def register_state_dict_pre_hook(self, hook, prepend=False):
        handle = RemovableHandle(self._optimizer_state_dict_pre_hooks)
        self._optimizer_state_dict_pre_hooks[handle.id] = hook
        if prepend:
            self._optimizer_state_dict_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_post_hook(self, hook, prepend=False):
        handle = RemovableHandle(self._optimizer_state_dict_post_hooks)
        self._optimizer_state_dict_post_hooks[handle.id] = hook
        if prepend:
            self._optimizer_state_dict_post_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        handle = RemovableHandle(self._optimizer_load_state_dict_pre_hooks)
        self._optimizer_load_state_dict_pre_hooks[handle.id] = hook
        if prepend:
            self._optimizer_load_state_dict_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        handle = RemovableHandle(self._optimizer_load_state_dict_post_hooks)
        self._optimizer_load_state_dict_post_hooks[handle.id] = hook
        if prepend:
            self._optimizer_load_state_dict_post_hooks.move_to_end(handle.id, last=False)
        return handle

    # ---- state_dict ----------------------------------------------------------------------------
    def state_dict(self):
        """The optimizer state as `{'state': {index: {...}}, 'param_groups': [...]}`.

        As in torch, the state tensors are the live ones (not copies) and each group's
        `'params'` lists the parameters' indices in order of appearance.
        """
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)

        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}

        for post_hook in self._optimizer_state_dict_post_hooks.values():
            hook_result = post_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups,
                                                 key=None):
        fused = False
        capturable = False
        if param_groups is None:
            raise AssertionError("Expected param_groups to be set")
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False)
                capturable = pg.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=_torch().float32, device=param.device)
            # torch keeps a loaded `step` where it was (on the CPU); the compiled update needs
            # it next to the parameter, so only the device follows the parameter.
            return value.to(device=param.device)
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict):
        """Load a state dict produced by `state_dict()` (here or, converted, by torch)."""
        state_dict = state_dict.copy()

        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            hook_result = pre_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result

        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])

        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")

        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def _cast(param, value, param_id=None, param_groups=None, key=None):
            if isinstance(value, Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, param_groups, key)
            if isinstance(value, dict):
                return {k: _cast(param, v, param_id=param_id, param_groups=param_groups, key=k)
                        for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
                return type(value)(_cast(param, v, param_id=param_id, param_groups=param_groups)
                                   for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v, param_id=k,
                                     param_groups=state_dict["param_groups"])
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # ---- zero_grad / step / add_param_group ---------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized tensors (to None by default)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if p.grad.grad_fn is not None:
                            p.grad.detach_()
                        else:
                            p.grad.requires_grad_(False)
                        p.grad.zero_()

    def step(self, closure=None):
        """Perform a single optimization step (implemented by subclasses)."""
        raise NotImplementedError

    def add_param_group(self, param_group):
        """Add a param group (a dict with `'params'` and optional options) to `param_groups`."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")

        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)

        extracted_param_tensors = []
        extracted_param_names = []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                extracted_param_names.append(param[0])
                extracted_param_tensors.append(param[1])
            else:
                extracted_param_tensors.append(param)

        param_group["params"] = extracted_param_tensors
        if len(extracted_param_names) != 0:
            if len(extracted_param_names) == len(extracted_param_tensors):
                param_group["param_names"] = extracted_param_names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")

        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len({id(p) for p in params}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)

        param_set = set()
        for group in self.param_groups:
            param_set.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                current_group_txt = ("with names" if "param_names" in param_group
                                     else "without names")
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current_group_txt} to the optimizer")

        if not param_set.isdisjoint(id(p) for p in param_group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(param_group)

    # ---- the compiled update ------------------------------------------------------------------
    # Subclasses override these four (see the module docstring).
    def _prepare(self, group, p):
        raise NotImplementedError

    def _static(self, group):
        return ()

    def _hyper(self, group):
        return {}

    @staticmethod
    def _rule(static, hp, param, grad, state):
        raise NotImplementedError

    def _jit_step(self, closure=None):
        loss = None
        if closure is not None:
            with _torch().enable_grad():
                loss = closure()
        for group in self.param_groups:
            self._check_capturable(group)
            if group.get("differentiable"):
                self._differentiable_update(group)
            else:
                self._update_group(group)
        return loss

    def _check_capturable(self, group):
        """PyTorch's assertion that a capturable step's tensors are on an accelerator."""
        if not group.get("capturable") or group.get("fused"):
            return
        from .. import compiler
        devices = {p.device.type for p in group["params"] if p.grad is not None}
        if compiler.is_compiling() or devices <= {"cuda"}:
            return
        what, xla = self._CAPTURABLE[bool(group.get("foreach"))]
        supported = ["cuda", "xpu", "hpu", "privateuseone"] + (["xla"] if xla else [])
        raise AssertionError(f"If capturable=True, {what} must be on supported devices: "
                             f"{supported}.")

    def _differentiable_update(self, group):
        """`differentiable=True`: the step as a recorded autograd operation, per parameter.

        torch runs such a step with grad mode on, so it differentiates through the update to
        the parameter, its gradient (when built with `create_graph=True`), the state, and
        Tensor hyperparameters such as `lr`. Here the same pure rule runs through `call_jax`
        (its backward is the rule's `jax.vjp`); results are written in place with `copy_`, so
        a leaf parameter that requires grad fails as in torch. A state entry depends on the
        graph only where the rule makes it so (`step` never does).
        """
        from .._jaxpr_deps import needed_inputs
        from .._ops.registry import call_jax
        t = _torch()
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            return
        static = self._static(group)
        hyper = self._hyper(group)
        t_keys = [k for k, v in hyper.items() if isinstance(v, Tensor)]
        consts = {k: _hp(v) for k, v in hyper.items() if k not in t_keys}
        rule = type(self)._rule
        with t.enable_grad():
            for p in params:
                st = self._prepare(group, p)
                keys, out_keys = list(st), []

                def fn(p_arr, g_arr, *rest, keys=keys, out_keys=out_keys):
                    hp = dict(consts)       # without "_zero": see `fence`
                    hp.update({k: v.reshape(()) for k, v in zip(t_keys, rest[len(keys):])})
                    new_p, new_st = _trace_update(rule, static, hp, [p_arr], [g_arr],
                                                  [dict(zip(keys, rest[:len(keys)]))])
                    out_keys[:] = list(new_st[0])
                    return [new_p[0]] + [new_st[0][k] for k in out_keys]

                inputs = [p, p.grad] + [st[k] for k in keys] + [hyper[k] for k in t_keys]
                jaxpr = jax.make_jaxpr(fn)(*[x._data for x in inputs])
                outs = call_jax(f"{type(self).__name__}StepBackward", fn, inputs)
                state = self.state[p] if out_keys else None
                for i, (key, out) in enumerate(zip([None] + out_keys, outs)):
                    uses = needed_inputs(jaxpr, [j == i for j in range(len(outs))])
                    if not any(u and x.requires_grad for u, x in zip(uses, inputs)):
                        out = out.detach()
                    if key is None:
                        p.copy_(out)
                    elif key in st:
                        st[key].copy_(out)
                    else:
                        # state the rule creates (SGD's first momentum buffer): torch starts
                        # it from a detached copy
                        state[key] = out.detach()

    _sparse_error = None   # PyTorch's refusal of a sparse gradient, where it words it its way

    def _sparse_update(self, group, params):
        """The step of `params` (those of `group` with a sparse `.grad`), run eagerly with
        the public sparse ops, as PyTorch's per-tensor loop. Most optimizers refuse."""
        raise RuntimeError(self._sparse_error
                           or f"{type(self).__name__} does not support sparse gradients")

    def _compiled_update(self, group):
        """The jitted update function this group uses (exposed for tests and compile)."""
        return _compiled(type(self), self._static(group), bool(group.get("foreach")))

    def _update_group(self, group):
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            return
        sparse = [p for p in params if p.grad.is_sparse]
        if sparse:
            with _torch().no_grad():
                self._sparse_update(group, sparse)
            params = [p for p in params if not p.grad.is_sparse]
            if not params:
                return
        static = self._static(group)
        hp = {k: _hp(v) for k, v in self._hyper(group).items()}
        hp["_zero"] = 0
        # A parameter listed twice (torch warns) is updated twice, one call per occurrence; and
        # one call per device, since jit needs co-located inputs (torch's foreach groups so too).
        rounds, seen = [], {}
        for p in params:
            k = seen[id(p)] = seen.get(id(p), -1) + 1
            if k == len(rounds):
                rounds.append({})
            rounds[k].setdefault(p.device, []).append(p)
        for chunks in rounds:
            for chunk in chunks.values():
                self._run(group, static, hp, chunk)

    def _run(self, group, static, hp, params):
        owned = self._owned_arrays()
        tensors = []
        for p in params:
            before = self.state.get(p)
            known = {id(v) for v in before.values()} if before else ()
            st = self._prepare(group, p)
            for t in st.values():
                if id(t) not in known:   # created just now by `_prepare`: nobody else has it
                    self._own(owned, t)
            tensors.append(st)
        g_arrays = [p.grad._data for p in params]
        p_arrays = self._donatable_params(params, g_arrays)
        s_arrays = self._donatable(owned, tensors, p_arrays, g_arrays)
        fn = _compiled(type(self), static, bool(group.get("foreach")))
        new_params, new_states = fn(hp, p_arrays, g_arrays, s_arrays)
        for p, st, new_p, new_st in zip(params, tensors, new_params, new_states):
            p._set_data(new_p)
            # only a rule that keeps state creates the entry (torch's SGD without momentum
            # never touches `self.state[p]`, so its state_dict's "state" stays empty)
            state = self.state[p] if new_st else None
            for key, arr in new_st.items():
                t = st.get(key)
                if t is None:
                    t = _torch().from_jax(arr)
                    state[key] = t
                else:
                    t._set_data(arr)
                if not _is_tracer(arr):
                    self._own(owned, t)

    def _owned_arrays(self):
        # id(state tensor) -> (weakref to it, the array this optimizer last wrote into it). Only
        # such arrays (nobody else was handed them) are donated to the update. Keyed by id: a
        # WeakKeyDictionary would compare tensors with `==`.
        owned = self.__dict__.get("_owned_state_arrays")
        if owned is None:
            owned = self.__dict__["_owned_state_arrays"] = {}
        return owned

    @staticmethod
    def _own(owned, t):
        key = id(t)
        entry = owned.get(key)
        ref = entry[0] if entry is not None and entry[0]() is t else weakref.ref(
            t, lambda _, d=owned, k=key: d.pop(k, None))
        owned[key] = (ref, t._data)

    @staticmethod
    def _owns(owned, t, arr):
        entry = owned.get(id(t))
        return entry is not None and entry[0]() is t and entry[1] is arr and t._view is None

    @staticmethod
    def _donatable_params(params, g_arrays):
        """The parameter arrays to donate: an array only its Storage holds as it is (XLA writes
        the new values into its buffer, as a hand-written JAX step would), anything else as a
        copy."""
        seen = {id(a) for a in g_arrays}
        out = []
        for p in params:
            st = p._storage
            arr = p._data
            if not _is_tracer(arr) and (p._view is not None or id(arr) in seen
                                        or held_elsewhere(st, known=1)):   # (`arr`)
                arr = jnp.copy(arr)
            seen.add(id(arr))
            out.append(arr)
        return out

    @staticmethod
    def _donatable(owned, tensors, p_arrays, g_arrays):
        """The state arrays to donate: ours as they are, anything else (loaded from a state
        dict, a view, set by the user, shared) as a copy, so donation never frees an array
        someone else still holds."""
        seen = {id(a) for a in p_arrays} | {id(a) for a in g_arrays}
        out = []
        for st in tensors:
            arrays = {}
            for key, t in st.items():
                arr = t._data
                if not _is_tracer(arr) and (id(arr) in seen or not Optimizer._owns(owned, t, arr)):
                    arr = jnp.copy(arr)
                seen.add(id(arr))
                arrays[key] = arr
            out.append(arrays)
        return out

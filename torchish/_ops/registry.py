"""The op registry and the one dispatcher every op goes through.

Declare an op once::

    @op(promote=Promote.DEFAULT, grad_fn="AddBackward0", inplace=True,
        dunders=("__add__", "__radd__", "__iadd__"), saves=())
    def add(input, other, *, alpha=1):
        return input + other * alpha

The body is a pure JAX function. Parameters without a default (or those named in `tensors=`)
are *dynamic*: they may receive Tensors, Python scalars, None or lists of Tensors and are passed
to the compiled forward as JAX values. All other parameters are *static*: hashable values baked
into the compiled forward (a tuple, a dtype, a bool). From the declaration the registry builds
`torchish.add`, `Tensor.add`, `Tensor.add_` and the dunders, all calling `dispatch`, which

1. unwraps tensors, computes the result dtype from the promotion kind (PyTorch's rules, in
   `_dtype.result_dtype`) and caches a *plan* per (op, static args, operand dtypes/kinds);
2. runs the plan's jitted forward (casts included, so an op is one XLA dispatch);
3. wraps outputs (views share the input's storage, see `_storage.py`);
4. when grad mode is on and an input requires grad, records a `Node` whose backward is the
   plan's `jax.vjp` pullback, jitted and cached per (plan, which inputs need grads).

An operand that takes part in `__torch_function__` (a Tensor subclass, a tensor-like) or an
active TorchFunctionMode hands the call to `overrides.dispatch` first, with the binding the
user called as `func` (`_torch_function`); plain tensors pay one type test each.

The registry is split by concern, each module importing only from those listed before it:
`opdef` (OpDef, Promote, REGISTRY), `argcheck` (argument types), `recording` (nodes, saved
tensors, pullbacks), `plans` (dtypes, compiled forwards), `torch_function` (which binding a
call came through), `dispatch`, `call_jax` (ad-hoc JAX functions with autograd), `inplace`,
`declare` (`op` and the generated bindings) and `composite` (ops spelled out when recording).
This module re-exports the names the op families and the rest of torchish use.
"""
from .opdef import (DIM_NAMES, LIST_NAMES, NON_DIFFERENTIABLE_NAMES, REGISTRY,  # noqa: F401
                    STATIC_NAMES, OpDef, Omitted, Promote, given, in_overload, omitted, value_of)
from .recording import (INFERENCE_SAVED_MSG, NOT_IMPLEMENTED, _make_vjp,  # noqa: F401
                        _plan_vjp, _record, kernel_name, op_edges, operand_positions, records,
                        saved_output_positions, saved_outputs, saved_positions, saves_of)
from .plans import Plan, _get_plan  # noqa: F401
from .torch_function import routes_itself  # noqa: F401
from .dispatch import FORWARD_AD, dispatch, dispatch_out, wrap_result  # noqa: F401
from .call_jax import (call_jax, call_jax_record, record_backward,  # noqa: F401
                       record_not_implemented)
from .inplace import (check_inplace, dispatch_inplace, refresh_view_grad_fn,  # noqa: F401
                      write_inplace)
from .declare import _generate, functional_ops, op, public_functions  # noqa: F401

__all__ = ["op", "Promote", "REGISTRY", "dispatch", "call_jax"]

"""Hook machinery behind `nn.Module` (PyTorch's `torch.utils.hooks`; the handle class lives in
`utils/hooks.py`): the identity autograd Function that links a module call's output and input gradients for
full backward hooks."""
import functools
import warnings
import weakref

from ..._tensor import Tensor
from ..._warnings import user_stacklevel
from ...autograd import grad_mode
from ...autograd.function import Function
from ..._hook_handle import RemovableHandle

__all__ = ["RemovableHandle"]


# ---- full backward hooks --------------------------------------------------------------------

class BackwardHookFunction(Function):
    """Identity on a group of tensors whose backward runs a callback on their gradients."""

    @staticmethod
    def forward(ctx, callback, materialize, *tensors):
        ctx.callback = callback
        # as PyTorch's hooks on this node: the output hook (a pre-hook there) sees None for an
        # unused output, the input hook zeros for an input that does not require grad
        ctx.set_materialize_grads(materialize)
        outs = tuple(t.view_as(t) for t in tensors)
        ctx.mark_non_differentiable(*[o for o, t in zip(outs, tensors) if not t.requires_grad])
        return outs

    @staticmethod
    def backward(ctx, *grads):
        res = ctx.callback(grads)
        return (None, None) + tuple(grads if res is None else res)


class _BackwardHook:
    """`torch.utils.hooks.BackwardHook`: links the output and input gradients of one call."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    def _apply_on_tensors(self, callback, args, materialize):
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in idx]
        if not (any(t.requires_grad for t in tensors) and grad_mode.is_grad_enabled()):
            return args, None
        new = BackwardHookFunction.apply(callback, materialize, *tensors)
        out = list(args)
        for i, v in zip(idx, new):
            out[i] = v
        return (tuple(out) if type(args) is tuple else type(args)(*out)), idx

    def _input_callback(self, grads):
        if self.grad_outputs is None:
            return None
        res = self._pack_with_none(self.input_tensors_index, grads, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_tensors_index)

    def _output_callback(self, grads):
        self.grad_outputs = self._pack_with_none(self.output_tensors_index, grads,
                                                 self.n_outputs)
        for pre in self.user_pre_hooks:
            new = pre(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(self.grad_outputs):
                raise RuntimeError("Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(new)}, but expected "
                                   f"{len(self.grad_outputs)}")
            self.grad_outputs = new
        local = self.grad_outputs
        if self.input_tensors_index is None:
            warnings.warn("Full backward hook is firing when gradients are computed with respect "
                          "to module outputs since no inputs require gradients. See "
                          "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.register_full_backward_hook for more details.",
                          stacklevel=user_stacklevel())
            grad_inputs = self._pack_with_none([], [], self.n_inputs)
            for hook in self.user_hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and
                                            all(el is None for el in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_tensors_index)

    def setup_input_hook(self, args):
        res, idx = self._apply_on_tensors(self._input_callback, args, True)
        self.n_inputs = len(args)
        self.input_tensors_index = idx
        return res

    def setup_output_hook(self, result):
        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, idx = self._apply_on_tensors(self._output_callback, args, False)
        self.n_outputs = len(args)
        self.output_tensors_index = idx
        return res if is_tuple else res[0]


class _WrappedHook:
    def __init__(self, hook, module=None):
        self.hook = hook
        functools.update_wrapper(self, hook)
        self.with_module = module is not None
        if module is not None:
            self.module = weakref.ref(module)

    def __call__(self, *args, **kwargs):
        if self.with_module:
            module = self.module()
            if module is None:
                raise RuntimeError("You are trying to call the hook of a dead Module!")
            return self.hook(module, *args, **kwargs)
        return self.hook(*args, **kwargs)


def _non_full_adapter(hook, module):
    """Old-style `register_backward_hook`: called with the output node's grads."""
    from ..._tensor import _wrap

    def node_hook(grad_inputs, grad_outputs):  # a grad_fn hook, as torch calls it
        gi = tuple(None if g is None else (g if isinstance(g, Tensor) else _wrap(g))
                   for g in grad_inputs)
        go = tuple(None if g is None else (g if isinstance(g, Tensor) else _wrap(g))
                   for g in grad_outputs)
        return hook(module, gi, go)
    return node_hook


_NON_FULL_TAIL = ("is deprecated and will be removed in future versions. This hook will be "
                  "missing some ")
_NON_FULL_USE = "Please use register_full_backward_hook to get the documented behavior."


def warn_non_full_backward_hook(inputs, result, grad_fn):
    """PyTorch's FutureWarning when an old-style backward hook (on the node of the module's
    first output) cannot see all of the module's gradients: outputs or inputs that are not
    Tensors, outputs of several nodes, or a forward of more than one node (seen as the output
    node's inputs differing from the module inputs' grad_fns, so a leaf input counts too)."""
    if isinstance(result, Tensor):
        result = (result,)
    elif not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
        warnings.warn("Using non-full backward hooks on a Module that does not return a single "
                      "Tensor or a tuple of Tensors " + _NON_FULL_TAIL + "of the grad_output. "
                      + _NON_FULL_USE, FutureWarning)
        return
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    elif not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
        warnings.warn("Using non-full backward hooks on a Module that does not take as input a "
                      "single Tensor or a tuple of Tensors " + _NON_FULL_TAIL + "of the "
                      "grad_input. " + _NON_FULL_USE, FutureWarning)
        return
    out_fns = {r.grad_fn for r in result if r.grad_fn is not None}
    if not out_fns or (len(out_fns) == 1 and grad_fn not in out_fns):
        warnings.warn("Using a non-full backward hook when outputs are nested in python data "
                      "structure " + _NON_FULL_TAIL + "grad_output.", FutureWarning)
    elif len(out_fns) > 1:
        warnings.warn("Using a non-full backward hook when outputs are generated by different "
                      "autograd Nodes " + _NON_FULL_TAIL + "grad_output. " + _NON_FULL_USE,
                      FutureWarning)
    elif {i.grad_fn for i in inputs if i.grad_fn is not None} != \
            {n[0] for n in grad_fn.next_functions}:
        warnings.warn("Using a non-full backward hook when the forward contains multiple "
                      "autograd Nodes " + _NON_FULL_TAIL + "grad_input. " + _NON_FULL_USE,
                      FutureWarning)


def pop_forward_pre_hook(module, kind, name, label):
    """Unregister and return `module`'s forward pre-hook of type `kind` for parameter `name`
    (weight_norm's, spectral_norm's)."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            del module._forward_pre_hooks[key]
            return hook
    raise ValueError(f"{label} of '{name}' not found in {module}")

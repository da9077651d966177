"""`torch.utils.checkpoint`: activation checkpointing. Memory is not the point under JAX's
eager ops, so the non-reentrant variant runs the function with grad (same graph and node names
as PyTorch's, whose saved-tensor hooks leave them unchanged) and only replays it when backward
reaches its outputs, for the side effects PyTorch's recomputation has (BatchNorm statistics,
spectral_norm's power iteration run twice per step). The reentrant variant is an autograd
Function that runs the function without grad and recomputes it in backward, so its node is
`CheckpointFunctionBackward` as in PyTorch. Both replay the forward's RNG state.

Selective activation checkpointing (`create_selective_checkpoint_contexts`) decides which op
results PyTorch keeps rather than recomputes; here every result is kept, which is what a policy
saving everything gives, so the values and gradients are those of any policy. Its policy
function is validated but never called (there is no per-op dispatch hook to call it from)."""
import contextlib
import enum
import warnings

import torchish

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "noop_context_fn", "set_checkpoint_early_stop", "DefaultDeviceType",
           "set_checkpoint_debug_enabled", "CheckpointPolicy", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts"]

_EXPLICIT = (": the use_reentrant parameter should be passed explicitly. Starting in PyTorch "
             "2.9, calling checkpoint without use_reentrant will raise an exception. "
             "use_reentrant=False is recommended, but if you need to preserve the current "
             "default behavior, you can pass use_reentrant=True. Refer to docs for more "
             "details on the differences between the two variants.")


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


class CheckpointError(RuntimeError):
    pass


# the global overrides PyTorch's context managers set (None: each call's `debug` decides)
_DEBUG = [None]
_EARLY_STOP = [True]


@contextlib.contextmanager
def _overriding(flag, value):
    """Set the one-item list `flag` to `value` for the block, restoring it on the way out."""
    prev, flag[0] = flag[0], value
    try:
        yield
    finally:
        flag[0] = prev


def set_checkpoint_debug_enabled(enabled):
    return _overriding(_DEBUG, enabled)


def set_checkpoint_early_stop(enable):
    # (recomputation here never stops early or late: nothing is freed; the flag is kept for
    # code that sets it)
    return _overriding(_EARLY_STOP, enable)


class DefaultDeviceType:
    """The device type whose RNG state checkpoint stashes when no tensor argument names one."""
    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        if not DefaultDeviceType._default_device_type:
            acc = torchish.accelerator.current_accelerator(True)
            DefaultDeviceType._default_device_type = acc.type if acc else "cpu"
        return DefaultDeviceType._default_device_type


class CheckpointPolicy(enum.Enum):
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class SelectiveCheckpointContext:
    """What a selective-checkpoint policy function receives first."""
    def __init__(self, *, is_recompute, op_output=None):
        self.is_recompute = is_recompute
        self.op_output = op_output


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """A `context_fn` for checkpoint: a policy function or a list of op overloads to save (see
    the module docstring: everything is saved here)."""
    if isinstance(policy_fn_or_list, list):
        overload = getattr(torchish._ops, "OpOverload", None)   # (torch.ops, where present)
        packet = getattr(torchish._ops, "OpOverloadPacket", ())
        for op in policy_fn_or_list:
            if overload is not None and not isinstance(op, overload):
                extra = ("Please update the OpOverloadPacket to a specific OpOverload.For "
                         "example, if you have `torch.ops.aten.mm`, change it to "
                         "`torch.ops.aten.mm.default`.") if isinstance(op, packet) else ""
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} "
                                 f"of type {type(op)}. {extra}")
    elif not callable(policy_fn_or_list):
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    return contextlib.nullcontext(), contextlib.nullcontext()


_noop_context_fn = noop_context_fn


class CheckpointFunction(torchish.autograd.Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(a.requires_grad for a in args if isinstance(a, torchish.Tensor)):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=2)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = torchish.get_rng_state()
        ctx.inputs = [None if isinstance(a, torchish.Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, torchish.Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, torchish.Tensor)])
        with torchish.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not torchish.autograd._is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() "
                "or passing an `inputs` parameter to .backward(). To resolve this error, you "
                "can either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = []
        for a in inputs:
            if isinstance(a, torchish.Tensor):
                d = a.detach()
                d.requires_grad = a.requires_grad
                a = d
            detached.append(a)
        with torchish.random.fork_rng(enabled=ctx.preserve_rng_state):
            if ctx.preserve_rng_state:
                torchish.set_rng_state(ctx.fwd_cpu_state)
            with torchish.enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, torchish.Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, torchish.Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        torchish.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if isinstance(a, torchish.Tensor) else None
                                    for a in detached)


_DETERMINISM_CHECKS = ("default", "none")


def checkpoint(function, *args, use_reentrant=None, context_fn=_noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint" + _EXPLICIT, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not _noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    if (debug if _DEBUG[0] is None else _DEBUG[0]) and context_fn is not _noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    # only the non-reentrant variant reads determinism_check, and checks it before context_fn
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, "
                         f"but got {determinism_check}")
    forward_ctx, recompute_ctx = context_fn()
    state = torchish.get_rng_state() if preserve else None
    autocast = (torchish.is_autocast_enabled("cpu"), torchish.get_autocast_dtype("cpu"))
    with forward_ctx:
        out = function(*args, **kwargs)
    _replay_in_backward(out, function, args, kwargs, state, autocast, recompute_ctx)
    return out


def _replay_in_backward(out, function, args, kwargs, rng_state, autocast, recompute_ctx):
    outputs = out if isinstance(out, (tuple, list)) else (out,)
    tensors = [o for o in outputs if isinstance(o, torchish.Tensor) and o.requires_grad]
    replays = [0]

    def make_hook(calls):
        def hook(grad):
            # one replay per backward pass, whichever output it reaches first
            calls[0] += 1
            if calls[0] > replays[0]:
                replays[0] = calls[0]
                with torchish.random.fork_rng(enabled=rng_state is not None):
                    if rng_state is not None:
                        torchish.set_rng_state(rng_state)
                    with torchish.no_grad(), recompute_ctx, \
                            torchish.autocast("cpu", dtype=autocast[1], enabled=autocast[0]):
                        function(*args, **kwargs)
        return hook

    for t in tensors:
        t.register_hook(make_hook([0]))


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential" +
                      _EXPLICIT.replace("Starting in PyTorch 2.9, calling checkpoint without "
                                        "use_reentrant will raise an exception.",
                                        "In version 2.9 we will raise an exception if "
                                        "use_reentrant is not passed."), stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    if isinstance(functions, torchish.nn.Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)

"""`torch.amp.GradScaler`: dynamic loss scaling for mixed-precision training.

The scaler multiplies the loss by a scale factor so that small float16 gradients do not flush
to zero, divides the gradients by the same factor before the optimizer step, skips the step
when a gradient overflowed (inf/NaN), and adapts the factor: it backs off after an overflow
and grows after `growth_interval` clean steps in a row.

Everything runs eagerly: the overflow flags are kept as tensors (no host sync) until `step()`
has to decide, in Python, whether to call `optimizer.step()`.
"""
import inspect
import warnings
from collections import abc, defaultdict
from enum import Enum

import torchish  # partially initialised while torchish imports itself: used at call time only

__all__ = ["OptState", "GradScaler", "CudaGradScaler", "CpuGradScaler"]


class OptState(Enum):
    """Where an optimizer is in the current iteration."""
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    # A module-level factory (not a lambda) so the scaler's defaultdict stays picklable.
    return {"stage": OptState.READY, "found_inf_per_device": {}}


class _PerDevice:
    """Copies of one tensor on the devices that ask for it, each made once."""

    def __init__(self, tensor):
        self.master = tensor
        self.copies = {}

    def get(self, device):
        if device not in self.copies:
            self.copies[device] = self.master.to(device=device, non_blocking=True, copy=True)
        return self.copies[device]


def _cuda_definitely_unavailable():
    return not torchish.cuda.is_available()


_FIX_HINT = ("This may indicate your script did not use scaler.scale(loss or outputs) "
             "earlier in the iteration.")


class GradScaler:
    """Scales losses and unscales gradients, with a dynamically adjusted scale factor.

    `scaler.scale(loss).backward()` backpropagates scaled gradients; `scaler.step(opt)`
    unscales them (unless `scaler.unscale_(opt)` already did), and calls `opt.step()` only if
    they are all finite; `scaler.update()` then adjusts the scale for the next iteration.

    Args: `device` ("cuda" or "cpu"; a "cuda" scaler without CUDA warns and disables itself),
    `init_scale`, `growth_factor` (> 1), `backoff_factor` (< 1), `growth_interval` (clean
    steps before growing) and `enabled` (False makes every method a pass-through).
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if device == "cuda" and enabled and _cuda_definitely_unavailable():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available."
                          "  Disabling.", stacklevel=2)
            self._enabled = False

        # As PyTorch, a disabled scaler keeps no scaling state at all.
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None            # created by the first scale() call
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None   # created with _scale
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    # ----- internal state -----

    def _check_scale_growth_tracker(self, funcname):
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + _FIX_HINT)
        if self._growth_tracker is None:
            raise AssertionError(
                f"Attempted {funcname} but _growth_tracker is None.  " + _FIX_HINT)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev):
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = torchish.full((), self._init_scale, dtype=torchish.float32, device=dev)
        self._growth_tracker = torchish.full((), self._init_growth_tracker,
                                             dtype=torchish.int32, device=dev)

    def _get_scale_async(self):
        return self._scale

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return self._growth_tracker.item()

    # ----- scaling -----

    def scale(self, outputs):
        """Multiply a tensor, or nested lists/tuples/iterables of tensors, by the scale.

        Lists and tuples keep their type; other iterables come back as a lazy `map`. The scale
        lives on the device of the first tensor scaled; other devices get cached copies.
        """
        if not self._enabled:
            return outputs
        Tensor = torchish.Tensor
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)

        per_device = []   # filled by the first tensor met, shared by the whole structure

        def apply(val):
            if isinstance(val, Tensor):
                if not per_device:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    per_device.append(_PerDevice(self._scale))
                return val * per_device[0].get(val.device)
            if isinstance(val, abc.Iterable):
                mapped = map(apply, val)
                return type(val)(mapped) if isinstance(val, (list, tuple)) else mapped
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply(outputs)

    # ----- unscaling -----

    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        """Multiply every grad of `optimizer` by `inv_scale` in place; return, per device, a
        float32 0-d tensor that is 1.0 if any of that device's grads was inf/NaN, else 0.0.

        Unlike PyTorch's float32 `inv_scale`, ours is a float64 0-d tensor holding the float32
        value exactly (see `_float32_reciprocal`): XLA flushes float32 subnormals to zero, and
        1/scale is subnormal once the scale exceeds 2**126.
        """
        factors_per_device = _PerDevice(inv_scale)
        found_per_device = _PerDevice(found_inf)
        grads_per_device = defaultdict(list)
        with torchish.no_grad():
            # Collect (and check) every grad first, so an error leaves all grads untouched.
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, torchish.Tensor):
                        raise AssertionError(
                            f"expected param to be torch.Tensor, got {type(param).__name__}")
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype == torchish.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    if grad.dtype.is_complex:
                        # PyTorch's CPU kernel has no complex implementation.
                        raise NotImplementedError(
                            '"_amp_foreach_non_finite_check_and_unscale_cpu" not implemented '
                            f"for '{_dtype_name(grad.dtype)}'")
                    grads_per_device[grad.device].append(grad)

            for device, grads in grads_per_device.items():
                inv64 = factors_per_device.get(device)
                # float32 multiplier pair: (g * hi) * post rounds once, like g * inv in float32;
                # post (1 or 1/4) brings a subnormal inv back into float32's normal range.
                tiny = inv64 < 2.0 ** -126
                hi = (inv64 * torchish.where(tiny, 4.0, 1.0)).float()
                post = torchish.where(tiny, 0.25, 1.0).float()
                flag = found_per_device.get(device)
                for grad in grads:
                    # The overflow check is on the scaled values, before the multiply.
                    bad = torchish.isfinite(grad).logical_not().any()
                    flag = torchish.where(bad, torchish.ones_like(flag), flag)
                    if grad.dtype == torchish.float64:
                        grad.mul_(inv64)   # in place, so views/aliases of the grad see it
                    elif grad.dtype == torchish.float32:
                        grad.mul_(hi).mul_(post)
                    else:
                        # Half precision: multiplied in float32, rounded once to the grad's
                        # dtype (a plain mul_ would round the factor to half precision first).
                        grad.copy_(grad.float() * hi * post)
                found_per_device.copies[device] = flag
        return found_per_device.copies

    def unscale_(self, optimizer):
        """Divide the gradients of `optimizer`'s parameters by the scale, in place.

        Optional (`step()` does it otherwise); useful to clip or inspect real gradients. Allowed
        once per optimizer between `update()` calls, and not after `step()`.
        """
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = _float32_reciprocal(self._scale)
        found_inf = torchish.full((), 0.0, dtype=torchish.float32, device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = OptState.UNSCALED

    def _check_inf_per_device(self, optimizer):
        """Record the inf/NaN flags of `optimizer`'s grads without unscaling them."""
        scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        one = torchish.full((), 1.0, dtype=torchish.float64, device=scale.device)
        zero = torchish.full((), 0.0, dtype=torchish.float32, device=scale.device)
        state = self._per_optimizer_states[id(optimizer)]
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, one, zero, True)
        return state["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer):
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    # ----- stepping -----

    def _maybe_opt_step(self, optimizer, state, *args, **kwargs):
        # The one host sync of the iteration: skip the step if any grad overflowed.
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """Unscale (if not done yet) and call `optimizer.step(*args, **kwargs)` unless a grad
        is inf/NaN. Returns what `optimizer.step` returned, or None when it was skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError(
                "Closure use is not currently supported if GradScaler is enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")

        if getattr(optimizer, "_step_supports_amp_scaling", False):
            return self._step_amp_aware(optimizer, state, args, kwargs)

        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def _step_amp_aware(self, optimizer, state, args, kwargs):
        """An optimizer that handles scaling itself: either it takes `grad_scaler=self`
        (deprecated contract) or it reads `optimizer.grad_scale` / `optimizer.found_inf`."""
        takes_scaler = "grad_scaler" in inspect.signature(optimizer.step).parameters
        if takes_scaler:
            warnings.warn(
                "GradScaler is going to stop passing itself as a keyword argument to the "
                "passed optimizer. In the near future GradScaler registers `grad_scale: "
                "Tensor` and `found_inf: Tensor` to the passed optimizer and let the optimizer "
                "use them directly.", FutureWarning, stacklevel=3)
            kwargs["grad_scaler"] = self
        else:
            if state["stage"] is OptState.READY:
                self._check_inf_per_device(optimizer)
            scale = self._get_scale_async()
            found_inf = sum(t.to(scale.device, non_blocking=True)
                            for t in state["found_inf_per_device"].values())
            # If the grads were already unscaled, keep whatever scale the user set; otherwise
            # the optimizer must divide by ours (times any scale the user already set).
            if state["stage"] is OptState.UNSCALED:
                optimizer.grad_scale = getattr(optimizer, "grad_scale", None)
            else:
                optimizer.grad_scale = scale * getattr(optimizer, "grad_scale", 1)
            optimizer.found_inf = found_inf
        retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        if not takes_scaler:
            del optimizer.grad_scale
            del optimizer.found_inf
        return retval

    # ----- scale update -----

    def update(self, new_scale=None):
        """Adjust the scale for the next iteration, or set it to `new_scale` (a float, or a
        1-element tensor on the scaler's device without requires_grad, whose value is copied).

        After an overflow in any optimizer the scale is multiplied by `backoff_factor` and the
        growth tracker reset; after `growth_interval` clean steps in a row it is multiplied by
        `growth_factor` (unless that would overflow float32).
        """
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                scale.copy_(new_scale)
        else:
            found_infs = [f.to(device=scale.device, non_blocking=True)
                          for st in self._per_optimizer_states.values()
                          for f in st["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            self._update_scale(scale, tracker, sum(found_infs[1:], found_infs[0]))
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    def _update_scale(self, scale, tracker, found_inf):
        """PyTorch's `_amp_update_scale_` as tensor ops (no host sync): the products are
        taken in float64 and rounded to float32; growth happens when the count of clean steps
        reaches `growth_interval` exactly, and is skipped if it would overflow float32."""
        found = found_inf != 0
        successful = tracker + 1
        at_interval = successful == self._growth_interval
        backed_off = (scale.double() * self._backoff_factor).float()
        grown = (scale.double() * self._growth_factor).float()
        grow = at_interval & torchish.isfinite(grown)
        scale.copy_(torchish.where(found, backed_off, torchish.where(grow, grown, scale)))
        tracker.copy_(torchish.where(found | at_interval, torchish.zeros_like(tracker),
                                     successful))

    # ----- accessors -----

    def get_scale(self):
        """The current scale as a Python float (the initial scale before the first `scale()`);
        1.0 when disabled."""
        if not self._enabled:
            return 1.0
        scale = self._get_scale_async()
        return self._init_scale if scale is None else scale.item()

    def get_growth_factor(self):
        """The factor the scale grows by."""
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        """Set the factor the scale grows by."""
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        """The factor the scale shrinks by after an overflow."""
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        """Set the factor the scale shrinks by after an overflow."""
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        """How many clean steps in a row make the scale grow."""
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        """Set how many clean steps in a row make the scale grow."""
        self._growth_interval = new_interval

    def is_enabled(self):
        """Whether this scaler scales at all."""
        return self._enabled

    # ----- checkpointing -----

    def state_dict(self):
        """`scale`, `growth_factor`, `backoff_factor`, `growth_interval` and `_growth_tracker`
        as Python numbers; `{}` when disabled."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        """Restore what `state_dict()` returned (a no-op when disabled)."""
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            # Tensors are not pickled: the copy recreates them lazily from these numbers.
            state["_init_scale"] = self.get_scale()
            state["_init_growth_tracker"] = self._get_growth_tracker()
            state["_scale"] = None
            state["_growth_tracker"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)


def _float32_reciprocal(scale):
    """PyTorch's `scale.double().reciprocal().float()`, returned as float64 so that a
    subnormal result survives XLA's flush-to-zero: the float64 reciprocal rounded (half to
    even) to float32 precision, with float32's fixed 2**-149 quantum below 2**-126."""
    r = scale.double().reciprocal()
    subnormal = torchish.round(r * 2.0 ** 149) * 2.0 ** -149
    return torchish.where(r < 2.0 ** -126, subnormal, r.float().double())


def _dtype_name(dtype):
    # The C++ scalar type names PyTorch's dispatch errors use.
    return {"complex64": "ComplexFloat", "complex128": "ComplexDouble",
            "complex32": "ComplexHalf"}.get(str(dtype).split(".")[-1], str(dtype))


class CudaGradScaler(GradScaler):
    """`torch.cuda.amp.GradScaler(args...)`: deprecated spelling of
    `torch.amp.GradScaler("cuda", args...)`."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


# PyTorch's class is `torch.cuda.amp.grad_scaler.GradScaler` (type(), repr, pickling)
CudaGradScaler.__name__ = CudaGradScaler.__qualname__ = "GradScaler"
CudaGradScaler.__module__ = "torchish.cuda.amp.grad_scaler"


class CpuGradScaler(GradScaler):
    """`torch.cpu.amp.GradScaler(args...)`: deprecated spelling of
    `torch.amp.GradScaler("cpu", args...)`."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=enabled)


CpuGradScaler.__name__ = CpuGradScaler.__qualname__ = "GradScaler"
CpuGradScaler.__module__ = "torchish.cpu.amp.grad_scaler"

"""`LRScheduler`, the base of the schedulers in `torchish.optim.lr_scheduler`, and the helpers
they share for reading and writing ``optimizer.param_groups``."""

from __future__ import annotations

import sys
import warnings
from functools import wraps
from weakref import ref


EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)


# torchish is imported lazily: torchish/__init__ imports torchish.optim, which imports us.

def _tensor_type():
    mod = sys.modules.get("torchish")
    return getattr(mod, "Tensor", None) if mod is not None else None


def _is_tensor(x) -> bool:
    T = _tensor_type()
    return T is not None and isinstance(x, T)


def _check_optimizer(optimizer) -> None:
    # PyTorch requires an ``Optimizer`` instance; we accept anything shaped like one (it has
    # ``param_groups``) so schedulers can drive duck-typed optimizers too.
    mod = sys.modules.get("torchish.optim")
    opt_cls = getattr(mod, "Optimizer", None) if mod is not None else None
    if opt_cls is not None and isinstance(optimizer, opt_cls):
        return
    if not hasattr(optimizer, "param_groups"):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _to_scalar(x):
    if _is_tensor(x) and x.dim() != 0:
        return x.squeeze()
    return x


def _copy(value):
    return value.clone() if _is_tensor(value) else value


def _format_param(name, optimizer, param):
    """Return one copy of ``param`` per param group (a list/tuple must already have one each)."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. "
                f"{name} has {len(param)} values, param_groups has {len(optimizer.param_groups)}."
            )
    else:
        param = [param] * len(optimizer.param_groups)
    return [_copy(p) for p in param]


def _param_groups_val_list(optimizer, key):
    return [_copy(group[key]) for group in optimizer.param_groups]


def _update_param_group_val(param_group, key, val) -> None:
    # A Tensor lr is updated in place so that a compiled optimizer step keeps seeing it.
    if _is_tensor(param_group[key]):
        param_group[key].fill_(_to_scalar(val))
    else:
        param_group[key] = val


def _optimizer_defaults(optimizer):
    defaults = getattr(optimizer, "defaults", None)
    if defaults is None:
        # duck-typed optimizer without ``defaults``: look at its first param group instead
        defaults = optimizer.param_groups[0] if optimizer.param_groups else {}
    return defaults


class _enable_get_lr_call:
    def __init__(self, o):
        self.o = o

    def __enter__(self):
        self.o._get_lr_called_within_step = True
        return self

    def __exit__(self, type, value, traceback):
        self.o._get_lr_called_within_step = False


class _initial_mode:
    def __init__(self, o):
        self.o = o

    def __enter__(self):
        self.o._is_initial = True

    def __exit__(self, type, value, traceback):
        self.o._is_initial = False


def _warn_get_lr_called_within_step(lr_scheduler) -> None:
    if not lr_scheduler._get_lr_called_within_step:
        warnings.warn(
            "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
            UserWarning,
            stacklevel=2,
        )


# --------------------------------------------------------------------------- base class

class LRScheduler:
    """Adjusts the learning rate of every param group once per ``step()``."""

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch: int = -1) -> None:
        _check_optimizer(optimizer)
        self.optimizer = optimizer

        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        "scheduler with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't "
                        "properly loaded the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run (not recommended)"
                    )
        self.base_lrs = _param_groups_val_list(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._patch_optimizer_step()
        self._initial_step()

    def _patch_optimizer_step(self) -> None:
        # Wrap ``optimizer.step`` so that ``step()`` can warn when the scheduler is stepped
        # before the optimizer (the PyTorch >= 1.1 ordering).
        opt = self.optimizer
        step_fn = getattr(opt, "step", None)
        if step_fn is None or hasattr(step_fn, "_wrapped_by_lr_sched"):
            return
        func = getattr(step_fn, "__func__", None)
        opt_ref = ref(opt)

        if func is not None:
            @wraps(func)
            def wrapper(*args, **kwargs):
                o = opt_ref()
                o._opt_called = True
                return func.__get__(o, o.__class__)(*args, **kwargs)
        else:
            @wraps(step_fn)
            def wrapper(*args, **kwargs):
                opt_ref()._opt_called = True
                return step_fn(*args, **kwargs)

        wrapper._wrapped_by_lr_sched = True
        try:
            opt.step = wrapper
        except AttributeError:
            pass

    def _initial_step(self) -> None:
        self._step_count = 0
        with _initial_mode(self):
            self.step()

    def state_dict(self):
        """Everything in ``self.__dict__`` except the optimizer."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The learning rates the last ``step()`` set."""
        return self._last_lr

    def get_lr(self):
        raise NotImplementedError

    def step(self, epoch=None) -> None:
        if self._step_count == 1 and hasattr(self.optimizer, "step"):
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate "
                    "scheduler initialization. Please, make sure to call `optimizer.step()` "
                    "before `lr_scheduler.step()`. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                    "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
                    "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
                    "will result in PyTorch skipping the first value of the learning rate "
                    "schedule. See more details at "
                    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
                    UserWarning,
                    stacklevel=2,
                )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None) -> None:
        with _enable_get_lr_call(self):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                if hasattr(self, "_get_closed_form_lr"):
                    values = self._get_closed_form_lr()
                else:
                    values = self.get_lr()
        for param_group, lr in zip(self.optimizer.param_groups, values, strict=True):
            _update_param_group_val(param_group, "lr", lr)
        self._last_lr = _param_groups_val_list(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """Deprecated alias of :class:`LRScheduler` (kept for old code)."""

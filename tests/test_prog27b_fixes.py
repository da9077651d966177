"""Fixes found by the sweep-27 ported programs (PROG27B), differential against real PyTorch:
`torch.nn.modules.utils.consume_prefix_in_state_dict_if_present`, which strips a wrapper's
"module." prefix from a checkpoint's keys and from its `_metadata` (per-submodule versions) so a
bare module can load what a DataParallel/DDP-wrapped one saved; and
`torch.utils.checkpoint.checkpoint(..., use_reentrant=False)` refusing an unknown
`determinism_check` with PyTorch's ValueError (the reentrant variant ignores it), and the rest
of `torch.utils.checkpoint`'s public API (selective checkpointing's CheckpointPolicy /
create_selective_checkpoint_contexts, set_checkpoint_debug_enabled and its "debug=True is
incompatible" error, set_checkpoint_early_stop, DefaultDeviceType, CheckpointError,
noop_context_fn); and
`scatter(..., reduce=...)`: a reduce other than "add"/"multiply" is PyTorch's RuntimeError (in
ATen's order among the other argument errors), not a silent plain scatter, and a call that
records grad gets PyTorch's `torch::autograd::NotImplemented` node whose backward refuses;
`F.one_hot`'s arguments typed as PyTorch's parser types them (`input` a Tensor, `num_classes` an
int or 0-d integer Tensor: a float, bool or str is its TypeError, not a silent result)."""
import functools

import pytest

import torchish
from differential import outcome, same_printed

torch = pytest.importorskip("torch")


def _wrapped_state(T):
    """state_dict of a model wrapped like DataParallel: its keys and metadata carry 'module.'."""
    class Wrapper(T.nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

    T.manual_seed(0)
    net = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4), T.nn.Linear(4, 2))
    return Wrapper(net).state_dict()


@pytest.mark.parametrize("prefix", ["module.", "module", "absent.", ""])
def test_consume_prefix_keys_and_metadata(prefix):
    def run(T):
        sd = _wrapped_state(T)
        out = T.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, prefix)
        return out, type(sd).__name__, list(sd), dict(sd._metadata)

    same_printed(run, torch)


def test_consume_prefix_then_bare_module_loads():
    def run(T):
        sd = _wrapped_state(T)
        T.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")
        T.manual_seed(1)
        bare = T.nn.Sequential(T.nn.Linear(3, 4), T.nn.BatchNorm1d(4), T.nn.Linear(4, 2))
        keys = bare.load_state_dict(sd)
        return keys, bare[0].weight.sum().item(), bare[1].num_batches_tracked

    same_printed(run, torch)


def test_consume_prefix_plain_dict_and_exports():
    def run(T):
        sd = {"module.a": T.ones(2), "b": T.zeros(1), "module.module.c": T.ones(1)}
        T.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")
        return sorted(sd), hasattr(sd, "_metadata")

    same_printed(run, torch)
    assert torchish.nn.modules.utils.__all__ == torch.nn.modules.utils.__all__


@pytest.mark.parametrize("kwargs", [
    dict(use_reentrant=False, determinism_check="bad"),
    dict(use_reentrant=False, determinism_check=None),
    dict(use_reentrant=False, determinism_check="bad", context_fn=lambda: (1, 2)),
    dict(use_reentrant=False, determinism_check="none"),
    dict(use_reentrant=False, determinism_check="default", preserve_rng_state=False),
    dict(use_reentrant=True, determinism_check="bad"),
])
def test_checkpoint_determinism_check(kwargs):
    def run(T):
        x = T.arange(3.0).requires_grad_()
        out = T.utils.checkpoint.checkpoint(lambda t: (t * t).sum(), x, **kwargs)
        out.backward()
        return out, x.grad

    same_printed(run, torch)


def _scatter_case(T, src_kind, reduce, dim=1, index_dtype=None, index_ndim=2):
    z = T.zeros(3, 4)
    idx = T.tensor([[0, 1], [2, 3], [1, 1]])
    if index_dtype == "float":
        idx = idx.float()
    if index_ndim == 1:
        idx = idx[0]
    src = {"tensor": T.arange(6.0).reshape(3, 2), "double": T.arange(6.0).reshape(3, 2).double(),
           "zero_d": T.tensor(1.5), "zero_d_double": T.tensor(1.5, dtype=T.float64),
           "number": 2.5, "empty_index": None}[src_kind]
    if src_kind == "empty_index":
        return z.scatter(dim, idx[:0], T.ones(0, 2), reduce=reduce)
    return z.scatter(dim, idx, src, reduce=reduce)


@pytest.mark.parametrize("src_kind", ["tensor", "double", "zero_d", "zero_d_double", "number",
                                      "empty_index"])
@pytest.mark.parametrize("reduce", ["add", "multiply", "mean", "sum", ""])
def test_scatter_reduce_argument(src_kind, reduce):
    same_printed(lambda T: _scatter_case(T, src_kind, reduce), torch)


@pytest.mark.parametrize("kw", [dict(dim=2), dict(index_dtype="float"), dict(index_ndim=1)])
def test_scatter_bad_reduce_after_argument_checks(kw):
    same_printed(lambda T: _scatter_case(T, "tensor", "bad", **kw), torch)


def test_scatter_bad_reduce_before_bounds_and_overflow():
    same_printed(lambda T: T.zeros(3, 4).scatter(1, T.tensor([[9]]), 1.0, reduce="bad"), torch)
    same_printed(lambda T: T.zeros(3, dtype=T.int8).scatter(0, T.tensor([0]), 1000,
                                                             reduce="bad"), torch)
    same_printed(lambda T: T.zeros(3).scatter_(0, T.tensor([0]), 1.0, reduce="mean"), torch)


@pytest.mark.parametrize("which", ["self", "src", "value", "inplace", "inplace_view"])
@pytest.mark.parametrize("reduce", ["add", "multiply"])
def test_scatter_reduce_records_not_implemented(which, reduce):
    def run(T):
        z = T.zeros(3, 4, requires_grad=which in ("self", "value", "inplace"))
        idx = T.tensor([[0, 1], [2, 3], [1, 1]])
        src = T.arange(6.0).reshape(3, 2).requires_grad_(which == "src")
        if which == "value":
            out = z.scatter(1, idx, 3.0, reduce=reduce)
        elif which == "inplace":
            out = z.clone()
            out.scatter_(1, idx, src, reduce=reduce)
        elif which == "inplace_view":   # CopySlices on the base carries the refusal
            base = T.zeros(5, 4, requires_grad=True).clone()
            base[1:4].scatter_(1, idx, 2.0, reduce=reduce)
            out = base
        else:
            out = z.scatter(1, idx, src, reduce=reduce)
        name = out.grad_fn.name()
        with T.no_grad():
            untracked = z.scatter(1, idx, src, reduce=reduce).grad_fn
        try:
            out.sum().backward()
        except RuntimeError as e:
            return name, untracked, out.detach(), str(e)
        return name, untracked, "no error"

    same_printed(run, torch)


def _policy(ctx, op, *args, **kwargs):
    return "MUST_SAVE"


@pytest.mark.parametrize("policy", ["function", "tuple", "number", "str_list", "none"])
@pytest.mark.parametrize("reentrant", [False, True])
def test_selective_checkpoint(policy, reentrant):
    def run(T):
        cp = T.utils.checkpoint
        arg = {"function": _policy, "tuple": (_policy,), "number": 3, "str_list": ["mm"],
               "none": None}[policy]
        x = T.arange(4.0).requires_grad_()
        ctx = functools.partial(cp.create_selective_checkpoint_contexts, arg)
        out = cp.checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=reentrant,
                            context_fn=ctx)
        out.backward()
        return out, x.grad, len(ctx())

    same_printed(run, torch)


def test_checkpoint_policy_and_context_classes():
    def run(T):
        cp = T.utils.checkpoint
        c = cp.SelectiveCheckpointContext(is_recompute=True, op_output=1)
        return (list(cp.CheckpointPolicy), cp.CheckpointPolicy(3), c.is_recompute, c.op_output,
                issubclass(cp.CheckpointError, RuntimeError), cp.noop_context_fn.__name__,
                [type(c).__name__ for c in cp.noop_context_fn()])

    same_printed(run, torch)
    names = set(torch.utils.checkpoint.__all__) - {
        "SAC_IGNORED_OPS", "GraphExecGroup", "get_device_states", "set_device_states",
        "detach_variable", "check_backward_validity"}
    assert names == set(torchish.utils.checkpoint.__all__)


@pytest.mark.parametrize("flag", [None, True, False])
@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("custom_context", [False, True])
def test_checkpoint_debug_flag(flag, debug, custom_context):
    def run(T):
        cp = T.utils.checkpoint
        kw = {"context_fn": functools.partial(cp.create_selective_checkpoint_contexts,
                                              _policy)} if custom_context else {}
        x = T.arange(3.0).requires_grad_()
        with cp.set_checkpoint_debug_enabled(flag), cp.set_checkpoint_early_stop(False):
            out = cp.checkpoint(lambda t: (t * t).sum(), x, use_reentrant=False, debug=debug,
                                determinism_check="bad", **kw)
        return out

    same_printed(run, torch)


def test_checkpoint_default_device_type():
    def run(T):
        d = T.utils.checkpoint.DefaultDeviceType
        first = d.get_device_type()
        d.set_device_type("meta")
        second = d.get_device_type()
        d.set_device_type()
        third = d.get_device_type()
        d._default_device_type = None
        return first, second, third

    same_printed(run, torch)


@pytest.mark.parametrize("num_classes", [
    "3", "3.0", "True", "T.tensor(3)", "T.tensor(3.0)", "'3'", "None", "T.tensor([3])",
    "T.tensor(True)", "T.tensor(3, dtype=T.int8)", "np.int64(3)", "np.float64(3.0)", "-1"])
def test_one_hot_num_classes_type(num_classes):
    import numpy as np

    def run(T):
        n = eval(num_classes, {"T": T, "np": np})
        return T.nn.functional.one_hot(T.tensor([1, 0]), n), \
            outcome(lambda: T.nn.functional.one_hot(T.tensor([1, 0]), num_classes=n))

    same_printed(run, torch)


@pytest.mark.parametrize("call", [
    "F.one_hot(input=T.tensor([1, 0]), num_classes=2)",
    "F.one_hot(input=T.tensor([1, 0]), num_classes=2.0)",
    "F.one_hot(1.0, 2.0)", "F.one_hot(None)", "F.one_hot([1, 0], 3)",
    "F.one_hot(T.tensor([1.0]), 3)"])
def test_one_hot_input_argument(call):
    same_printed(lambda T: eval(call, {"T": T, "F": T.nn.functional}), torch)

"""Differential test of every registered op against PyTorch's own OpInfo database.

For each op in torchish's registry (and each public `torchish.X` function) that has an entry in
PyTorch's `op_db`, the OpInfo's `sample_inputs` (float32, float64, int64, bool where the OpInfo
supports them) are converted to torchish and the results compared with PyTorch's: values
(NaN positions equal), dtype and shape; when PyTorch raises, torchish must raise the same
exception type. For float64 samples of differentiable ops the gradients of `sum()` of every
floating output with respect to every floating input are compared too (this exercises the
dispatcher's `jax.vjp` autograd), and so are the outputs' grad_fn names and `next_functions`.

An OpInfo's `op` is often a lambda over `torch.*`; it is re-run with `torch` bound to torchish,
so the test calls exactly what a user's code would.
"""
import os
import re
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import torchish  # noqa: E402
from torchish._ops.registry import REGISTRY  # noqa: E402

from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
from torch.testing._internal import common_utils as _cu  # noqa: E402
from torch.testing._internal.opinfo import core as _opinfo_core  # noqa: E402

# OpInfo looks up the running unittest through inspect.stack() for every sample (to attach
# per-test skips); that reads the source of every frame and dominated this file's runtime.
_cu.extract_test_fn = _opinfo_core.extract_test_fn = lambda: None

# Samples per dtype (each sample costs an XLA compilation, which dominates the runtime); the
# first GRAD_SAMPLES float64 samples also check gradients. TORCHISH_OPINFO_SAMPLES=n runs the
# first n samples of every dtype, all with gradients (a deeper, slower run).
_N = os.environ.get("TORCHISH_OPINFO_SAMPLES")
MAX_SAMPLES = {torch.float64: 3, torch.float32: 1, torch.int64: 2, torch.bool: 1} if not _N \
    else dict.fromkeys((torch.float32, torch.float64, torch.int64, torch.bool), int(_N))
GRAD_SAMPLES = 2 if not _N else int(_N)
DTYPES = (torch.float32, torch.float64, torch.int64, torch.bool)
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-7, atol=1e-7),
       torch.float16: dict(rtol=1e-3, atol=1e-3), torch.bfloat16: dict(rtol=1e-2, atol=1e-2),
       torch.complex64: dict(rtol=1e-5, atol=1e-5), torch.complex128: dict(rtol=1e-7, atol=1e-7)}
GRAD_TOL = dict(rtol=1e-6, atol=1e-6)

# "name" or "name.variant" -> why it cannot match yet. Keep short and honest: fix rather than list.
KNOWN_FAILURES = {
    "sparse.mm.reduce": "its samples are sparse CSR tensors (only COO is supported)",
    "as_strided.partial_views": "samples are views into a larger storage, which the conversion "
                                "through NumPy cannot reproduce",
}
# case id -> why its outputs' grad_fn names differ from PyTorch's (float64 samples).
KNOWN_NAME_MISMATCHES = {
    **dict.fromkeys(("linalg.matrix_power", "linalg.tensorinv", "to"),
                    "PyTorch composes these of other ops (or another overload), whose last "
                    "node names the output; torchish records the op itself"),
}
KNOWN_NAME_MISMATCHES.update(dict.fromkeys(
    ("nn.functional.linear_cross_entropy.chunked",
     "nn.functional.linear_cross_entropy.chunked_none"),
    "options= runs the reference computation; PyTorch's chunked kernel records its own nodes"))
# case id -> why its node's `next_functions` differ from PyTorch's (float64 samples): the node
# has PyTorch's name, but PyTorch reaches it through other ops first (its composite records
# several nodes where torchish's op records one).
KNOWN_EDGE_MISMATCHES = {
    **dict.fromkeys(
        ("nn.functional.scaled_dot_product_attention",),
        "PyTorch's composite records inner nodes (views, pads, scalar ops) torchish's op has not"),
}
# Checks that are skipped for an op (not failures: the behaviour differs by design).
SKIP_VALUES = {
    # uninitialised memory in PyTorch; torchish's empty is zeros
    "empty", "empty_like", "new_empty", "empty_strided", "new_empty_strided", "empty_permuted",
}


# ---- op_db entry -> torchish callable ----------------------------------------------------

def _torchish_attr(path):
    obj = torchish
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _seeded(op, *args, **kwargs):
    torchish.manual_seed(42)
    return op(*args, **kwargs)


def _rebound(fn):
    """`fn` (a Python function over `torch.*`) with `torch` meaning torchish."""
    glb = dict(fn.__globals__)
    for k, v in fn.__globals__.items():
        if v is torch:
            glb[k] = torchish
    glb["torch"] = torchish
    if "wrapper_set_seed" in glb:  # OpInfo seeds random ops with torch.manual_seed(42)
        glb["wrapper_set_seed"] = _seeded
    code = fn.__code__
    closure = fn.__closure__
    if closure:  # closures over torch functions (polygamma's n): rebind those cells too
        cells = []
        for c in closure:
            v = c.cell_contents
            if isinstance(v, types.FunctionType):
                v = _rebound(v)
            elif isinstance(v, types.BuiltinFunctionType) and getattr(torchish, v.__name__,
                                                                     None) is not None:
                v = getattr(torchish, v.__name__)
            cells.append(types.CellType(v))
        closure = tuple(cells)
    return types.FunctionType(code, glb, fn.__name__, fn.__defaults__, closure)


def _registered(name):
    """The registry/namespace name an op_db name refers to, or None."""
    if name in REGISTRY or callable(getattr(torchish, name, None)) and "." not in name:
        return name
    if name.startswith("nn.functional."):
        short = name[len("nn.functional."):]
        d = REGISTRY.get(short)
        if d is not None and d.bindings["nn"]:
            return name
    if name.startswith("linalg."):
        if "linalg_" + name[len("linalg."):] in REGISTRY:
            return name
    if name.startswith(("fft.", "special.")) and callable(_torchish_attr(name)):
        return name   # torchish.fft / torchish.special, over `fft_*` / `special_*` ops
    member = getattr(torchish.Tensor, name, None)
    if callable(_torchish_attr(name)) or callable(member) or isinstance(member, property):
        return name   # composed in Python (nn.functional, conversions, dunders, properties)
    return None


def _torch_attr(path):
    obj = torch
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _torchish_callable(info):
    f = info.op
    name = info.name
    if isinstance(f, types.FunctionType) and f is not _torch_attr(name) and \
            f is not getattr(torch.Tensor, name, None):  # torch.Tensor.__rsub__: ours below
        return _rebound(f)  # a lambda over torch.* in the OpInfo
    fn = _torchish_attr(name)
    if not callable(fn):  # torchish.cdouble is a dtype; Tensor.cdouble the conversion
        fn = None
    if fn is None and name.startswith("linalg."):
        fn = getattr(torchish, "linalg_" + name[len("linalg."):], None)
    if fn is None and info.method_variant is not None:
        meth = getattr(torchish.Tensor, name, None)
        if meth is not None:
            return lambda self, *a, **k: meth(self, *a, **k)
    return fn


def _torch_callable(info):
    if _torchish_attr(info.name) is None and info.method_variant is not None and \
            not isinstance(info.op, types.FunctionType):
        return info.method_variant
    return info.op


def _case_id(info):
    return info.name + ("." + info.variant_test_name if info.variant_test_name else "")


CASES = [info for info in op_db if _registered(info.name)]


# ---- conversion ----------------------------------------------------------------------------

class _Converter:
    """torch -> torchish for a sample; float tensors become fresh leaves on both sides."""

    def __init__(self, grad):
        self.grad = grad
        self.memo = {}
        self.pairs = []  # (torch leaf, torchish leaf) that require grad

    def __call__(self, x):
        if isinstance(x, torch.Tensor):
            key = id(x)
            if key not in self.memo:
                self.memo[key] = self._tensor(x)
            return self.memo[key]
        if isinstance(x, (torch.dtype, torch.memory_format)):
            return getattr(torchish, str(x).split(".")[1])
        if isinstance(x, torch.Size):
            return tuple(x)
        if isinstance(x, torch.device):
            return torchish.device(str(x))
        if isinstance(x, torch.nn.Module) and not list(x.parameters()) and \
                not list(x.buffers()):  # a parameterless module argument (PairwiseDistance)
            cls = getattr(torchish.nn, type(x).__name__)
            ours = cls.__new__(cls)
            torchish.nn.Module.__init__(ours)
            for k, v in vars(x).items():
                if not k.startswith("_"):
                    setattr(ours, k, v)  # its hyperparameters (norm, eps, keepdim)
            return ours
        if isinstance(x, list):
            return [self(v) for v in x]
        if isinstance(x, tuple):
            return tuple(self(v) for v in x)
        if isinstance(x, dict):
            return {k: self(v) for k, v in x.items()}
        return x

    def _tensor(self, t):
        arr = t.detach().cpu().resolve_conj().resolve_neg().cpu().numpy()
        ours = torchish.tensor(arr)
        if self.grad and t.dtype.is_floating_point and t.requires_grad:
            leaf = t.detach().clone().requires_grad_(True)
            ours.requires_grad_(True)
            self.pairs.append((leaf, ours))
            return leaf, ours
        return t, ours

    def torch_side(self, x):
        if isinstance(x, torch.Tensor):
            return self.memo[id(x)][0]
        if isinstance(x, list):
            return [self.torch_side(v) for v in x]
        if isinstance(x, tuple):
            return tuple(self.torch_side(v) for v in x)
        if isinstance(x, dict):
            return {k: self.torch_side(v) for k, v in x.items()}
        return x

    def ours_side(self, x):
        if isinstance(x, torch.Tensor):
            return self.memo[id(x)][1]
        if isinstance(x, list):
            return [self.ours_side(v) for v in x]
        if isinstance(x, tuple):
            return tuple(self.ours_side(v) for v in x)
        if isinstance(x, dict):
            return {k: self.ours_side(v) for k, v in x.items()}
        return self(x)


def _flat(x):
    if isinstance(x, (list, tuple)):
        for v in x:
            yield from _flat(v)
    else:
        yield x


def _compare(expected, actual, where, check_values=True):
    if isinstance(expected, torch.Tensor):
        assert isinstance(actual, torchish.Tensor), f"{where}: expected a Tensor, got " \
                                                    f"{type(actual).__name__}"
        assert str(actual.dtype) == str(expected.dtype), \
            f"{where}: dtype {actual.dtype} != torch's {expected.dtype}"
        assert tuple(actual.shape) == tuple(expected.shape), \
            f"{where}: shape {tuple(actual.shape)} != torch's {tuple(expected.shape)}"
        if not check_values:
            return
        if expected.layout is torch.sparse_coo:   # compared as dense tensors
            assert actual.layout is torchish.sparse_coo, f"{where}: layout {actual.layout}"
            expected, actual = expected.to_dense(), actual.to_dense()
        e = expected.detach().cpu().resolve_conj().resolve_neg()
        a = np.asarray(actual.detach()._data)
        if e.dtype is torch.bfloat16:  # NumPy has no bfloat16: compare in float32
            e, a = e.float(), a.astype(np.float32)
        e = e.cpu().numpy()
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(a, e, equal_nan=True, err_msg=where,
                                       **TOL.get(expected.dtype, {}))
        else:
            np.testing.assert_array_equal(a, e, err_msg=where)
    elif isinstance(expected, (list, tuple)):
        assert isinstance(actual, (list, tuple)), f"{where}: expected a sequence, got " \
                                                  f"{type(actual).__name__}"
        assert len(actual) == len(expected), f"{where}: {len(actual)} outputs != " \
                                             f"{len(expected)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            _compare(e, a, f"{where}[{i}]", check_values)
    elif isinstance(expected, (bool, int, float, complex)):
        assert type(actual) is type(expected) or isinstance(actual, type(expected)), \
            f"{where}: {type(actual).__name__} != torch's {type(expected).__name__}"
        if check_values:
            np.testing.assert_allclose(actual, expected, equal_nan=True, err_msg=where)
    elif expected is None:
        assert actual is None, f"{where}: expected None"


def _float_outputs(out):
    return [o for o in _flat(out) if isinstance(o, (torch.Tensor, torchish.Tensor))
            and (o.dtype.is_floating_point or o.dtype.is_complex) and o.requires_grad]


# Ops whose index outputs among equal values PyTorch does not specify (libstdc++ introsort /
# nth_element order): the indices must select the same values, not be the same indices.
# name -> (position of `dim` in args, default dim, index of the indices output or None)
TIE_INDICES = {"sort": (0, -1, 1), "argsort": (0, -1, None), "topk": (1, -1, 1),
               "kthvalue": (1, -1, 1), "median": (0, None, 1), "nanmedian": (0, None, 1),
               "mode": (0, -1, 1)}


def _tie_check(info, sample, expected, actual, where):
    """Compare the outputs of a TIE_INDICES op: values exactly, indices by what they select."""
    pos, default, k = TIE_INDICES[info.name]
    dim = sample.args[pos] if len(sample.args) > pos else sample.kwargs.get("dim", default)
    if dim is None or not isinstance(expected, (tuple, list, torch.Tensor)):
        _compare(expected, actual, where)
        return
    x = sample.input.detach().cpu().numpy()
    t_idx = expected if k is None else expected[k]
    o_idx = actual if k is None else actual[k]
    _compare(t_idx, o_idx, where + " (indices)", check_values=False)
    if k is not None:
        _compare(expected[0], actual[0], where + " (values)")
    if x.ndim == 0:
        return
    ti, oi = t_idx.cpu().numpy(), np.asarray(o_idx._data)
    if ti.ndim < x.ndim:
        ti, oi = np.expand_dims(ti, dim), np.expand_dims(oi, dim)
    np.testing.assert_array_equal(np.take_along_axis(x, oi, dim),
                                  np.take_along_axis(x, ti, dim), err_msg=where + " (indices)")


def _processed(sample, expected, actual):
    """The OpInfo's output_process_fn_grad on both results (eigh: abs of eigenvectors)."""
    try:
        return sample.output_process_fn_grad(expected), sample.output_process_fn_grad(actual)
    except Exception:  # noqa: BLE001 - it calls torch on our outputs: compare the raw ones
        return expected, actual


def _edge_names(out):
    """`next_functions` of an output's node as (node name or None, input nr) pairs."""
    if out.grad_fn is None:
        return None
    return [(None if f is None else f.name(), nr) for f, nr in out.grad_fn.next_functions]


def _check_sample(info, sample, dtype, i, torch_fn, ours_fn):
    grad = dtype is torch.float64 and info.supports_autograd and i < GRAD_SAMPLES
    conv = _Converter(grad)
    pieces = (sample.input, sample.args, sample.kwargs)
    conv(pieces)
    t_in, t_args, t_kw = conv.torch_side(pieces)
    o_in, o_args, o_kw = conv.ours_side(pieces)
    where = f"{_case_id(info)} {dtype} sample {i}: {sample.summary()}"
    seed = 1234 + i  # random ops draw from PyTorch's generator, which torchish reproduces
    torch.manual_seed(seed)
    try:
        expected = torch_fn(t_in, *t_args, **t_kw)
    except Exception as exc:  # torch refuses: so must we, with the same type
        torchish.manual_seed(seed)
        with pytest.raises(type(exc)):
            ours_fn(o_in, *o_args, **o_kw)
        return
    torchish.manual_seed(seed)
    try:
        actual = ours_fn(o_in, *o_args, **o_kw)
    except Exception as exc:
        raise AssertionError(f"{where}: torchish raised {type(exc).__name__}: {exc}") from exc
    _compare(expected, actual, where, check_values=False)
    expected, actual = _processed(sample, expected, actual)
    if info.name in TIE_INDICES:
        _tie_check(info, sample, expected, actual, where)
    else:
        _compare(expected, actual, where, check_values=info.name not in SKIP_VALUES)
    if not grad or not conv.pairs:
        return
    t_outs, o_outs = _float_outputs(expected), _float_outputs(actual)
    if not t_outs:
        return
    assert len(o_outs) == len(t_outs), f"{where}: {len(o_outs)} differentiable outputs, " \
                                       f"torch has {len(t_outs)}"
    if _case_id(info) not in KNOWN_NAME_MISMATCHES:
        assert [o.grad_fn.name() if o.grad_fn else None for o in o_outs] == \
            [o.grad_fn.name() if o.grad_fn else None for o in t_outs], f"{where}: grad_fn"
    # the node's edges: one per differentiable tensor input (None where it needs no grad)
    if _case_id(info) not in KNOWN_NAME_MISMATCHES | KNOWN_EDGE_MISMATCHES:
        ours, theirs = [_edge_names(o) for o in o_outs], [_edge_names(o) for o in t_outs]
        assert ours == theirs, f"{where}: grad_fn.next_functions {ours} != torch's {theirs}"
    t_leaves = [p[0] for p in conv.pairs]
    o_leaves = [p[1] for p in conv.pairs]
    # d(sum of outputs) = backward with all-ones cotangents (no extra ops to compile)
    t_grads = torch.autograd.grad(t_outs, t_leaves, [torch.ones_like(o) for o in t_outs],
                                  allow_unused=True)
    o_grads = torchish.autograd.grad(
        o_outs, o_leaves, [torchish.tensor(np.ones(o.shape, o.dtype.np)) for o in o_outs],
        allow_unused=True)
    for k, (tg, og) in enumerate(zip(t_grads, o_grads)):
        if tg is None or tg._is_zerotensor():
            tg = torch.zeros_like(t_leaves[k])
        e = tg.detach().cpu().numpy()
        a = np.zeros(e.shape, e.dtype) if og is None else np.asarray(og._data)
        assert a.shape == e.shape, f"{where}: grad {k} shape {a.shape} != {e.shape}"
        np.testing.assert_allclose(a, e, equal_nan=True, err_msg=f"{where}: grad {k}",
                                   **GRAD_TOL)


@pytest.mark.parametrize("info", CASES, ids=_case_id)
def test_op(info):
    reason = KNOWN_FAILURES.get(_case_id(info)) or KNOWN_FAILURES.get(info.name)
    if reason:
        pytest.xfail(reason)
    ours_fn = _torchish_callable(info)
    if ours_fn is None:
        pytest.skip("no torchish callable")
    torch_fn = _torch_callable(info)
    ran = 0
    for dtype in DTYPES:
        if not info.supports_dtype(dtype, "cpu"):
            continue
        grad = dtype is torch.float64 and info.supports_autograd
        samples = info.sample_inputs("cpu", dtype, requires_grad=grad)
        for i, sample in enumerate(samples):
            if i >= MAX_SAMPLES[dtype]:
                break
            _check_sample(info, sample, dtype, i, torch_fn, ours_fn)
            ran += 1
    if not ran:
        pytest.skip("no sample for float32/float64/int64/bool")


# ---- error inputs: OpInfo's cases where PyTorch raises ---------------------------------------

MAX_ERROR_INPUTS = 8
# case id -> why its error inputs cannot raise as PyTorch's do yet
KNOWN_ERROR_FAILURES = {
    "gather": "index bounds are checked on values, inside the compiled op (no host sync)",
    "scatter": "index bounds are checked on values, inside the compiled op (no host sync)",
    "scatter_add": "index bounds are checked on values, inside the compiled op (no host sync)",
    "multinomial": "_ops/random_ops.py: no limit on the number of categories (2**24)",
}
ERROR_CASES = [info for info in CASES if info.error_inputs_func is not None]


def _has_scalar_operand(sample):
    values = [sample.input] + list(sample.args)
    return any(isinstance(v, (bool, int, float, complex)) for v in values)


@pytest.mark.parametrize("info", ERROR_CASES, ids=_case_id)
def test_error_inputs(info):
    """Same exception type as PyTorch, and a message matching OpInfo's regex."""
    reason = KNOWN_ERROR_FAILURES.get(_case_id(info))
    if reason:
        pytest.xfail(reason)
    ours_fn = _torchish_callable(info)
    if ours_fn is None:
        pytest.skip("no torchish callable")
    try:
        errors = list(info.error_inputs(torch.device("cpu")))[:MAX_ERROR_INPUTS]
    except Exception as exc:  # noqa: BLE001 - a few generators expect a device string
        pytest.skip(f"error_inputs not generated: {exc}")
    ran = 0
    for k, error in enumerate(errors):
        sample = error.sample_input
        tensors = [t for t in _flat((sample.input, sample.args, list(sample.kwargs.values())))
                   if isinstance(t, torch.Tensor)]
        if "out" in sample.kwargs or "device" in str(error.error_regex) or any(
                t.device.type != "cpu" for t in tensors):
            continue  # out= and multi-device checks have no torchish counterpart
        if error.error_type in (Exception, TypeError) and _has_scalar_operand(sample):
            continue  # a Python scalar where PyTorch wants a Tensor: torchish accepts those
        conv = _Converter(False)
        pieces = (sample.input, sample.args, sample.kwargs)
        try:
            conv(pieces)
        except ValueError:  # NumPy cannot hold it (more than 64 dims)
            continue
        o_in, o_args, o_kw = conv.ours_side(pieces)
        where = f"{_case_id(info)} error input {k}: {sample.summary()}"
        try:
            ours_fn(o_in, *o_args, **o_kw)
        except Exception as exc:  # noqa: BLE001
            assert isinstance(exc, error.error_type), \
                f"{where}: raised {type(exc).__name__}: {exc}; PyTorch raises " \
                f"{error.error_type.__name__} matching {error.error_regex!r}"
            assert re.search(error.error_regex, str(exc)), \
                f"{where}: message {str(exc)!r} does not match {error.error_regex!r}"
        else:
            raise AssertionError(f"{where}: no error; PyTorch raises "
                                 f"{error.error_type.__name__} matching {error.error_regex!r}")
        ran += 1
    if not ran:
        pytest.skip("no applicable error input")

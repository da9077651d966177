"""Names PyTorch programs reach for beyond the ops: the ATen spellings at the top level
(`torch.dropout`, `torch.max_pool1d`, ...), tensor predicates, `torch.version` and version
comparisons, layouts, `torch.jit` run eagerly, `torch.multiprocessing`; each against real
PyTorch where it is installed."""
import warnings

import numpy as np
import pytest

import torchish

import spawn_targets  # tests/spawn_targets.py: what spawned children import

torch = pytest.importorskip("torch")


def _summary(t):
    if isinstance(t, tuple):
        return [_summary(u) for u in t]
    return (tuple(t.shape), str(t.dtype), t.grad_fn.name() if t.grad_fn else None,
            np.asarray(t.detach().double().tolist()).round(6).tolist())


ALIASES = {
    "max_pool1d": lambda T, x: T.max_pool1d(x, 2),
    "max_pool1d_args": lambda T, x: T.max_pool1d(x, 3, 2, 1),
    "max_pool2d": lambda T, x: T.max_pool2d(x, 2),
    "avg_pool1d": lambda T, x: T.avg_pool1d(x, 2),
    "adaptive_avg_pool1d": lambda T, x: T.adaptive_avg_pool1d(x, 4),
    "adaptive_max_pool1d": lambda T, x: T.adaptive_max_pool1d(x, 4),
    "dropout_eval": lambda T, x: T.dropout(x, 0.5, False),
    "feature_dropout_eval": lambda T, x: T.feature_dropout(x, 0.5, False),
    "feature_dropout_train": lambda T, x: (T.manual_seed(3), T.feature_dropout(x, 0.5, True))[1],
    "dropout_train": lambda T, x: (T.manual_seed(3), T.dropout(x, 0.25, True))[1],
    "prelu": lambda T, x: T.prelu(x, T.tensor([0.1, 0.2, 0.3])),
    "rrelu_eval": lambda T, x: T.rrelu(x),
    "embedding": lambda T, x: T.embedding(x[0], T.tensor([[0, 2], [1, 1]])),
    "detach": lambda T, x: T.detach(x),
    "adjoint": lambda T, x: T.adjoint(x),
    "mH": lambda T, x: x.mH,
    "H": lambda T, x: x[0].H,
    "conj": lambda T, x: x.conj(),
    "positive": lambda T, x: +x,
    "real": lambda T, x: x.real,
    "conj_physical": lambda T, x: T.conj_physical(x),
    "conj_physical_complex": lambda T, x: T.conj_physical(x * 1j).abs(),
    "hardshrink": lambda T, x: T.hardshrink(x, 0.7),
    "hardshrink_method": lambda T, x: x.hardshrink(),
    "polygamma_method": lambda T, x: (x.abs() + 1).polygamma(1),
    "to_dense": lambda T, x: x.to_dense(),
    "resolve": lambda T, x: x.resolve_conj().resolve_neg(),
}


@pytest.mark.parametrize("case", sorted(ALIASES))
def test_aten_spellings(case):
    got = []
    for T in (torchish, torch):
        x = T.tensor(np.linspace(-2, 2, 72).reshape(4, 3, 6).astype(np.float32),
                     requires_grad=True)
        out = ALIASES[case](T, x)
        got.append((_summary(out), out is x))
    assert got[0] == got[1]


def test_predicates_and_strided_allocations():
    got = []
    for T in (torchish, torch):
        x = T.ones(2, 3, requires_grad=True)
        y = T.ones(2, 3)
        y.swapdims_(0, 1)
        row = [T.is_signed(x), T.is_conj(x), T.is_neg(x), T.is_inference(x), T.get_device(x),
               x[0, 0].is_nonzero(), x.is_mps, x.is_xpu, x.output_nr, (x * 2).output_nr,
               x.unbind(0)[1].output_nr, repr(x.layout), x.layout == T.strided,
               repr(T.sparse_coo), tuple(y.shape), y.is_shared(), y.share_memory_() is y,
               T.empty_strided((2, 3), (1, 2)).stride(),
               x.new_empty_strided((2, 3), (3, 1)).stride()]
        for bad in (lambda: T.ones(3).mH, lambda: T.ones(3).mT, lambda: T.ones(2, 2, 2).H):
            try:
                bad()
            except RuntimeError as exc:
                row.append(str(exc))
        got.append(row)
    assert got[0] == got[1]


def test_version_compares_as_a_version():
    v = torchish.__version__
    assert isinstance(v, str) and v.startswith("2.13.0")
    assert v >= "2.0" and v >= "2.13" and v > "2.9" and v < "3" and v < (2, 14)
    assert v >= (2, 13) and not v < "2.2" and v != "2.12.0"
    assert torchish.version.__version__ == v and torchish.version.cuda is None
    assert isinstance(v, torchish.torch_version.TorchVersion)
    # what real PyTorch answers for its own version string
    assert (torch.__version__ >= "2.0", torch.__version__ < "2.2") == (True, False)


def test_jit_runs_eagerly():
    @torchish.jit.script
    def scale(a, b: int):
        return a * b

    @torchish.jit.ignore(drop=True)
    def helper(x):
        return x + 1

    class M(torchish.jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.lin = torchish.nn.Linear(2, 1)

        @torchish.jit.script_method
        def forward(self, x):
            return self.lin(x)

    assert scale(torchish.ones(2), 3).tolist() == [3.0, 3.0]
    assert helper(torchish.ones(1)).tolist() == [2.0]
    assert not torchish.jit.is_scripting() and not torchish.jit.is_tracing()
    assert torchish.jit.annotate(int, 3) == 3
    lin = torchish.nn.Linear(3, 1)
    assert isinstance(torchish.jit.trace(lin, torchish.ones(1, 3)), torchish.jit.ScriptModule)
    assert torchish.jit.wait(torchish.jit.fork(scale, torchish.ones(1), 2)).tolist() == [2.0]
    failing = torchish.jit.fork(lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing.wait()
    m = M()
    assert isinstance(m, torchish.nn.Module) and isinstance(m, torchish.jit.ScriptModule)
    assert m(torchish.ones(1, 2)).shape == (1, 1)
    with pytest.raises(NotImplementedError, match="torch.jit.save"):
        torchish.jit.save(m, "m.pt")


def test_multiprocessing_spawn():
    mp = torchish.multiprocessing
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    mp.spawn(spawn_targets.put_rank_sum, args=(queue,), nprocs=2)
    assert sorted(queue.get() for _ in range(2)) == [(0, 0), (1, 3)]


def test_multiprocessing_spawn_reports_a_failure():
    with pytest.raises(torchish.multiprocessing.ProcessRaisedException, match="rank 0 failed"):
        torchish.multiprocessing.spawn(spawn_targets.raise_for_rank, nprocs=1)



def test_backend_submodules_import_and_hold_flags():
    import importlib
    got = []
    for T in (torchish, torch):
        name = T.__name__
        mods = {m: importlib.import_module(f"{name}.backends.{m}")
                for m in ("cudnn", "cuda", "mps", "cpu", "mkldnn", "openmp", "mkl", "mha")}
        cudnn = mods["cudnn"]
        row = [cudnn.enabled, cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32,
               cudnn.is_available(), cudnn.version(), mods["mps"].is_available(),
               mods["cuda"].matmul.allow_tf32, mods["cuda"].flash_sdp_enabled(),
               mods["mkldnn"].is_available(), mods["openmp"].is_available(),
               mods["mha"].get_fastpath_enabled()]
        # (through flags(): PyTorch's test utilities, once imported, forbid setting them)
        with cudnn.flags(enabled=True, benchmark=True):
            row.append(T.backends.cudnn.benchmark)
        with cudnn.flags(enabled=False):
            row.append(T.backends.cudnn.enabled)
        row.append(T.backends.cudnn.enabled)
        attention = importlib.import_module(f"{name}.nn.attention")
        with attention.sdpa_kernel([attention.SDPBackend.MATH]):
            row += [mods["cuda"].math_sdp_enabled(), mods["cuda"].flash_sdp_enabled()]
            q = T.ones(1, 2, 3)
            row.append(tuple(T.nn.functional.scaled_dot_product_attention(q, q, q).shape))
        row += [mods["cuda"].flash_sdp_enabled(), repr(attention.SDPBackend.MATH),
                list(attention.SDPBackend.__members__)]
        hooks = importlib.import_module(f"{name}.utils.hooks")
        row.append(hooks.unserializable_hook(lambda grad: None).__torch_unserializable__)
        got.append(row)
    assert got[0] == got[1]


# module paths that programs import names from (`from torch.X import Y`), with a name each
MODULE_PATHS = {
    "utils.data.distributed": "DistributedSampler", "utils.data._utils.collate": "default_collate",
    "utils.data.dataloader": "DataLoader", "utils.data.sampler": "BatchSampler",
    "nn.parallel.distributed": "DistributedDataParallel", "nn.parallel": "DataParallel",
    "nn.common_types": "_size_2_t", "autograd.variable": "Variable", "types": "Number",
    "return_types": "max", "utils.hooks": "RemovableHandle", "nn.attention": "sdpa_kernel",
    "backends.cudnn": "benchmark", "version": "cuda", "torch_version": "TorchVersion",
    "jit": "script", "multiprocessing": "spawn", "nn.utils.stateless": "functional_call",
    "nn.utils.prune": "l1_unstructured", "utils.benchmark": "Timer",
    "utils.benchmark.utils.common": "Measurement", "quasirandom": "SobolEngine",
}


@pytest.mark.parametrize("path", sorted(MODULE_PATHS))
def test_module_paths(path):
    import importlib
    for T in (torchish, torch):
        module = importlib.import_module(f"{T.__name__}.{path}")
        assert hasattr(module, MODULE_PATHS[path]), (T.__name__, path)


def test_storages():
    got = []
    for T in (torchish, torch):
        x = T.arange(6.0).reshape(2, 3)
        y = x[1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            typed = x.storage()
        got.append([x.untyped_storage().size(), x.untyped_storage().nbytes(),
                    x.untyped_storage().data_ptr() == y.untyped_storage().data_ptr(),
                    typed.size(), len(typed), str(typed.dtype), typed.tolist(), typed[4],
                    type(typed).__name__, T.is_storage(typed), T.is_storage(x),
                    typed.data_ptr() == x.data_ptr(), x.untyped_storage()[0],
                    x.untyped_storage()[9], y.data_ptr() - x.data_ptr(),
                    x.view(T.int32).data_ptr() == x.data_ptr(),
                    T.view_as_real(T.ones(2, dtype=T.complex64)).untyped_storage().nbytes()])
    assert got[0] == got[1]

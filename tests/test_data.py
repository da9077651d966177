"""Differential tests of torchish.utils.data against torch.utils.data.

Index orders (samplers, shuffling DataLoaders, random_split) must equal PyTorch's for the same
seed; collated batches must have PyTorch's structure, types, dtypes, shapes and values; worker
threads must give the same batches as ``num_workers=0``.
"""

import collections
import threading
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
# more worker threads than CPUs is fine for these tests
pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create")
import torchish  # noqa: E402
from torchish.utils import data as td  # noqa: E402

tud = torch.utils.data
SEEDS = [0, 1, 7, 1234, 2**40 + 3]


def seeded(seed, mine, ref):
    """``(mine(), ref())``, each run right after seeding its library's default generator."""
    torchish.manual_seed(seed)
    a = mine()
    torch.manual_seed(seed)
    return a, ref()


def gens(seed):
    g1, g2 = torchish.Generator(), torch.Generator()
    g1.manual_seed(seed)
    g2.manual_seed(seed)
    return g1, g2


def to_np(t):
    return np.asarray(t.cpu().numpy())


def assert_same(mine, ref, path="batch"):
    """``mine`` (torchish objects) has the structure, types, dtypes and values of ``ref``."""
    if isinstance(ref, torch.Tensor):
        assert isinstance(mine, torchish.Tensor), (path, type(mine))
        assert tuple(mine.shape) == tuple(ref.shape), path
        assert repr(mine.dtype) == repr(ref.dtype), (path, mine.dtype, ref.dtype)
        np.testing.assert_array_equal(to_np(mine), ref.cpu().numpy(), err_msg=path)
        return
    assert type(mine) is type(ref), (path, type(mine), type(ref))
    if isinstance(ref, dict):
        assert list(mine) == list(ref), path
        for k in ref:
            assert_same(mine[k], ref[k], f"{path}[{k!r}]")
    elif isinstance(ref, (list, tuple)):
        assert len(mine) == len(ref), path
        for i, (a, b) in enumerate(zip(mine, ref)):
            assert_same(a, b, f"{path}[{i}]")
    elif isinstance(ref, np.ndarray):
        np.testing.assert_array_equal(mine, ref)
    else:
        assert mine == ref, path


def batches_as_lists(loader):
    return [b.tolist() for b in loader]


class Range(td.Dataset):
    """Map-style dataset: item i is the int i (collates to an int64 tensor)."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return i

    def __len__(self):
        return self.n


class TRange(tud.Dataset):
    def __init__(self, n):
        self.n = n

    def __getitem__(self, i):
        return i

    def __len__(self):
        return self.n


# --------------------------------------------------------------------------- samplers

@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("n", [1, 5, 10, 100])
def test_random_sampler_permutation(seed, n):
    mine, ref = seeded(seed, lambda: [list(td.RandomSampler(range(n))) for _ in range(3)],
                       lambda: [list(tud.RandomSampler(range(n))) for _ in range(3)])
    assert mine == ref  # 3 epochs
    g1, g2 = gens(seed)
    assert list(td.RandomSampler(range(n), generator=g1)) == \
        list(tud.RandomSampler(range(n), generator=g2))


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("num_samples", [1, 5, 32, 33, 70, 100])
def test_random_sampler_replacement(seed, num_samples):
    mine, ref = seeded(
        seed, lambda: list(td.RandomSampler(range(10), replacement=True, num_samples=num_samples)),
        lambda: list(tud.RandomSampler(range(10), replacement=True, num_samples=num_samples)))
    assert mine == ref and len(mine) == num_samples
    g1, g2 = gens(seed)
    assert list(td.RandomSampler(range(7), True, num_samples, generator=g1)) == \
        list(tud.RandomSampler(range(7), True, num_samples, generator=g2))


@pytest.mark.parametrize("seed", SEEDS)
def test_random_sampler_more_samples_than_data(seed):
    mine, ref = seeded(seed, lambda: list(td.RandomSampler(range(6), num_samples=20)),
                       lambda: list(tud.RandomSampler(range(6), num_samples=20)))
    assert mine == ref and len(mine) == 20


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("replacement", [True, False])
def test_weighted_random_sampler(seed, replacement):
    weights = [0.1, 0.9, 0.4, 0.7, 3.0, 0.6, 0.0, 1.5]
    for num_samples in ([5, 7] if not replacement else [1, 5, 50]):
        mine, ref = seeded(
            seed, lambda: list(td.WeightedRandomSampler(weights, num_samples, replacement)),
            lambda: list(tud.WeightedRandomSampler(weights, num_samples, replacement)))
        assert mine == ref
        g1, g2 = gens(seed)
        assert list(td.WeightedRandomSampler(weights, num_samples, replacement, g1)) == \
            list(tud.WeightedRandomSampler(weights, num_samples, replacement, g2))


def test_weighted_random_sampler_checks():
    s = td.WeightedRandomSampler(np.array([1.0, 2.0]), 3)
    assert repr(s.weights.dtype) == "torch.float64" and len(s) == 3
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        td.WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="replacement should be a boolean"):
        td.WeightedRandomSampler([1.0], 1, replacement=1)
    with pytest.raises(ValueError, match="1d sequence"):
        td.WeightedRandomSampler([[1.0, 2.0]], 1)


@pytest.mark.parametrize("seed", SEEDS)
def test_subset_random_sampler(seed):
    idx = [3, 9, 27, 81, 243, 5]
    mine, ref = seeded(seed, lambda: list(td.SubsetRandomSampler(idx)),
                       lambda: list(tud.SubsetRandomSampler(idx)))
    assert mine == ref
    g1, g2 = gens(seed)
    assert list(td.SubsetRandomSampler(idx, g1)) == list(tud.SubsetRandomSampler(idx, g2))


def test_sequential_and_batch_sampler():
    assert list(td.SequentialSampler(range(4))) == [0, 1, 2, 3]
    for bs in (1, 3, 4, 10):
        for drop_last in (False, True):
            mine = td.BatchSampler(td.SequentialSampler(range(10)), bs, drop_last)
            ref = tud.BatchSampler(tud.SequentialSampler(range(10)), bs, drop_last)
            assert list(mine) == list(ref) and len(mine) == len(ref)
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        td.BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean"):
        td.BatchSampler(range(3), 2, 0)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        td.RandomSampler(range(3), replacement=0)
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        td.RandomSampler(range(3), num_samples=0)


@pytest.mark.parametrize("seed", [0, 3])
def test_distributed_sampler(seed):
    ds = list(range(11))
    for shuffle in (True, False):
        for drop_last in (True, False):
            for rank in range(3):
                kw = dict(num_replicas=3, rank=rank, shuffle=shuffle, seed=seed,
                          drop_last=drop_last)
                mine, ref = td.DistributedSampler(ds, **kw), tud.DistributedSampler(ds, **kw)
                mine.set_epoch(2), ref.set_epoch(2)
                assert list(mine) == list(ref) and len(mine) == len(ref)


# --------------------------------------------------------------------------- DataLoader order

@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (4, False), (4, True), (7, True)])
def test_dataloader_shuffle_order(seed, batch_size, drop_last):
    def run(lib, data, ds):
        loader = data.DataLoader(ds, batch_size=batch_size, shuffle=True, drop_last=drop_last)
        # consecutive epochs draw from the same default generator; afterwards it must have
        # advanced by exactly as many draws as PyTorch's
        return [batches_as_lists(loader) for _ in range(3)], len(loader), \
            lib.randperm(20).tolist()

    mine, ref = seeded(seed, lambda: run(torchish, td, Range(30)),
                       lambda: run(torch, tud, TRange(30)))
    assert mine == ref


@pytest.mark.parametrize("seed", SEEDS)
def test_dataloader_generator_and_base_seed(seed):
    g1, g2 = gens(seed)
    mine = td.DataLoader(Range(25), batch_size=4, shuffle=True, generator=g1)
    ref = tud.DataLoader(TRange(25), batch_size=4, shuffle=True, generator=g2)
    for _ in range(2):
        assert batches_as_lists(mine) == batches_as_lists(ref)
    it1, it2 = iter(mine), iter(ref)
    assert it1._base_seed == it2._base_seed
    mine, ref = seeded(seed, lambda: iter(td.DataLoader(Range(3)))._base_seed,
                       lambda: iter(tud.DataLoader(TRange(3)))._base_seed)
    assert mine == ref


@pytest.mark.parametrize("seed", SEEDS)
def test_dataloader_with_samplers(seed):
    def with_sampler(data, ds):
        sampler = data.RandomSampler(ds, replacement=True, num_samples=50)
        return batches_as_lists(data.DataLoader(ds, batch_size=6, sampler=sampler))

    mine, ref = seeded(seed, lambda: with_sampler(td, Range(40)),
                       lambda: with_sampler(tud, TRange(40)))
    assert mine == ref

    def with_batch_sampler(data, ds):
        sampler = data.WeightedRandomSampler([1.0] * 20 + [3.0] * 20, 30)
        loader = data.DataLoader(ds, batch_sampler=data.BatchSampler(sampler, 8, False))
        return batches_as_lists(loader), len(loader)

    mine, ref = seeded(seed, lambda: with_batch_sampler(td, Range(40)),
                       lambda: with_batch_sampler(tud, TRange(40)))
    assert mine == ref and ref[1] == 4


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("lengths", [[3, 8], [0.3, 0.7], [0.5, 0.25, 0.25], [0.1] * 10,
                                     [1, 0, 10]])
def test_random_split(seed, lengths):
    data = list(range(11))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zero-length split warnings
        mine, ref = seeded(seed, lambda: td.random_split(data, lengths),
                           lambda: tud.random_split(data, lengths))
        assert [m.indices for m in mine] == [r.indices for r in ref]
        assert [list(m) for m in mine] == [[data[i] for i in r.indices] for r in ref]
        g1, g2 = gens(seed)
        mine = td.random_split(data, lengths, generator=g1)
        ref = tud.random_split(data, lengths, generator=g2)
        assert [m.indices for m in mine] == [r.indices for r in ref]


def test_random_split_errors():
    with pytest.raises(ValueError, match="Sum of input lengths"):
        td.random_split(range(5), [2, 2])
    with pytest.warns(UserWarning, match="Length of split at index 2 is 0"):
        assert [len(s) for s in td.random_split(range(2), [0.5, 0.5, 0.0])] == [1, 1, 0]


# --------------------------------------------------------------------------- collate

Point = collections.namedtuple("Point", ["x", "y"])


def make_samples(lib, n=3):
    """The same samples built with torch or torchish tensors."""
    out = []
    for i in range(n):
        arr = np.arange(6, dtype=np.float32).reshape(2, 3) + i
        out.append({
            "tensor": lib.tensor(arr),
            "int_tensor": lib.tensor([i, 2 * i], dtype=lib.int32),
            "scalar_tensor": lib.tensor(float(i)),
            "np": arr.astype(np.float64),
            "np_int": np.array([i, i + 1], dtype=np.int16),
            "np_scalar": np.float32(i / 2),
            "np_int_scalar": np.int64(i),
            "np_bool": np.bool_(i % 2),
            "float": i * 0.5,
            "int": i,
            "bool": bool(i % 2),
            "str": f"s{i}",
            "bytes": b"b",
            "tuple": (i, float(i)),
            "list": [i, [i + 1.0, lib.tensor([i])]],
            "point": Point(i, lib.ones(2) * i),
            "nested": {"a": {"b": i}},
        })
    return out


def test_default_collate_matches_torch():
    mine = td.default_collate(make_samples(torchish))
    ref = tud.default_collate(make_samples(torch))
    assert_same(mine, ref)
    # the dtypes PyTorch picks
    assert repr(mine["float"].dtype) == "torch.float64"
    assert repr(mine["int"].dtype) == "torch.int64"
    assert repr(mine["bool"].dtype) == "torch.bool"
    assert repr(mine["np_scalar"].dtype) == "torch.float32"
    assert mine["str"] == ["s0", "s1", "s2"]
    assert isinstance(mine["point"], Point)
    assert isinstance(mine["tuple"], list)


@pytest.mark.parametrize("batch", [
    [1, 2, 3],
    [1.5, 2.5],
    [True, False],
    ["a", "b"],
    [(1, "a"), (2, "b")],
    [[1, 2], [3, 4]],
    [np.zeros((2, 2), np.uint8), np.ones((2, 2), np.uint8)],
    [np.float64(1.0), np.float64(2.0)],
    [np.int32(3), np.int32(4)],
    [{"x": 1, "y": [1.0, 2.0]}, {"x": 2, "y": [3.0, 4.0]}],
    [collections.OrderedDict(b=1, a=2), collections.OrderedDict(b=3, a=4)],
])
def test_default_collate_cases(batch):
    assert_same(td.default_collate(batch), tud.default_collate(batch))


def test_default_collate_errors():
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal"):
        td.default_collate([[1, 2], [3]])
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        td.default_collate([object(), object()])
    with pytest.raises(TypeError, match="default_collate: batch must contain"):
        td.default_collate([np.array(["a"]), np.array(["b"])])


def test_default_convert_matches_torch():
    samples = [np.arange(3), {"a": np.float32(2.0), "b": [np.int8(1), "x"]}, (np.ones(2), 3),
               Point(np.zeros(1), "y"), np.array(["s"]), "plain", 4.5]
    for s in samples:
        assert_same(td.default_convert(s), tud.default_convert(s))


def test_collate_fn_map_is_extensible():
    assert torchish.Tensor in td._collate.default_collate_fn_map

    class Box:
        def __init__(self, v):
            self.v = v

    fn_map = dict(td._collate.default_collate_fn_map)
    fn_map[Box] = lambda batch, *, collate_fn_map: sum(b.v for b in batch)
    out = td._collate.collate([{"b": Box(1), "t": 1}, {"b": Box(2), "t": 2}],
                              collate_fn_map=fn_map)
    assert out["b"] == 3 and out["t"].tolist() == [1, 2]


_COLLATE_MAP = """\
import torch
class Box:
    v = 2
fn_map = {Box: lambda batch, *, collate_fn_map: len(batch)}
fn_map.update(torch.utils.data._utils.collate.default_collate_fn_map)
print(torch.utils.data._utils.collate.collate([(Box(), 1.5), (Box(), 2.5)], collate_fn_map=fn_map))
print(list(torch.utils.data.distributed.DistributedSampler(range(4), num_replicas=2, rank=1)))
"""


def test_data_submodules_are_attributes_after_import_torch(tmp_path):
    # default_collate's documented extension point and DistributedSampler's home, reached as
    # attributes (no submodule import)
    import subprocess
    import sys
    script = tmp_path / "collate_map.py"
    script.write_text(_COLLATE_MAP)

    def run(*args):
        return subprocess.run([sys.executable, *args, str(script)], capture_output=True,
                              text=True, timeout=120).stdout
    assert run("-m", "torchish") == run() != ""


def test_tensor_dataset_loader_batches():
    x = np.arange(40, dtype=np.float32).reshape(10, 4)
    y = np.arange(10)
    mine = td.DataLoader(td.TensorDataset(torchish.tensor(x), torchish.tensor(y)), batch_size=3)
    ref = tud.DataLoader(tud.TensorDataset(torch.tensor(x), torch.tensor(y)), batch_size=3)
    got, want = list(mine), list(ref)
    assert len(got) == len(want) == 4
    for a, b in zip(got, want):
        assert_same(a, b)


@pytest.mark.parametrize("drop_last", [False, True])
def test_drop_last(drop_last):
    mine = td.DataLoader(Range(10), batch_size=4, drop_last=drop_last)
    ref = tud.DataLoader(TRange(10), batch_size=4, drop_last=drop_last)
    assert batches_as_lists(mine) == batches_as_lists(ref)
    assert len(mine) == len(ref) == (2 if drop_last else 3)


def test_batch_size_none_uses_default_convert():
    data = [np.arange(3), np.arange(3) + 1]
    mine = list(td.DataLoader(data, batch_size=None))
    ref = list(tud.DataLoader(data, batch_size=None))
    assert_same(mine, ref)


def test_custom_collate_fn_and_getitems():
    class Batched(td.Dataset):
        calls = []

        def __getitem__(self, i):
            raise AssertionError("__getitems__ should be used")

        def __getitems__(self, idx):
            self.calls.append(list(idx))
            return [i * 10 for i in idx]

        def __len__(self):
            return 5

    loader = td.DataLoader(Batched(), batch_size=2, collate_fn=lambda b: tuple(b))
    assert list(loader) == [(0, 10), (20, 30), (40,)]
    assert Batched.calls == [[0, 1], [2, 3], [4]]


# --------------------------------------------------------------------------- datasets

def test_dataset_wrappers():
    a, b = Range(3), Range(4)
    cat = a + b
    assert isinstance(cat, td.ConcatDataset) and len(cat) == 7
    assert [cat[i] for i in range(7)] == [0, 1, 2, 0, 1, 2, 3] and cat[-1] == 3
    assert cat.cumulative_sizes == [3, 7]
    with pytest.raises(ValueError, match="absolute value of index"):
        cat[-8]
    sub = td.Subset(b, [3, 1])
    assert len(sub) == 2 and sub[0] == 3 and sub.__getitems__([1, 0]) == [1, 3]
    st = td.StackDataset(a, Range(3))
    assert st[1] == (1, 1) and len(st) == 3 and st.__getitems__([0, 2]) == [(0, 0), (2, 2)]
    sd = td.StackDataset(x=a, y=Range(3))
    assert sd[2] == {"x": 2, "y": 2}
    assert sd.__getitems__([1]) == [{"x": 1, "y": 1}]
    with pytest.raises(ValueError, match="Size mismatch"):
        td.StackDataset(a, b)
    t = td.TensorDataset(torchish.arange(6).reshape(3, 2), torchish.arange(3))
    assert len(t) == 3 and [v.tolist() for v in t[1]] == [[2, 3], 1]
    with pytest.raises(AssertionError, match="Size mismatch"):
        td.TensorDataset(torchish.zeros(2), torchish.zeros(3))

    class Bad(td.Subset):
        def __getitem__(self, i):
            return 0

    with pytest.raises(NotImplementedError, match="overrides __getitem__ but not __getitems__"):
        Bad(a, [0])
    with pytest.raises(NotImplementedError):
        td.Dataset()[0]


class Stream(td.IterableDataset):
    """0..n-1, sharded between workers by ``get_worker_info``."""

    def __init__(self, n, shard=True):
        self.n = n
        self.shard = shard

    def __iter__(self):
        info = td.get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))

    def __len__(self):
        return self.n


def test_iterable_dataset():
    chain = Stream(3) + Stream(2)
    assert isinstance(chain, td.ChainDataset) and list(chain) == [0, 1, 2, 0, 1] \
        and len(chain) == 5
    loader = td.DataLoader(Stream(10), batch_size=4)
    assert batches_as_lists(loader) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert len(loader) == 3
    loader = td.DataLoader(Stream(10), batch_size=4, drop_last=True)
    assert batches_as_lists(loader) == [[0, 1, 2, 3], [4, 5, 6, 7]] and len(loader) == 2
    assert [int(x) for x in td.DataLoader(Stream(3), batch_size=None)] == [0, 1, 2]
    with pytest.raises(ValueError, match="expected unspecified shuffle option"):
        td.DataLoader(Stream(3), shuffle=True)
    with pytest.raises(ValueError, match="expected unspecified sampler option"):
        td.DataLoader(Stream(3), sampler=[0])


def test_dataloader_argument_errors():
    ds = Range(5)
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        td.DataLoader(ds, shuffle=True, sampler=[0, 1])
    with pytest.raises(ValueError, match="batch_sampler option is mutually exclusive"):
        td.DataLoader(ds, batch_size=2, batch_sampler=[[0]])
    with pytest.raises(ValueError, match="mutually exclusive with drop_last"):
        td.DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="num_workers option should be non-negative"):
        td.DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError, match="prefetch_factor option could only be specified"):
        td.DataLoader(ds, prefetch_factor=2)
    with pytest.raises(ValueError, match="persistent_workers option needs num_workers > 0"):
        td.DataLoader(ds, persistent_workers=True)
    with pytest.raises(ValueError, match="multiprocessing_context can only be used"):
        td.DataLoader(ds, multiprocessing_context="spawn")
    loader = td.DataLoader(ds)
    with pytest.raises(ValueError, match="batch_size attribute should not be set"):
        loader.batch_size = 3
    assert td.get_worker_info() is None


# --------------------------------------------------------------------------- workers

@pytest.mark.parametrize("seed", SEEDS[:3])
@pytest.mark.parametrize("num_workers", [1, 2, 3])
def test_workers_same_batches_as_single(seed, num_workers):
    x = np.random.RandomState(seed).randn(37, 3).astype(np.float32)
    ds = td.TensorDataset(torchish.tensor(x), torchish.arange(37))
    torchish.manual_seed(seed)
    single = [tuple(to_np(t) for t in b)
              for b in td.DataLoader(ds, batch_size=5, shuffle=True)]
    torchish.manual_seed(seed)
    multi = [tuple(to_np(t) for t in b)
             for b in td.DataLoader(ds, batch_size=5, shuffle=True, num_workers=num_workers,
                                    prefetch_factor=3, pin_memory=False, timeout=60)]
    assert len(single) == len(multi) == 8
    for a, b in zip(single, multi):
        for u, v in zip(a, b):
            np.testing.assert_array_equal(u, v)
    # and the same as PyTorch
    torch.manual_seed(seed)
    tds = tud.TensorDataset(torch.tensor(x), torch.arange(37))
    ref = [b[1].tolist() for b in tud.DataLoader(tds, batch_size=5, shuffle=True)]
    assert [b[1].tolist() for b in multi] == ref


def test_workers_persistent_and_options():
    # persistent workers draw the base seed once, not per epoch: give the sampler its own
    # generator so the order can be compared with a single-process PyTorch loader
    g1, g2 = gens(5)
    loader = td.DataLoader(Range(23), batch_size=4, num_workers=2, persistent_workers=True,
                           drop_last=True, sampler=td.RandomSampler(Range(23), generator=g1))
    ref_loader = tud.DataLoader(TRange(23), batch_size=4, drop_last=True,
                                sampler=tud.RandomSampler(TRange(23), generator=g2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pin_memory without an accelerator
        for epoch in range(3):
            assert batches_as_lists(loader) == batches_as_lists(ref_loader), epoch
        # an abandoned epoch followed by a full one
        it = iter(loader)
        next(it)
        assert len(batches_as_lists(loader)) == len(loader) == 5
        loader2 = td.DataLoader(Range(9), batch_size=2, num_workers=2, pin_memory=True,
                                worker_init_fn=lambda i: None, in_order=False)
        assert sorted(sum(batches_as_lists(loader2), [])) == list(range(9))


def test_worker_info_and_init_fn():
    seen = {}
    lock = threading.Lock()

    class Probe(td.Dataset):
        def __getitem__(self, i):
            info = td.get_worker_info()
            with lock:
                seen.setdefault(info.id, info)
            return i

        def __len__(self):
            return 12

    inits = []
    g = torchish.Generator()
    g.manual_seed(11)
    loader = td.DataLoader(Probe(), batch_size=2, num_workers=3, generator=g,
                           worker_init_fn=lambda wid: inits.append(
                               (wid, td.get_worker_info().id)))
    it = iter(loader)
    base_seed = it._base_seed
    assert sum(batches_as_lists(it), []) == list(range(12))
    assert sorted(inits) == [(0, 0), (1, 1), (2, 2)]
    assert sorted(seen) == [0, 1, 2]
    for wid, info in seen.items():
        assert info.num_workers == 3 and info.seed == base_seed + wid
        assert info.worker_method == "thread"
        # per-worker generators seeded like a PyTorch worker process seeds its globals
        assert isinstance(info.rng.torch_generator, torchish.Generator)
    g2 = torch.Generator()
    g2.manual_seed(11)
    assert base_seed == iter(tud.DataLoader(TRange(1), generator=g2))._base_seed
    assert td.get_worker_info() is None


def test_worker_seeds_numpy_like_torch():
    from torch.utils.data._utils.worker import _generate_state
    from torchish.utils.data.dataloader import _generate_state as mine

    for base in (0, 1, 2**32 + 5, 2**63 - 1, 123456789012345):
        for wid in range(4):
            assert mine(base, wid) == _generate_state(base, wid)


def test_workers_iterable_dataset_interleaving():
    # PyTorch asks workers round-robin, so sharded streams come out interleaved by worker
    loader = td.DataLoader(Stream(10), batch_size=2, num_workers=2)
    assert batches_as_lists(loader) == [[0, 2], [1, 3], [4, 6], [5, 7], [8], [9]]
    loader = td.DataLoader(Stream(7, shard=False), batch_size=None, num_workers=2)
    assert sorted(int(v) for v in loader) == sorted(list(range(7)) * 2)


def test_worker_exception_propagates():
    class Boom(td.Dataset):
        def __getitem__(self, i):
            if i == 5:
                raise KeyError("bad index 5")
            return i

        def __len__(self):
            return 8

    loader = td.DataLoader(Boom(), batch_size=2, num_workers=2)
    it = iter(loader)
    assert next(it).tolist() == [0, 1] and next(it).tolist() == [2, 3]
    with pytest.raises(KeyError, match="bad index 5"):
        next(it)

    def bad_init(wid):
        raise ValueError("init failed")

    with pytest.raises(ValueError, match="init failed"):
        list(td.DataLoader(Range(4), num_workers=2, worker_init_fn=bad_init))


def test_len_matches_torch():
    for kw in [dict(batch_size=1), dict(batch_size=3), dict(batch_size=3, drop_last=True),
               dict(batch_size=None), dict(batch_size=4, shuffle=True)]:
        assert len(td.DataLoader(Range(10), **kw)) == len(tud.DataLoader(TRange(10), **kw))


WORKER_RNG_SCRIPT = """
import torch
from torch.utils.data import DataLoader, Dataset
class Noisy(Dataset):
    def __len__(self):
        return 10
    def __getitem__(self, i):
        return torch.randn(2) + i, torch.initial_seed() % 1000
def init(worker_id):
    if worker_id == 1:
        torch.manual_seed(100 + worker_id)
if __name__ == "__main__":
    torch.manual_seed(0)
    for kw in ({}, {"worker_init_fn": init, "persistent_workers": True}):
        loader = DataLoader(Noisy(), batch_size=3, num_workers=2, shuffle=True, **kw)
        for epoch in range(2):
            for x, seeds in loader:
                print([x.tolist(), seeds.tolist()])
        print([torch.randn(3).tolist(), torch.initial_seed()])
"""


def test_worker_random_draws_are_pytorchs_and_leave_the_main_stream(tmp_path):
    """Each worker draws from its own default generator seeded `base_seed + id` (re-seeded by
    `manual_seed` in a worker_init_fn), as in PyTorch's worker processes; the main thread's
    stream is not advanced by the workers' draws."""
    import subprocess
    import sys
    script = tmp_path / "worker_rng.py"
    script.write_text(WORKER_RNG_SCRIPT)
    runs = [subprocess.run([sys.executable] + args + [str(script)], capture_output=True,
                           text=True, timeout=300) for args in ([], ["-m", "torchish"])]
    for r in runs:
        assert r.returncode == 0, r.stderr[-2000:]
    want, got = (r.stdout.splitlines() for r in runs)
    assert len(want) == 18
    for w, g in zip(want, got):   # [values, seeds]: values equal to float32 rounding
        (w_values, w_seeds), (g_values, g_seeds) = eval(w), eval(g)
        np.testing.assert_allclose(g_values, w_values, rtol=1e-6)
        assert g_seeds == w_seeds

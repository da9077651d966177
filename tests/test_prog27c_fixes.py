"""Fixes found by the sweep-27 ported programs (PROG27C) and the probing around them:
torch.histogram / torch.histogramdd check their arguments as PyTorch does (one histogramdd
routine behind both: its messages, in its order, the data's own range refused when not finite,
no data binned over [0, 1]); searchsorted checks its `sorter`; trapezoid and
cumulative_trapezoid check and align the sample points `x` as PyTorch does; histc, histogram,
searchsorted/bucketize, kthvalue, median, cummax/cummin, logsumexp, nansum/nanmean name a wrong
`out` dtype as PyTorch does."""
import math

import pytest

from differential import same_printed

torch = pytest.importorskip("torch")


def _data(T, kind):
    v = T.linspace(0.05, 0.95, 10)
    return {"v": v, "m": v.reshape(2, 5), "nan": T.tensor([1.0, float("nan")]),
            "long": T.arange(3), "half": v.half(), "bf16": v.bfloat16(), "bool": T.tensor([True]),
            "empty": T.tensor([]), "0d": T.tensor(0.5)}[kind]


HISTOGRAM = [
    # (input, bins, keyword arguments): bins "e:<dtype>" edges, "e2d" 2-d edges, "e1" one edge
    ("v", "e:float64", {}), ("v", "e:int64", {}), ("half", "e:float32", {}), ("v", "e2d", {}),
    ("v", "e0", {}), ("v", "e1", {}), ("v", "e1", {"w": 2}), ("long", "e:int64", {}),
    ("long", "e1:int64", {}), ("long", "e:int64", {"w": 3}), ("long", "e:int64", {"wl": 2}),
    ("v", 3, {"w": 3}), ("m", 3, {"w": 5}), ("m", "e:float32", {"w2": (2, 4)}),
    ("m", 2, {"w2": (2, 5)}), ("v", 3, {"wd": 10}), ("v", "e:float32", {"wd": 10}),
    ("v", 0, {}), ("long", 0, {}), ("v", 0, {"w": 3}), ("v", 0, {"range": (1.0, 0.0)}),
    ("v", 2, {"range": (1.0, 0.0), "w": 3}), ("v", 2, {"range": (float("nan"), 0.0), "w": 3}),
    ("v", 2, {"range": (0.0, float("inf"))}), ("v", 2, {"range": (-float("inf"), 1.0)}),
    ("nan", 2, {}), ("nan", 2, {"w": 3}), ("nan", 2, {"wd": 2}), ("nan", 2, {"range": (0., 2.)}),
    ("long", 2, {}), ("long", 2, {"w": 3}), ("long", 2, {"range": (1.0, 0.0)}),
    ("long", 2, {"range": (float("nan"), 1.0)}), ("long", 2, {"range": (0.0, 1.0)}),
    ("half", 2, {}), ("bf16", 2, {}), ("bool", 2, {}), ("half", 2, {"range": (0.0, 1.0)}),
    ("half", 2, {"range": (0.0, 1e5)}), ("v", 2, {"range": (0.0, 1e39)}),
    ("empty", 2, {}), ("0d", 2, {}), ("0d", 2, {"w0": True}), ("0d", 2, {"w": 1}),
    ("v", 2, {"range": (1.0, 1.0)}),
]


def _histogram_args(T, kind, bins, kw):
    x = _data(T, kind)
    if isinstance(bins, str):
        dtype = getattr(T, bins.partition(":")[2] or "float32")
        bins = {"e": T.tensor([0.0, 0.5, 1.0]), "e2d": T.tensor([[0.0, 1.0]]),
                "e0": T.tensor([]), "e1": T.tensor([1.0])}[bins.partition(":")[0]].to(dtype)
    out = {}
    if "range" in kw:
        out["range"] = kw["range"]
    if "w" in kw:
        out["weight"] = T.ones(kw["w"])
    if "wl" in kw:
        out["weight"] = T.ones(kw["wl"], dtype=T.int64)
    if "w2" in kw:
        out["weight"] = T.ones(*kw["w2"])
    if "wd" in kw:
        out["weight"] = T.ones(kw["wd"], dtype=T.float64)
    if "w0" in kw:
        out["weight"] = T.tensor(2.0)
    return x, bins, out


@pytest.mark.parametrize("case", range(len(HISTOGRAM)))
def test_histogram_checks_and_results_match(case):
    kind, bins, kw = HISTOGRAM[case]

    def run(T):
        x, b, extra = _histogram_args(T, kind, bins, kw)
        return T.histogram(x, b, **extra)
    same_printed(run, torch)


HISTOGRAMDD = [
    # (input shape or kind, bins, keyword arguments)
    ((5,), 2, {}), ((5,), 2, {"w": (3,)}), ((), 2, {}), ((5, 2), [2, 2, 2], {}),
    ((5, 2), [2, 2, 2], {"w": (3,)}), ((5, 2), [2, 0], {"range": [0.0, 1.0]}),
    ((5, 2), [2, 2, 2], {"range": [0.0, 1.0]}), ((5, 2), [0, 2], {"range": [1., 0., 0., 1.]}),
    ((5, 2), 2, {"range": [0.0, 1.0, 1.0, float("nan")]}), ((5, 2), [2, 0], {}),
    ((5, 2), 2, {"wd": (5,)}), ((5, 2), 2, {"wd": (3,)}), ((2, 3, 2), 2, {"w": (6,)}),
    ((2, 3, 2), 2, {"w": (2, 3)}), ("nan", 2, {}), ("nan", 2, {"w": (3,)}),
    ("long", [2], {}), ("long", 2, {}), ("half", 2, {}), ((5, 2), "t:int64", {}),
    ((5, 2), "t2d", {}), ((5, 2), "t0", {}), ((5, 2), "t1", {}), ((5, 2), "tlen", {"w": (3,)}),
    ((5, 2), "t:int64", {"wd": (5,)}), ("long", "t:int64", {}), ((5, 2), "mixed", {}),
    ((5, 2), [2.0, 2], {}), ((5, 2), "t:float32", {"range": [0.0, 1.0, 0.0, 1.0]}),
    ((0, 2), 2, {}),
]


@pytest.mark.parametrize("case", range(len(HISTOGRAMDD)))
def test_histogramdd_checks_and_results_match(case):
    shape, bins, kw = HISTOGRAMDD[case]

    def run(T):
        if shape == "nan":
            x = T.tensor([[1.0, float("nan")]])
        elif shape in ("long", "half"):
            x = T.ones(5, 2, dtype=T.int64 if shape == "long" else T.float16)
        else:
            n = 1
            for size in shape:
                n *= size
            x = T.linspace(0.05, 0.95, n).reshape(shape)
        b = bins
        if isinstance(bins, str):
            e = T.tensor([0.0, 1.0])
            b = {"t": [e, e.to(getattr(T, bins.partition(":")[2] or "float32"))],
                 "t2d": [e, e[None]], "t0": [e, e[:0]], "t1": [e, e[:1]], "tlen": [e],
                 "mixed": [e, 2]}[bins.partition(":")[0]]
            if bins.startswith("t:") and x.dtype == T.int64:
                b = [e.long(), e.long()]
        extra = {k: v for k, v in kw.items() if k == "range"}
        if "w" in kw:
            extra["weight"] = T.ones(kw["w"])
        if "wd" in kw:
            extra["weight"] = T.ones(kw["wd"], dtype=T.float64)
        return T.histogramdd(x, b, **extra)
    same_printed(run, torch)


def test_histogram_still_traces():
    # the data-range check reads values only when they are concrete
    import torchish
    x = torch.linspace(0.0, 3.0, 12)
    f = torchish.compile(lambda v: torchish.histogram(v, 4).hist)
    g = torchish.compile(lambda v: torchish.histogramdd(v.reshape(6, 2), bins=[2, 3]).hist)
    assert f(torchish.tensor(x.tolist())).tolist() == torch.histogram(x, 4).hist.tolist()
    assert g(torchish.tensor(x.tolist())).tolist() == \
        torch.histogramdd(x.reshape(6, 2), bins=[2, 3]).hist.tolist()


SEARCHSORTED = [
    # (sorted sequence, values, keyword arguments)
    ("s1", "v1", {"sorter": "short"}), ("s2", "v2", {"sorter": "row"}),
    ("s1", "v1", {"sorter": "2d"}), ("s1", "v1", {"sorter": "float"}),
    ("s1", "v1", {"sorter": "int32"}), ("s1", "v1", {"sorter": "high"}),
    ("s1", "v1", {"sorter": "negative"}), ("s1", "v1", {"sorter": "float_short"}),
    ("s1", "v1", {"side": "mid", "sorter": "float_short"}), ("s0", "v1", {"sorter": "short"}),
    ("s0", "v1", {"side": "mid"}), ("s2", "v0", {"side": "mid"}),
    ("s1", "v1", {"sorter": "high", "side": "left", "right": True}),
    ("s1", "v1", {"sorter": "high", "out_int32": True}), ("s1", "v1", {"sorter": "ok"}),
    ("s2", "v2", {"sorter": "ok2", "side": "right"}),
]


@pytest.mark.parametrize("case", range(len(SEARCHSORTED)))
def test_searchsorted_sorter_checks_match(case):
    seq, values, kw = SEARCHSORTED[case]

    def run(T):
        s = {"s1": T.tensor([3.0, 1.0, 2.0, 0.0]), "s0": T.tensor(1.0),
             "s2": T.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])}[seq]
        v = {"v1": T.tensor([0.5, 1.5, 2.5]), "v0": T.tensor(0.5),
             "v2": T.tensor([[1.5], [4.5]])}[values]
        extra = dict(kw)
        if "sorter" in kw:
            extra["sorter"] = {
                "short": T.tensor([0, 1]), "row": T.tensor([[1, 2, 0]]),
                "2d": T.tensor([[3, 1, 2, 0]]), "float": T.tensor([3.0, 1.0, 2.0, 0.0]),
                "int32": T.tensor([3, 1, 2, 0], dtype=T.int32), "high": T.tensor([3, 1, 2, 4]),
                "negative": T.tensor([3, -1, 2, 0]), "float_short": T.zeros(2),
                "ok": T.tensor([3, 1, 2, 0]), "ok2": T.tensor([[1, 2, 0], [0, 2, 1]]),
            }[kw["sorter"]]
        return T.searchsorted(s, v, **extra)
    same_printed(run, torch)


TRAPEZOID = [
    # (y shape, x: shape or "arange n", dim)
    ((2, 4), "arange 4", 0), ((2, 4), "arange 2", 0), ((4,), (3,), -1), ((2, 4), (2, 1, 4), -1),
    ((2, 4), (3, 4), -1), ((2, 4), (1, 4), -1), ((2, 3, 4), (3, 4), -1),
    ((2, 3, 4), (2, 3), 1), ((3, 4), (4,), -1),
]


@pytest.mark.parametrize("cumulative", [False, True])
@pytest.mark.parametrize("case", range(len(TRAPEZOID)))
def test_trapezoid_sample_points_match(case, cumulative):
    shape, xs, dim = TRAPEZOID[case]

    def run(T):
        y = T.linspace(0.0, 2.0, 24)[:math.prod(shape)].reshape(shape) ** 2
        if isinstance(xs, str):
            x = T.arange(float(xs.split()[1])) * 0.5
        else:
            x = T.linspace(0.0, 1.0, math.prod(xs)).reshape(xs) ** 3
        f = T.cumulative_trapezoid if cumulative else T.trapezoid
        return f(y, x=x, dim=dim)
    same_printed(run, torch, text=lambda t: str(t.round(decimals=4)))


def test_trapz_names_trapezoid():
    same_printed(lambda T: T.trapz(T.ones(4), T.arange(3.0)), torch, error=True)


OUT_DTYPES = [
    lambda T, v: T.histc(v, 3, out=T.empty(3, dtype=T.int64)),
    lambda T, v: T.histc(v.double(), 3, out=T.empty(3)),
    lambda T, v: T.histogram(v, 3, out=(T.empty(3), T.empty(4, dtype=T.int64))),
    lambda T, v: T.histogram(v, T.tensor([0.0, 1.0]), out=(T.empty(1, dtype=T.float64),
                                                            T.empty(2))),
    lambda T, v: T.histogram(v, 3, out=(T.empty(3), T.empty(4))),
    lambda T, v: T.bucketize(v, T.tensor([0.3, 0.6]), out=T.empty(5, dtype=T.int32)),
    lambda T, v: T.bucketize(v, T.tensor([0.3, 0.6]), out=T.empty(5)),
    lambda T, v: T.bucketize(v, T.tensor([0.3, 0.6]), out_int32=True,
                             out=T.empty(5, dtype=T.int32)),
    lambda T, v: T.searchsorted(T.tensor([0.3, 0.6]), v, out_int32=True,
                                out=T.empty(5, dtype=T.int64)),
    lambda T, v: T.kthvalue(v, 2, out=(T.empty(()), T.empty(()))),
    lambda T, v: T.kthvalue(v, 2, out=(T.empty((), dtype=T.float64), T.empty((), dtype=T.int64))),
    lambda T, v: T.median(v, 0, out=(T.empty(()), T.empty((), dtype=T.int32))),
    lambda T, v: T.median(v, 0, out=(T.empty((), dtype=T.float64), T.empty((), dtype=T.int64))),
    lambda T, v: T.cummax(v, 0, out=(T.empty(5, dtype=T.float64), T.empty(5, dtype=T.int64))),
    lambda T, v: T.cummin(v, 0, out=(T.empty(5), T.empty(5, dtype=T.int32))),
    lambda T, v: T.logsumexp(v, 0, out=T.empty((), dtype=T.int64)),
    lambda T, v: T.logsumexp(v, 0, out=T.empty((), dtype=T.float64)),
    lambda T, v: T.nansum(v, 0, out=T.empty((), dtype=T.int64)),
    lambda T, v: T.nanmean(v, 0, out=T.empty((), dtype=T.int64)),
]


@pytest.mark.parametrize("case", range(len(OUT_DTYPES)))
def test_histogram_out_dtype_checks_match(case):
    same_printed(lambda T: OUT_DTYPES[case](T, T.linspace(0.1, 0.9, 5)), torch)

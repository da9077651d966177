"""Gaps found by the sweep-24b ported programs (tests/programs/ported/sweep24b_*.py) and their
probes, checked against live PyTorch (skipped without it): dim range checks that a modulo or a
0-dim shortcut skipped (quantile, F.glu, F.normalize/cosine_similarity, squeeze, transpose,
swapaxes, flatten, movedim, select), 0-dim refusals of trapezoid, cumulative_trapezoid, split,
chunk, unbind, take_along_dim, gradient, unique(_consecutive), linalg.cross, unflatten,
repeat_interleave and searchsorted, and (a strict xfail until requested work lands)
PyTorch's partial-overlap refusal of in-place writes."""
import pytest

import torchish

torch = pytest.importorskip("torch")


def _outcome(lib, fn):
    try:
        return "ok", fn(lib).tolist()
    except (RuntimeError, IndexError) as e:
        return type(e).__name__, str(e)


@pytest.mark.parametrize("shape,dim", [((4,), 1), ((4,), -2), ((), 1), ((2, 3), 2)])
def test_quantile_dim_out_of_range(shape, dim):
    def run(lib):
        x = lib.arange(float(max(1, lib.Size(shape).numel()))).reshape(shape)
        return lib.quantile(x, 0.5, dim=dim)
    assert _outcome(torchish, run) == _outcome(torch, run)


@pytest.mark.parametrize("case", ["add_", "copy_", "setitem", "transpose", "out"])
def test_partial_overlap_refused(case):
    def run(lib):
        x = lib.arange(6.)
        if case == "add_":
            return x[1:5].add_(x[:4])
        if case == "copy_":
            return x[1:].copy_(x[:-1])
        if case == "setitem":
            x[1:5] = x[:4]
            return x
        if case == "transpose":
            y = x[:4].view(2, 2)
            return y.add_(y.t())
        return lib.neg(x[:4], out=x[1:5])
    assert _outcome(torchish, run) == _outcome(torch, run)


@pytest.mark.parametrize("case", ["same", "disjoint", "strided"])
def test_overlap_cases_pytorch_allows(case):
    # the check must keep allowing full overlap, disjoint halves and interleaved slices
    def run(lib):
        x = lib.arange(6.)
        if case == "same":
            return x.mul_(x)
        if case == "disjoint":
            return x[:3].add_(x[3:])
        return x[::2].add_(x[1::2])
    assert _outcome(torchish, run) == _outcome(torch, run)


def _error(lib, fn):
    try:
        fn(lib)
    except (RuntimeError, IndexError) as e:
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("shape,dim", [((4, 4), 2), ((4, 4), -3), ((4, 3), 5), ((4, 2), 1),
                                       ((4, 3), -1)])
def test_glu_dim_checked(shape, dim):
    # F.glu wrapped any dim modulo ndim: dim=2 of a 2-d input silently halved dim 0
    def run(lib):
        return lib.nn.functional.glu(lib.arange(float(shape[0] * shape[1])).view(shape), dim)
    assert _outcome(torchish, run) == _outcome(torch, run)
    assert _outcome(torchish, lambda lib: lib.nn.GLU(dim)(lib.ones(shape))[0]) == \
        _outcome(torch, lambda lib: lib.nn.GLU(dim)(lib.ones(shape))[0])


_ZERO_DIM = {
    "trapezoid": lambda lib, d, g: lib.trapezoid(lib.tensor(2., requires_grad=g), dim=d),
    "trapezoid_dx": lambda lib, d, g: lib.trapezoid(lib.tensor(2., requires_grad=g), dx=2.,
                                                   dim=d),
    "trapezoid_x": lambda lib, d, g: lib.trapezoid(lib.tensor(2., requires_grad=g),
                                                  lib.tensor(1.), dim=d),
    "cumulative_trapezoid": lambda lib, d, g: lib.cumulative_trapezoid(
        lib.tensor(2., requires_grad=g), dim=d),
    "cumulative_trapezoid_x": lambda lib, d, g: lib.cumulative_trapezoid(
        lib.tensor(2., requires_grad=g), lib.tensor(1.), dim=d),
    "split": lambda lib, d, g: lib.split(lib.tensor(2., requires_grad=g), 1, d),
    "split_sizes": lambda lib, d, g: lib.tensor(2., requires_grad=g).split([1], d),
    "chunk": lambda lib, d, g: lib.chunk(lib.tensor(2., requires_grad=g), 1, d),
    "chunk_zero": lambda lib, d, g: lib.chunk(lib.tensor(2., requires_grad=g), 0, d),
    "unbind": lambda lib, d, g: lib.unbind(lib.tensor(2., requires_grad=g), d),
    "take_along_dim": lambda lib, d, g: lib.take_along_dim(lib.tensor(2., requires_grad=g),
                                                          lib.tensor(0), d),
    "gradient": lambda lib, d, g: lib.gradient(lib.tensor(2., requires_grad=g), dim=d),
    "gradient_list": lambda lib, d, g: lib.gradient(lib.tensor(2., requires_grad=g), dim=[d]),
    "unique": lambda lib, d, g: lib.unique(lib.tensor(2., requires_grad=g), dim=d),
    "unique_consecutive": lambda lib, d, g: lib.unique_consecutive(
        lib.tensor(2., requires_grad=g), dim=d),
    "linalg_cross": lambda lib, d, g: lib.linalg.cross(lib.tensor(2., requires_grad=g),
                                                       lib.tensor(1.), dim=d),
    "repeat_interleave": lambda lib, d, g: lib.tensor(2., requires_grad=g).repeat_interleave(
        2, d),
    "repeat_interleave_counts": lambda lib, d, g: lib.tensor(
        2., requires_grad=g).repeat_interleave(lib.tensor([2]), d),
    "searchsorted": lambda lib, d, g: lib.searchsorted(lib.tensor(2., requires_grad=g),
                                                       lib.tensor([1., 3.])),
    "searchsorted_scalar": lambda lib, d, g: lib.searchsorted(
        lib.tensor(2., requires_grad=g).reshape([1] * (d + 2) if d >= 0 else []), 1.),
}


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("dim", [0, -1, 1, -2])
@pytest.mark.parametrize("name", sorted(_ZERO_DIM))
def test_zero_dim_refusals(name, dim, grad):
    # a 0-dim input: PyTorch's own errors, not a wrapped-dim or Python index error
    def run(lib):
        return _ZERO_DIM[name](lib, dim, grad)
    theirs = _error(torch, run)
    assert theirs is not None
    assert _error(torchish, run) == theirs


@pytest.mark.parametrize("dim", [0, -1, 2])
def test_zero_dim_unflatten(dim):
    # (PyTorch's message goes on with the C++ frames of the failure: its first two lines)
    def run(lib):
        return lib.tensor(2.).unflatten(dim, (1,))
    kind, message = _error(torch, run)
    assert _error(torchish, run) == (kind, "\n".join(message.split("\n")[:2]))


_DIM_CASES = {
    "normalize": lambda lib, t, d: lib.nn.functional.normalize(t, dim=d),
    "normalize_p1": lambda lib, t, d: lib.nn.functional.normalize(t, 1.0, d),
    "cosine_similarity": lambda lib, t, d: lib.nn.functional.cosine_similarity(t, t, dim=d),
    "squeeze": lambda lib, t, d: t.squeeze(d),
    "transpose": lambda lib, t, d: t.transpose(0, d),
    "swapaxes": lambda lib, t, d: lib.swapaxes(t, d, -1),
    "flatten": lambda lib, t, d: t.flatten(d),
    "flatten_end": lambda lib, t, d: t.flatten(0, d),
    "movedim": lambda lib, t, d: t.movedim(d, 0),
    "select": lambda lib, t, d: t.select(d, 0),
}


@pytest.mark.parametrize("shape,dim", [((2, 3), 2), ((2, 3), -3), ((4,), 1), ((), 0), ((), -1),
                                       ((), 1), ((), -2)])
@pytest.mark.parametrize("name", sorted(_DIM_CASES))
def test_dim_range_checked(name, shape, dim):
    # a modulo or a skipped check on 0-dim inputs used to accept dims PyTorch refuses
    def run(lib):
        t = lib.arange(1.0, 1.0 + max(1, lib.Size(shape).numel())).reshape(shape)
        return _DIM_CASES[name](lib, t, dim)
    assert _outcome(torchish, run) == _outcome(torch, run)

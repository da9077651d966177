"""Differential tests for torchish bugs found by the sweep-20 ported programs (PROG15):
each compares torchish with real PyTorch on the small case that exposed the bug."""
import pytest

import torchish
from differential import outcome

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("conc", [[[2.0, 3.0, 4.0], [0.5, 0.2, 0.9]], [2.0, 3.0, 4.0],
                                  [0.2, 0.3, 0.4], [[0.4, 0.3]]])
def test_dirichlet_mode_values_grad_fn_and_grad(conc):
    # PyTorch writes the all-below-one rows through a boolean mask: IndexPutBackward0, or
    # CopySlices when the mask is 0-dim
    out = {}
    for lib in (torch, torchish):
        c = lib.tensor(conc, requires_grad=True)
        mode = lib.distributions.Dirichlet(c).mode
        (mode * lib.arange(1.0, mode.shape[-1] + 1)).sum().backward()
        out[lib] = (mode.flatten().tolist(), mode.grad_fn.name(), c.grad.flatten().tolist())
    assert out[torchish][1] == out[torch][1]
    assert out[torchish][0] == pytest.approx(out[torch][0], rel=1e-6)
    assert out[torchish][2] == pytest.approx(out[torch][2], rel=1e-5, abs=1e-7)


def test_dirichlet_mode_compiles_whole():
    f = torchish.compile(lambda c: torchish.distributions.Dirichlet(c).mode, fullgraph=True)
    got = f(torchish.tensor([[2.0, 3.0, 4.0], [0.5, 0.2, 0.9]]))
    want = torch.distributions.Dirichlet(torch.tensor([[2.0, 3.0, 4.0], [0.5, 0.2, 0.9]])).mode
    assert got.flatten().tolist() == pytest.approx(want.flatten().tolist(), rel=1e-6)


def _complex_part_record(lib, part):
    """What a program sees of a complex tensor's real/imag part: a view (writes reach the
    tensor), its grad_fn, base, strides, offset, and the gradient through it."""
    z = lib.tensor([[1 + 2j, 3 - 1j], [0.5 + 0j, -2 + 4j]])
    p = part(lib, z)
    view = (p._base is z, p.stride(), p.storage_offset(), p.is_contiguous())
    p.mul_(10)
    w = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    q = part(lib, w * 1)
    (q * lib.tensor([2.0, -3.0])).sum().backward()
    return z.tolist(), view, q.grad_fn.name(), q.grad_fn.next_functions[0][0].name(), \
        w.grad.tolist()


@pytest.mark.parametrize("which", ["real", "imag"])
def test_real_imag_functions_are_views(which):
    def part(lib, t):
        return getattr(lib, which)(t)
    assert _complex_part_record(torchish, part) == _complex_part_record(torch, part)


@pytest.mark.parametrize("which", ["real", "imag"])
def test_real_imag_properties_are_views(which):
    def part(lib, t):
        return getattr(t, which)
    assert _complex_part_record(torchish, part) == _complex_part_record(torch, part)


def test_real_imag_of_real_tensors():
    for lib in (torch, torchish):
        x = lib.ones(2)
        assert lib.real(x) is x
        with pytest.raises(RuntimeError) as err:
            lib.imag(x)
        assert str(err.value) == "imag is not implemented for tensors with non-complex dtypes."


def test_real_imag_views_compile_whole():
    f = torchish.compile(lambda z: torchish.real(z) * 2 + torchish.imag(z), fullgraph=True)
    got = f(torchish.tensor([1 + 2j, 3 - 1j]))
    assert got.tolist() == [4.0, 5.0]


_COMPLEX_REFUSALS = {
    "max": lambda t: t.max(), "min": lambda t: t.min(), "max_dim": lambda t: t.max(1),
    "min_dim0": lambda t: t.min(0), "max_keepdim": lambda t: torch_like(t).max(t, 1, True),
    "amax": lambda t: t.amax(), "amax_dim": lambda t: t.amax(1), "amin_dim0": lambda t: t.amin(0),
    "argmax": lambda t: t.argmax(), "argmax_dim": lambda t: t.argmax(1),
    "argmin_dim0": lambda t: t.argmin(0), "aminmax": lambda t: t.aminmax(),
    "aminmax_dim": lambda t: t.aminmax(dim=1), "cummax": lambda t: t.cummax(1),
    "cummin": lambda t: t.cummin(0), "unique": lambda t: torch_like(t).unique(t),
    "unique_unsorted": lambda t: torch_like(t).unique(t, sorted=False),
    "unique_dim": lambda t: torch_like(t).unique(t, dim=0),
    "unique_consecutive": lambda t: torch_like(t).unique_consecutive(t),
    "unique_consecutive_dim": lambda t: torch_like(t).unique_consecutive(t, dim=1),
}


def torch_like(t):
    return torch if isinstance(t, torch.Tensor) else torchish


def _outcome(fn, t):
    return outcome(lambda: repr(fn(t)))


@pytest.mark.parametrize("empty", [False, True])
@pytest.mark.parametrize("name", sorted(_COMPLEX_REFUSALS))
def test_complex_input_to_ordering_ops(name, empty):
    # complex numbers have no order: PyTorch refuses (or, for an empty result, returns it),
    # with an error that depends on the op and on which check comes first
    fn = _COMPLEX_REFUSALS[name]
    outs = []
    for lib in (torch, torchish):
        t = lib.zeros(0, 2, dtype=lib.cdouble) if empty else lib.tensor([[1 + 2j, 3 - 1j]])
        outs.append(_outcome(fn, t))
    assert outs[1] == outs[0]


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_complex_input_to_fmax_fmin(name):
    outs = [_outcome(lambda t: getattr(lib, name)(t, t), lib.tensor([1 + 2j]))
            for lib in (torch, torchish)]
    assert outs[1] == outs[0]


@pytest.mark.parametrize("p", [2, 1, 3, float("inf"), 0])
def test_dist_of_complex_is_real_with_gradient(p):
    outs = []
    for lib in (torch, torchish):
        lib.manual_seed(0)
        z = lib.tensor([[1 + 2j, -0.5 + 0.25j], [3 - 1j, 0.5j]], requires_grad=True)
        w = lib.tensor([[0.5 - 1j, 1 + 1j], [2 + 0j, -1j]])
        d = lib.dist(z, w, p=p)
        d.backward()
        outs.append((str(d.dtype), d.grad_fn.name(), d.item(),
                     # (order 0: PyTorch leaves the gradient undefined)
                     None if z.grad is None else lib.view_as_real(z.grad).flatten().tolist()))
    assert outs[1][:2] == outs[0][:2]
    assert outs[1][2] == pytest.approx(outs[0][2], rel=1e-6)
    if p == 0:
        assert outs[1][3] is outs[0][3] is None
    else:
        assert outs[1][3] == pytest.approx(outs[0][3], rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("shape", [(2, 3), (0,)])
def test_nansum_refuses_complex(shape):
    outs = [_outcome(lambda t: t.nansum(0), lib.zeros(shape, dtype=lib.cfloat))
            for lib in (torch, torchish)]
    assert outs[1] == outs[0]

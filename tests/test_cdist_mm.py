"""torch.cdist's matmul route: for p=2 with more than 25 rows on either side (or
compute_mode="use_mm_for_euclid_dist") PyTorch computes |x1|^2 - 2 x1.x2 + |x2|^2 through a
matmul, clamped at 0 (rounding as that formula does): its graph is ViewBackward0 over
EuclideanDistBackward0, and a zero distance has gradient 0. Compared with real PyTorch."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

MM = "use_mm_for_euclid_dist"


def _pair(shape1, shape2, seed, dtype=np.float32, offset=0.0):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape1) + offset).astype(dtype)
    b = (rng.standard_normal(shape2) + offset).astype(dtype)
    return a, b


def _run(lib, a, b, **kw):
    x1 = lib.tensor(a, requires_grad=True)
    x2 = lib.tensor(b, requires_grad=True)
    d = lib.cdist(x1, x2, **kw)
    (d * lib.arange(d.shape[-1], dtype=d.dtype)).sum().backward()
    node = d.grad_fn
    inner = node.next_functions[0][0]
    names = [node.name(), inner.name(), [[n.name(), [m.name() for m, _ in n.next_functions]]
                                         for n, _ in inner.next_functions]]
    return d.detach().numpy(), x1.grad.numpy(), x2.grad.numpy(), names


@pytest.mark.parametrize("shape1, shape2, kw", [
    ((30, 3), (4, 3), {}), ((3, 2), (4, 2), {"compute_mode": MM}),
    ((2, 30, 3), (1, 4, 3), {}), ((1, 30, 3), (4, 3), {}), ((2, 1, 26, 2), (1, 3, 4, 2), {}),
    ((30, 3), (4, 3), {"compute_mode": "donot_use_mm_for_euclid_dist"}),
    ((30, 3), (4, 3), {"p": 1.0})])
def test_graph_values_and_grads(shape1, shape2, kw):
    a, b = _pair(shape1, shape2, 0)
    want, got = _run(torch, a, b, **kw), _run(torchish, a, b, **kw)
    assert got[3] == want[3]
    for g, w in zip(got[:3], want[:3]):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_zero_distance_has_zero_gradient():
    # cdist(x, x): the diagonal (0 up to the formula's rounding) must not give inf or nan
    a, _ = _pair((30, 3), (1, 3), 2)
    grads = []
    for lib in (torch, torchish):
        x = lib.tensor(a, requires_grad=True)
        d = lib.cdist(x, x)
        d.sum().backward()
        grads.append(x.grad.numpy())
        assert np.isfinite(d.detach().numpy()).all()
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-4)


def test_float64_and_no_grad():
    a, b = _pair((27, 5), (3, 5), 3, dtype=np.float64)
    want = torch.cdist(torch.tensor(a), torch.tensor(b)).numpy()
    with torchish.no_grad():
        got = torchish.cdist(torchish.tensor(a), torchish.tensor(b), compute_mode=MM)
    assert got.dtype == torchish.float64
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_bad_compute_mode():
    raised = []
    for lib in (torch, torchish):
        with pytest.raises(ValueError) as info:
            lib.cdist(lib.ones(2, 2), lib.ones(2, 2), compute_mode="fast")
        raised.append(str(info.value))
    assert raised[0] == raised[1]



@pytest.mark.parametrize("shape1, shape2, dtype", [
    ((3,), (2, 4, 3), "float32"), ((2, 4, 3), (3,), "float32"), ((3,), (4, 3), "int64")])
def test_one_dimensional_operand_is_refused(shape1, shape2, dtype):
    # checked first, before the dtype checks and the choice of the matmul route
    raised = []
    for lib in (torch, torchish):
        with pytest.raises(RuntimeError) as info:
            lib.cdist(lib.ones(shape1, dtype=getattr(lib, dtype)), lib.ones(shape2))
        raised.append(str(info.value))
    assert raised[1] == raised[0]

def test_autocast_casts_before_choosing_the_route():
    # a bfloat16 operand is cast to float32 first, then takes the matmul route
    names = []
    for lib in (torch, torchish):
        x = lib.ones(30, 3, requires_grad=True)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            d = lib.cdist(x.to(lib.bfloat16), lib.zeros(4, 3))
        names.append((str(d.dtype), d.grad_fn.name()))
    assert names[1] == names[0]

"""`nn.init` and default layer initialisation: same values as PyTorch after the same seed."""
import math
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


def _np(t):
    return np.asarray(t.detach().cpu().numpy())


def _same(fn, seed=0, exact=True):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.manual_seed(seed)
        ref = fn(torch)
        torchish.manual_seed(seed)
        got = fn(torchish)
    ref = ref if isinstance(ref, (list, tuple)) else [ref]
    got = got if isinstance(got, (list, tuple)) else [got]
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert tuple(g.shape) == tuple(r.shape)
        if exact:
            np.testing.assert_array_equal(_np(g), _np(r))
        else:
            np.testing.assert_allclose(_np(g), _np(r), rtol=1e-5, atol=1e-6)


# ---- default initialisation of layers ----------------------------------------------------

@pytest.mark.parametrize("shape", [(3, 2), (1, 1), (17, 5), (64, 33)])
def test_linear_default_init(shape):
    _same(lambda L: [p for p in L.nn.Linear(*shape).parameters()])


def test_linear_no_bias_and_float64():
    _same(lambda L: [L.nn.Linear(4, 7, bias=False).weight,
                     L.nn.Linear(5, 3, dtype=L.float64).weight])


def test_bilinear_default_init():
    _same(lambda L: list(L.nn.Bilinear(3, 4, 5).parameters()))


@pytest.mark.parametrize("padding_idx", [None, 0, -1])
def test_embedding_default_init(padding_idx):
    _same(lambda L: [L.nn.Embedding(10, 3, padding_idx=padding_idx).weight,
                     L.nn.EmbeddingBag(6, 4, padding_idx=padding_idx).weight])


def test_prelu_and_construction_order():
    _same(lambda L: list(L.nn.Sequential(L.nn.Linear(3, 4), L.nn.PReLU(4),
                                         L.nn.Embedding(5, 2), L.nn.Linear(4, 1)).parameters()))


def test_manual_seed_linear_weight_matches_fact():
    torchish.manual_seed(0)
    w = torchish.nn.Linear(3, 2).weight
    torch.manual_seed(0)
    np.testing.assert_array_equal(_np(w), _np(torch.nn.Linear(3, 2).weight))


# ---- init functions -----------------------------------------------------------------------

INIT = {
    "uniform_": lambda L: L.nn.init.uniform_(L.empty(5, 7), -0.3, 0.8),
    "normal_small": lambda L: L.nn.init.normal_(L.empty(3, 4), 0.5, 2.0),
    "normal_large": lambda L: L.nn.init.normal_(L.empty(9, 7), -1.0, 0.1),
    "normal_f64": lambda L: L.nn.init.normal_(L.empty(40, dtype=L.float64)),
    "constant_": lambda L: L.nn.init.constant_(L.empty(2, 3), 0.7),
    "ones_zeros": lambda L: [L.nn.init.ones_(L.empty(3)), L.nn.init.zeros_(L.empty(2, 2))],
    "eye_": lambda L: L.nn.init.eye_(L.empty(3, 5)),
    "dirac_": lambda L: L.nn.init.dirac_(L.empty(4, 2, 3)),
    "dirac_groups": lambda L: L.nn.init.dirac_(L.empty(6, 2, 3, 3), groups=2),
    "dirac_3d": lambda L: L.nn.init.dirac_(L.empty(2, 2, 3, 3, 3)),
    "xavier_uniform_": lambda L: L.nn.init.xavier_uniform_(L.empty(6, 4, 3), gain=2.0),
    "xavier_normal_": lambda L: L.nn.init.xavier_normal_(L.empty(20, 5)),
    "kaiming_uniform_": lambda L: L.nn.init.kaiming_uniform_(L.empty(8, 3, 3, 3)),
    "kaiming_uniform_fan_out_relu": lambda L: L.nn.init.kaiming_uniform_(
        L.empty(8, 5), mode="fan_out", nonlinearity="relu"),
    "kaiming_normal_": lambda L: L.nn.init.kaiming_normal_(L.empty(7, 9), a=0.2),
    "kaiming_normal_fan_out": lambda L: L.nn.init.kaiming_normal_(L.empty(4, 6, 2),
                                                                 mode="fan_out"),
    "trunc_normal_default": lambda L: L.nn.init.trunc_normal_(L.empty(30, 20)),
    "trunc_normal_small": lambda L: L.nn.init.trunc_normal_(L.empty(5, 2), 0.2, 0.5, -0.1, 0.4),
    "trunc_normal_narrow": lambda L: L.nn.init.trunc_normal_(L.empty(40, 10), 0.0, 1.0, 1.5,
                                                             2.5),
    "trunc_normal_far": lambda L: L.nn.init.trunc_normal_(L.empty(7), 0.0, 1.0, 3.0, 5.0),
    "sparse_": lambda L: L.nn.init.sparse_(L.empty(10, 4), 0.3),
    "generator": lambda L: [L.nn.init.uniform_(L.empty(4), generator=L.Generator().manual_seed(5)),
                            L.nn.init.normal_(L.empty(20),
                                              generator=L.Generator().manual_seed(6)),
                            L.nn.init.kaiming_uniform_(
                                L.empty(3, 3), generator=L.Generator().manual_seed(7))],
}


@pytest.mark.parametrize("name", list(INIT))
def test_init_function_matches_torch(name):
    _same(INIT[name])


@pytest.mark.parametrize("shape,gain", [((3, 5), 1.0), ((6, 2), 2.0), ((4, 2, 3), 0.5)])
def test_orthogonal_(shape, gain):
    # QR by LAPACK in both libraries: equal up to rounding
    _same(lambda L: L.nn.init.orthogonal_(L.empty(*shape), gain), exact=False)
    t = torchish.nn.init.orthogonal_(torchish.empty(*shape), gain).reshape(shape[0], -1)
    m = _np(t)
    small = m @ m.T if shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(small, gain ** 2 * np.eye(small.shape[0]), atol=1e-5)


def test_init_under_grad_and_returns_same_tensor():
    p = torchish.nn.Parameter(torchish.empty(3, 3))
    assert torchish.nn.init.normal_(p) is p
    assert torchish.nn.init.xavier_uniform_(p) is p
    assert p.requires_grad and p.grad_fn is None


def test_calculate_gain():
    for nl in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d", "sigmoid", "tanh", "relu", "selu", "leaky_relu"):
        assert torchish.nn.init.calculate_gain(nl) == torch.nn.init.calculate_gain(nl)
    for param in (0.2, 1, None):
        assert torchish.nn.init.calculate_gain("leaky_relu", param) == \
            torch.nn.init.calculate_gain("leaky_relu", param)
    for args in (("leaky_relu", True), ("leaky_relu", "x"), ("softmax",)):
        with pytest.raises(ValueError) as ref:
            torch.nn.init.calculate_gain(*args)
        with pytest.raises(ValueError) as got:
            torchish.nn.init.calculate_gain(*args)
        assert str(got.value) == str(ref.value)


def test_fan_in_fan_out_and_errors():
    for shape in ((3, 4), (5, 2, 3), (6, 3, 2, 2)):
        assert torchish.nn.init._calculate_fan_in_and_fan_out(torchish.empty(*shape)) == \
            torch.nn.init._calculate_fan_in_and_fan_out(torch.empty(*shape))
    cases = [lambda L: L.nn.init._calculate_fan_in_and_fan_out(L.empty(3)),
             lambda L: L.nn.init.kaiming_uniform_(L.empty(3, 3), mode="fan_avg"),
             lambda L: L.nn.init.eye_(L.empty(3)),
             lambda L: L.nn.init.dirac_(L.empty(3, 3)),
             lambda L: L.nn.init.dirac_(L.empty(3, 3, 3), groups=2),
             lambda L: L.nn.init.orthogonal_(L.empty(3)),
             lambda L: L.nn.init.sparse_(L.empty(3), 0.1)]
    for fn in cases:
        with pytest.raises(ValueError) as ref:
            fn(torch)
        with pytest.raises(ValueError) as got:
            fn(torchish)
        assert str(got.value) == str(ref.value)


def test_zero_element_warning_and_deprecated_aliases():
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        torchish.nn.init.kaiming_uniform_(torchish.empty(0, 3))
    with pytest.warns(FutureWarning, match=r"`nn.init.uniform` is now deprecated in favor of "
                                           r"`nn.init.uniform_`"):
        torchish.nn.init.uniform(torchish.empty(2))

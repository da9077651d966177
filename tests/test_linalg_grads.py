"""Linear-algebra gradients where JAX's rule is not PyTorch's, against real PyTorch: the full
SVD of a non-square matrix (`linalg.svd(full_matrices=True)`, the default) and `det` at an
exactly singular matrix (and `tensordot`'s dim errors, which name the dims as PyTorch
builds them). Singular vectors are defined up to sign (phase), so the SVD losses
read them through `abs`, which PyTorch's and torchish's gradients then agree on."""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")


def _grad(T, a, dtype, legacy=False):
    A = T.tensor(a, dtype=dtype, requires_grad=True)
    k = min(a.shape[-2:])
    if legacy:
        U, S, V = T.svd(A, some=False)
        Vh = V.mT
    else:
        U, S, Vh = T.linalg.svd(A)
    loss = ((U[..., :k].abs() * T.arange(k)).sum() + (Vh[..., :k, :].abs() ** 3).sum()
            + (S ** 2).sum() + U[..., k:].abs().sum() * 0 + Vh[..., k:, :].abs().sum() * 0)
    loss.backward()
    return np.asarray(U.abs().tolist()), np.asarray(A.grad.tolist())


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("complex_", [False, True])
@pytest.mark.parametrize("shape", [(4, 3), (3, 5), (2, 4, 3), (5, 2)])
def test_full_svd_gradient_matches_torch(shape, complex_, legacy):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape)
    if complex_:
        a = a + 1j * rng.standard_normal(shape)
    name = "complex128" if complex_ else "float64"
    (u_ours, ours), (u_theirs, theirs) = (_grad(T, a, getattr(T, name), legacy)
                                          for T in (torchish, torch))
    np.testing.assert_allclose(u_ours, u_theirs, atol=1e-12)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
@pytest.mark.parametrize("a", [[[1., 2.], [2., 4.]], [[1., 0.], [0., 0.]], [[0., 0.], [0., 0.]],
                               [[1., 2.], [3., 4.]], [[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]],
                               [[[1., 2.], [2., 4.]], [[1., 2.], [3., 5.]]]])
def test_det_gradient_matches_torch(a, dtype):
    grads = []
    for T in (torchish, torch):
        A = T.tensor(a, dtype=getattr(T, dtype), requires_grad=True)
        d = T.linalg.det(A)
        (T.view_as_real(d) if d.is_complex() else d).sum().backward()
        grads.append(np.asarray(A.grad.tolist()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dims", [2, 0, ([-1, 0], [0, 1]), ([2, -2], [0, 1]), ([1], [-3]),
                                  ([5], [0]), ([0], [-4]), ([2, 1], [1, 2])])
def test_tensordot_dim_errors_match_torch(dims):
    results = []
    for T in (torchish, torch):
        try:
            results.append(tuple(T.tensordot(T.ones(2, 4, 4), T.ones(2, 4, 4), dims=dims).shape))
        except (RuntimeError, IndexError) as e:
            results.append((type(e), str(e)))
    assert results[0] == results[1]

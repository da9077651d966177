"""Transforms given a length (`n=`, `s=`) cut or pad their input on the tape first, as
PyTorch's do: SliceBackward0 / ConstantPadNdBackward0 nodes before the transform's node, a
real input of a complex n-D transform made complex first (ToCopyBackward0). Node chains and
gradients against real PyTorch. (hfft/ihfft keep their conjugation inside their one node:
PyTorch's ConjBackward0 between is not reproduced.)"""
import numpy as np
import pytest

import torchish

torch = pytest.importorskip("torch")

from differential import first_edge_chain  # noqa: E402

CASES = {
    "rfft_pad": lambda L, x: L.fft.rfft(x, n=8),
    "rfft_cut": lambda L, x: L.fft.rfft(x, n=4),
    "fft_real_pad": lambda L, x: L.fft.fft(x, n=8),
    "fft_cut": lambda L, z: L.fft.fft(z, n=4),
    "ifft_pad": lambda L, z: L.fft.ifft(z, n=9),
    "irfft_pad": lambda L, z: L.fft.irfft(z, n=12),
    "irfft_cut": lambda L, z: L.fft.irfft(z, n=5),
    "fft2_real_pad": lambda L, x: L.fft.fft2(x.reshape(2, 3), s=(3, 4)),
    "fftn_cut_and_pad": lambda L, z: L.fft.fftn(z.reshape(2, 3), s=(1, 5)),
    "rfftn_cut": lambda L, x: L.fft.rfftn(x.reshape(2, 3), s=(2, 2)),
    "irfftn_pad": lambda L, z: L.fft.irfftn(z.reshape(2, 3), s=(3, 8)),
    "ifft2_real": lambda L, x: L.fft.ifft2(x.reshape(2, 3)),
    "fft_unchanged": lambda L, z: L.fft.fft(z, n=6),
}


def _run(lib, case):
    lib.manual_seed(0)
    x = lib.randn(6, requires_grad=True)
    z = lib.randn(6, dtype=lib.complex64, requires_grad=True)
    fn = CASES[case]
    leaf = x if fn.__code__.co_varnames[1] == "x" else z
    y = fn(lib, leaf)
    grad, = lib.autograd.grad(y.abs().sum(), leaf)
    return first_edge_chain(y.grad_fn), y.detach().resolve_conj().numpy(), grad.numpy()


@pytest.mark.parametrize("case", list(CASES))
def test_resized_transform_graph_and_gradient(case):
    ours, theirs = _run(torchish, case), _run(torch, case)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("call", [
    lambda L, x: L.fft.fft(x, n=0), lambda L, x: L.fft.rfft(x, n=-2),
    lambda L, x: L.fft.fft(x, n=4, dim=3), lambda L, x: L.fft.fftn(x, s=(2, 2)),
    lambda L, x: L.fft.irfft(x, n=0),
])
def test_invalid_lengths_keep_pytorchs_errors(call):
    def error(lib):
        with pytest.raises(Exception) as info:
            call(lib, lib.ones(6))
        return type(info.value), str(info.value)
    ours, theirs = error(torchish), error(torch)
    assert ours[0].__name__ == theirs[0].__name__ and ours[1] == theirs[1]

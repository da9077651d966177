"""nn.AdaptiveLogSoftmaxWithLoss against PyTorch: layout and repr, forward (batched and
unbatched, rows in the head and in each cluster), gradients, grad_fn names, log_prob, predict
and the constructor's and forward's errors."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torchish  # noqa: E402


def _pair(*args, **kwargs):
    ref = torch.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs)
    got = torchish.nn.AdaptiveLogSoftmaxWithLoss(*args, **kwargs)
    got.load_state_dict({k: torchish.tensor(v.detach().numpy()) for k, v in
                         ref.state_dict().items()})
    return ref, got


def _close(a, b):
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_layout_and_repr():
    ref, got = _pair(8, 20, (4, 10, 15), div_value=2.0, head_bias=True)
    assert repr(got) == repr(ref)
    assert list(got.state_dict()) == list(ref.state_dict())
    assert (got.cutoffs, got.shortlist_size, got.n_clusters, got.head_size) == \
        (ref.cutoffs, ref.shortlist_size, ref.n_clusters, ref.head_size)


@pytest.mark.parametrize("target", [[0, 4, 9, 2, 7], [7, 8, 7, 9, 8], [0, 1, 2, 2, 0]])
def test_forward_backward_log_prob_predict(target):
    ref, got = _pair(4, 10, [3, 6], div_value=2.0)
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32) * 3
    xr = torch.tensor(x, requires_grad=True)
    xg = torchish.tensor(x, requires_grad=True)
    r, g = ref(xr, torch.tensor(target)), got(xg, torchish.tensor(target))
    assert type(g).__name__ == "_ASMoutput"
    _close(r.output, g.output)
    _close(r.loss, g.loss)
    assert g.output.grad_fn.name() == r.output.grad_fn.name()
    assert g.loss.grad_fn.name() == r.loss.grad_fn.name()
    r.loss.backward()
    g.loss.backward()
    _close(xr.grad, xg.grad)
    for (name, p), q in zip(ref.named_parameters(), got.parameters()):
        if p.grad is None:
            assert q.grad is None, name
        else:
            _close(p.grad, q.grad)
    _close(ref.log_prob(xr), got.log_prob(xg))
    assert got.predict(xg.detach()).tolist() == ref.predict(xr.detach()).tolist()


def test_unbatched_forward():
    ref, got = _pair(4, 10, [3, 6])
    x = [0.5, -1.0, 2.0, 0.1]
    r = ref(torch.tensor(x, requires_grad=True), torch.tensor(8))
    g = got(torchish.tensor(x, requires_grad=True), torchish.tensor(8))
    _close(r.output, g.output)
    assert g.output.grad_fn.name() == r.output.grad_fn.name()


def _error(lib, fn):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001 (compared with PyTorch's)
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("fn", [
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, []),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 2]),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [2, 10]),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [2.5]),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])(lib.ones(3, 4), lib.tensor([1, 2])),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])(lib.ones(2, 3, 4),
                                                              lib.tensor([1, 2])),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])(lib.ones(2, 4), lib.tensor(1)),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])(lib.ones(2, 4), lib.tensor([[1]])),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])(lib.ones(2, 4), lib.tensor([1, 12])),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])(lib.ones(2, 4), lib.tensor([-1, 2])),
])
def test_errors(fn):
    want = _error(torch, fn)
    assert want is not None
    assert _error(torchish, fn) == want

"""Lazy modules against real PyTorch: uninitialized parameters and buffers (reprs, state
dicts, `.shape` refused), the first forward reading the missing size and initialising as the
eager module would (same random stream), becoming that module, loading a state dict before the
first forward, and the input errors."""
import io

import pytest

import torchish
from log_compare import assert_logs_match

torch = pytest.importorskip("torch")


def _params(m):
    return [type(m).__name__, repr(m), [(n, tuple(p.shape)) for n, p in m.named_parameters()],
            [(n, tuple(b.shape)) for n, b in m.named_buffers()]]


def _program(T):
    log = []
    T.manual_seed(0)
    m = T.nn.LazyConv2d(4, 3)
    log += [repr(m), repr(m.weight), type(m.weight).__name__, repr(m.state_dict())]
    y = m(T.randn(1, 2, 5, 5))
    log += _params(m) + [y.sum().item(), m.weight.sum().item()]
    b = T.nn.LazyBatchNorm2d()
    log += [repr(b), repr(list(b.state_dict().items()))]
    b(T.randn(2, 3, 4, 4))
    log += _params(b) + [b.running_mean.tolist()]
    inorm = T.nn.LazyInstanceNorm1d(affine=True)
    log.append(repr(inorm))
    inorm(T.randn(2, 3, 5))
    log += _params(inorm)
    t = T.nn.LazyConvTranspose2d(6, 3, stride=2, groups=2)
    t(T.randn(1, 4, 3, 3))
    log += _params(t) + [t.weight.sum().item()]
    c1 = T.nn.LazyConv1d(3, 2, bias=False)
    c1(T.randn(4, 5))                     # unbatched: channels from dim 0
    log += _params(c1)
    for bad in (lambda: T.nn.LazyConv2d(4, 3)(T.ones(2, 5, 5, 5, 5)),
                lambda: T.nn.LazyConv2d(4, 3, groups=2)(T.ones(1, 3, 5, 5)),
                lambda: T.nn.LazyLinear(3).weight.shape):
        try:
            bad()
        except (RuntimeError, ValueError) as exc:
            log.append((type(exc).__name__, str(exc)))
    lin = T.nn.LazyLinear(3)
    log += [repr(lin), repr(lin.weight)]
    lin.load_state_dict(T.nn.Linear(2, 3).state_dict())   # materialized by loading
    log += [type(lin).__name__, tuple(lin.weight.shape)]
    lin(T.ones(1, 2))
    log.append(type(lin).__name__)

    def net():
        return T.nn.Sequential(T.nn.LazyConv2d(6, 5, padding=2), T.nn.LazyBatchNorm2d(),
                               T.nn.ReLU(), T.nn.Flatten(), T.nn.LazyLinear(10))
    model = net()
    out = model(T.randn(2, 1, 8, 8))
    log += [repr(model), out.sum().item()]
    opt = T.optim.SGD(model.parameters(), lr=0.1)
    out.pow(2).mean().backward()
    opt.step()
    log += [model[0].weight.sum().item(), model[1].running_var.sum().item()]
    buf = io.BytesIO()
    T.save(model.state_dict(), buf)
    buf.seek(0)
    copy = net()
    log.append(str(copy.load_state_dict(T.load(buf))))
    copy.eval()
    model.eval()
    log.append((copy(T.ones(1, 1, 8, 8)) - model(T.ones(1, 1, 8, 8))).abs().max().item())
    return log


def test_lazy_modules_match_pytorch():
    assert_logs_match(_program(torchish), _program(torch))

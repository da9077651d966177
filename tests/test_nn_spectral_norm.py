"""The hook-based `nn.utils.spectral_norm` / `remove_spectral_norm` (and `skip_init`,
`stateless.functional_call`) against real PyTorch: the same seeded program, compared value by
value: parameters and buffers, the power iteration's vectors over training steps, state dicts
with their metadata, loading a version-0 checkpoint, and the errors."""
import io
import warnings

import pytest

import torchish
from log_compare import assert_logs_match

torch = pytest.importorskip("torch")


def _program(T):
    log = []
    T.manual_seed(0)
    m = T.nn.utils.spectral_norm(T.nn.Linear(4, 3))
    log += [list(m.state_dict()), [n for n, _ in m.named_parameters()],
            [n for n, _ in m.named_buffers()], m.weight.grad_fn, m.weight_u.tolist(),
            m.weight_v.tolist(), dict(m.state_dict()._metadata)]
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    for _ in range(3):
        loss = m(T.randn(5, 4)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        log += [loss.item(), m.weight_u.tolist(), m.weight.grad_fn.name(),
                m.weight_orig.grad.tolist()]
    m.eval()
    log.append(m(T.ones(2, 4)).tolist())
    buf = io.BytesIO()
    T.save(m.state_dict(), buf)
    buf.seek(0)
    m2 = T.nn.utils.spectral_norm(T.nn.Linear(4, 3))
    log.append(str(m2.load_state_dict(T.load(buf))))
    m2.eval()
    log.append(m2(T.ones(2, 4)).tolist())
    T.nn.utils.remove_spectral_norm(m)
    log += [[n for n, _ in m.named_parameters()], m.weight.tolist(), len(m._forward_pre_hooks),
            list(m.state_dict())]
    conv_t = T.nn.utils.spectral_norm(T.nn.ConvTranspose2d(2, 3, 3))
    conv = T.nn.utils.spectral_norm(T.nn.Conv2d(2, 3, 3), n_power_iterations=3, dim=1)
    log += [tuple(conv_t.weight_u.shape), tuple(conv_t.weight_v.shape),
            tuple(conv.weight_u.shape), conv(T.ones(1, 2, 4, 4)).sum().item()]
    for bad in (lambda: T.nn.utils.spectral_norm(conv_t),
                lambda: T.nn.utils.remove_spectral_norm(T.nn.Linear(2, 2)),
                lambda: T.nn.utils.spectral_norm(T.nn.Linear(2, 2), n_power_iterations=0),
                lambda: T.nn.utils.skip_init(int)):
        try:
            bad()
        except (RuntimeError, ValueError) as exc:
            log.append((type(exc).__name__, str(exc)))
    # skip_init draws nothing from the generator
    log += [tuple(T.nn.utils.skip_init(T.nn.Linear, 3, 2).weight.shape), T.rand(2).tolist()]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        out = T.nn.utils.stateless.functional_call(m, {"weight": T.ones(3, 4)}, (T.ones(1, 4),))
    log += [out.tolist(), [w.category.__name__ for w in seen]]
    # a version-0 checkpoint holds the normalized weight instead of weight_v
    old = T.nn.utils.spectral_norm(T.nn.Linear(3, 2))
    old.eval()
    old(T.ones(1, 3))
    sd = old.state_dict()
    sd["weight"] = old.weight.detach().clone()
    del sd["weight_v"]
    sd._metadata[""]["spectral_norm"] = {}
    new = T.nn.utils.spectral_norm(T.nn.Linear(3, 2))
    log.append(str(new.load_state_dict(sd)))
    new.eval()
    log += [new(T.ones(1, 3)).tolist(), old(T.ones(1, 3)).tolist()]
    return log


def test_spectral_norm_program_matches_pytorch():
    assert_logs_match(_program(torchish), _program(torch))

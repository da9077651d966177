"""Module full backward hooks against real PyTorch: what grad_input and grad_output hold for an
output the loss does not use (None) and for an input that does not require grad (zeros), and
which of the hooked tensors require grad."""
import pytest

import torchish

torch = pytest.importorskip("torch")


def _log(T):
    class Two(T.nn.Module):
        def forward(self, a, b, scale=1.0):
            return a * b * scale, a - b

    def listed(grads):
        return [None if g is None else g.tolist() for g in grads]

    log = []
    m = Two()
    m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", listed(go))))
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("full", listed(gi),
                                                                  listed(go))))
    a = T.tensor([1.0, 2.0], requires_grad=True)
    b = T.tensor([3.0, 4.0])
    p, q = m(a, b, scale=2.0)
    log.append((p.requires_grad, q.requires_grad))
    p.sum().backward()            # q unused
    p, q = m(a, b)
    (p.sum() + q.sum()).backward()
    log.append(a.grad.tolist())
    return log


def test_full_backward_hook_unused_output_and_input_without_grad():
    assert _log(torchish) == _log(torch)

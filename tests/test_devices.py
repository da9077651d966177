"""Device placement as PyTorch has it, on a CUDA device: indexed names, the error for operands on
two devices, CPU scalars that join CUDA operands, `.numpy()`, copies across devices, `with
torch.device(...)`, packed sequences' CPU batch sizes, a compiled step on the device.

Runs in a subprocess with TORCHISH_SIMULATED_CUDA=1 (a second host device plays `cuda`), so it
checks placement on machines without a GPU too. The expected values are PyTorch's behaviour.
"""
import json
import os
import subprocess
import sys

import pytest

SCRIPT = r'''
import json
import numpy as np
import torchish as torch

out = {}

def record(name, fn):
    try:
        out[name] = fn()
    except Exception as e:  # noqa: BLE001
        out[name] = [type(e).__name__, str(e)]

c = torch.ones(2, device="cuda")
record("available", lambda: [torch.cuda.is_available(), torch.cuda.device_count()])
record("device", lambda: [str(c.device), repr(c), c.is_cuda, c.get_device()])
record("mixed", lambda: str((c + torch.ones(2)).device))
three = torch.tensor(3.0)
record("cpu_scalar", lambda: [str((c * three).device), str((three * c).device),
                              (three * c).tolist()])
record("numpy", lambda: c.numpy())
record("round_trip", lambda: [str(c.cpu().device), str(c.cpu().cuda().device),
                              c.cpu().numpy().tolist()])

def to_backward():
    x = torch.ones(2, requires_grad=True)
    y = x.to("cuda")
    (y * 2).sum().backward()
    return [y.grad_fn.name(), str(x.grad.device), x.grad.tolist()]
record("to_backward", to_backward)

def copy_across():
    w = torch.zeros(2, device="cuda")
    w.copy_(torch.tensor([1.0, 2.0]))
    return [str(w.device), w.tolist()]
record("copy_across", copy_across)

def context():
    with torch.device("cuda"):
        inside = str(torch.zeros(1).device)
    return [inside, str(torch.zeros(1).device)]
record("context", context)

def packed():
    seqs = torch.ones(3, 2, 4, device="cuda")
    p = torch.nn.utils.rnn.pack_padded_sequence(seqs, [3, 1])
    padded, lengths = torch.nn.utils.rnn.pad_packed_sequence(p)
    return [str(p.data.device), str(p.batch_sizes.device), str(padded.device),
            str(lengths.device)]
record("packed", packed)

def training(compiled):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(),
                                torch.nn.Linear(8, 2)).to("cuda")
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    x = torch.randn(16, 4).cuda()
    y = torch.randint(0, 2, (16,)).cuda()

    def step(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    run = torch.compile(step) if compiled else step
    losses = [run(x, y).item() for _ in range(3)]
    p = next(model.parameters())
    return [losses, str(p.device), str(p.grad.device), str(opt.state[p]["exp_avg"].device)]
def fills_stay():
    # ops that ignore their operands' values must still run where those operands live
    x, y = torch.ones(3), torch.ones(3, device="cuda")
    x.zero_(); y.fill_(2.0)
    bn = torch.nn.BatchNorm1d(2)
    return [sorted(d.id for d in t.jax().devices())
            for t in (x, y, bn.num_batches_tracked)]
record("fills_stay", fills_stay)
record("eager_step", lambda: training(False))
record("compiled_step", lambda: training(True))
print(json.dumps(out))
'''

SAME_DEVICE = ("Expected all tensors to be on the same device, but found at least two "
               "devices, cuda:0 and cpu!")


@pytest.fixture(scope="module")
def results():
    env = dict(os.environ, TORCHISH_SIMULATED_CUDA="1", JAX_PLATFORMS="cpu")
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_cuda_is_there(results):
    assert results["available"] == [True, 1]


def test_a_cuda_tensor_names_its_index(results):
    assert results["device"] == ["cuda:0", "tensor([1., 1.], device='cuda:0')", True, 0]


def test_operands_on_two_devices_raise(results):
    assert results["mixed"] == ["RuntimeError", SAME_DEVICE]


def test_a_cpu_scalar_joins_cuda_operands(results):
    assert results["cpu_scalar"] == ["cuda:0", "cuda:0", [3.0, 3.0]]


def test_numpy_of_a_cuda_tensor_raises(results):
    assert results["numpy"] == ["TypeError", "can't convert cuda:0 device type tensor to numpy. "
                                "Use Tensor.cpu() to copy the tensor to host memory first."]


def test_copies_between_devices(results):
    assert results["round_trip"] == ["cpu", "cuda:0", [1.0, 1.0]]
    assert results["to_backward"] == ["ToCopyBackward0", "cpu", [2.0, 2.0]]
    assert results["copy_across"] == ["cuda:0", [1.0, 2.0]]


def test_in_place_fills_stay_on_their_device(results):
    assert results["fills_stay"] == [[0], [1], [0]]   # host device 0 is cpu, 1 plays cuda:0


def test_device_context_manager(results):
    assert results["context"] == ["cuda:0", "cpu"]


def test_packed_sequence_batch_sizes_stay_on_the_cpu(results):
    assert results["packed"] == ["cuda:0", "cpu", "cuda:0", "cpu"]


def test_training_step_on_the_device_compiled_equals_eager(results):
    eager, compiled = results["eager_step"], results["compiled_step"]
    assert eager[1:] == ["cuda:0", "cuda:0", "cuda:0"]
    assert compiled[1:] == eager[1:]
    assert compiled[0] == pytest.approx(eager[0], rel=1e-5)
    assert eager[0][2] < eager[0][0]

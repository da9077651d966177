"""torch.distributed with one process, and the DDP / DataParallel wrappers: a script written
for DDP prints the same under torchish as under PyTorch."""
import os
import subprocess
import sys

import pytest

import torchish

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "tests", "programs", "single_process_ddp.py")


def _run(args, port):
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    env.pop("WORLD_SIZE", None)
    env.pop("RANK", None)
    out = subprocess.run([sys.executable] + args, capture_output=True, text=True, cwd=ROOT,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_ddp_script_matches_pytorch():
    pytest.importorskip("torch")
    expected = _run([SCRIPT], 29541)
    assert _run(["-m", "torchish", SCRIPT], 29542) == expected


def test_process_group_of_one():
    dist = torchish.distributed
    with pytest.raises(ValueError, match="Default process group has not been initialized"):
        dist.get_world_size()
    dist.init_process_group("gloo", world_size=1, rank=0)
    try:
        assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "gloo")
        with pytest.raises(ValueError, match="twice"):
            dist.init_process_group("gloo")
        x = torchish.arange(3.)
        assert dist.all_reduce(x) is None and x.tolist() == [0., 1., 2.]
        out = [torchish.zeros(3)]
        dist.all_gather(out, x)
        assert out[0].tolist() == [0., 1., 2.]
        model = torchish.nn.parallel.DistributedDataParallel(torchish.nn.Linear(2, 2))
        assert list(model.state_dict()) == ["module.weight", "module.bias"]
    finally:
        dist.destroy_process_group()
    assert not dist.is_initialized()
    with pytest.raises(NotImplementedError, match="single process"):
        dist.init_process_group("gloo", world_size=2, rank=0)

"""Which submodules are attributes right after `import torch`, without importing them: the same
in torchish as in PyTorch (PyTorch's `torch.optim` deletes its optimizers' module names)."""
import json
import subprocess
import sys

import pytest

pytest.importorskip("torch")

NAMES = {
    "optim": ["adam", "adamw", "sgd", "optimizer", "lbfgs", "rmsprop", "lr_scheduler",
              "swa_utils", "Adam"],
    "nn": ["attention", "common_types", "functional", "init", "utils", "parallel", "modules",
           "parameter"],
    "nn.utils": ["parametrize", "parametrizations", "stateless", "prune", "rnn", "fusion"],
    "autograd": ["forward_ad", "functional", "graph", "function", "grad_mode", "gradcheck"],
}

_SCRIPT = """
import importlib, json, sys
lib = importlib.import_module(sys.argv[1])
found = {}
for pkg, names in json.loads(sys.argv[2]).items():
    obj = lib
    for part in pkg.split("."):
        obj = getattr(obj, part)
    for name in names:
        try:
            found[pkg + "." + name] = type(getattr(obj, name)).__name__
        except AttributeError as exc:
            found[pkg + "." + name] = "AttributeError: " + str(exc).replace(sys.argv[1], "torch")
print(json.dumps(found))
"""


def test_submodule_attributes_after_import():
    got = [json.loads(subprocess.run([sys.executable, "-c", _SCRIPT, lib, json.dumps(NAMES)],
                                     capture_output=True, text=True, check=True,
                                     timeout=300).stdout)
           for lib in ("torch", "torchish")]
    assert got[0]["optim.adam"].startswith("AttributeError")
    assert got[1] == got[0]


def test_backends_torchish_never_has():
    """torch.mps / torch.xpu report no device and their seeding leaves the CPU stream alone;
    torch.__config__ describes the build."""
    import torchish
    real = pytest.importorskip("torch")

    def facts(T):
        T.manual_seed(0)
        T.mps.manual_seed(3)
        T.xpu.manual_seed_all(3)
        return (T.mps.is_available(), T.mps.device_count(), T.xpu.is_available(),
                T.xpu.device_count(), T.rand(2).tolist(), type(T.__config__.show()),
                type(T.__config__.parallel_info()))
    assert facts(torchish) == facts(real)

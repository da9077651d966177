"""A PyTorch name torchish lacks raises NotImplementedError naming it (also an AttributeError,
so feature detection with hasattr/getattr keeps working); a name PyTorch lacks too raises
AttributeError in both."""
import importlib
import re
import types

import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402
from torchish._torch_names import NAMES  # noqa: E402
from torchish._unsupported import UnsupportedError  # noqa: E402


def test_missing_optimizer_names_the_api():
    name = "swap_in_optimizer_params_and_state"
    assert hasattr(torch.optim, name)
    with pytest.raises(NotImplementedError,
                       match=rf"^torch\.optim\.{name} is not supported by torchish yet$"):
        getattr(torchish.optim, name)
    assert not hasattr(torchish.optim, name)
    assert getattr(torchish.optim, name, None) is None


def test_name_pytorch_lacks_is_pytorchs_attribute_error():
    for lib in (torch, torchish):
        with pytest.raises(AttributeError) as info:
            lib.optim.NoSuchOptimizer
        assert type(info.value) is AttributeError
        assert str(info.value) == "module 'torch.optim' has no attribute 'NoSuchOptimizer'"
        assert not hasattr(lib.optim, "NoSuchOptimizer")


_SERVED = sorted(NAMES)


def _modules(name):
    return (importlib.import_module(name),
            importlib.import_module("torchish" + name[len("torch"):]))


@pytest.mark.parametrize("name", _SERVED)
def test_unknown_name_matches_pytorch_in_every_served_module(name):
    real, ours = _modules(name)
    for attr in ("NoSuchThing", "no_such_function", "_no_such_private"):
        with pytest.raises(AttributeError) as expected:
            getattr(real, attr)
        with pytest.raises(AttributeError) as got:
            getattr(ours, attr)
        assert (type(got.value), str(got.value)) == (type(expected.value), str(expected.value))
        assert not hasattr(ours, attr)


@pytest.mark.parametrize("name", _SERVED)
def test_pytorch_names_torchish_lacks_say_so(name):
    real, ours = _modules(name)
    public = sorted(n for n in dir(real) if not n.startswith("_") and not hasattr(ours, n))
    for attr in public[:5]:
        with pytest.raises(UnsupportedError, match=rf"^{re.escape(name)}\.{attr} is not "
                                                   r"supported by torchish yet$"):
            getattr(ours, attr)
        assert not hasattr(ours, attr)
        assert getattr(ours, attr, None) is None


def test_name_table_is_pytorchs():
    for name in _SERVED:
        real = importlib.import_module(name)
        # (submodules that other tests imported become attributes too: not in a fresh process)
        assert {n for n in dir(real) if not n.startswith("_")
                and not isinstance(getattr(real, n), types.ModuleType)} <= NAMES[name], name


def test_dunder_lookups_stay_plain_attribute_errors():
    with pytest.raises(AttributeError) as info:
        torchish.optim.__wrapped__
    assert not isinstance(info.value, NotImplementedError)
    assert str(info.value) == "module 'torch.optim' has no attribute '__wrapped__'"

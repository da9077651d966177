"""A PyTorch name torchish lacks raises NotImplementedError naming it (also an AttributeError,
so feature detection with hasattr/getattr keeps working); a name PyTorch lacks too raises
AttributeError in both."""
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402
from torchish._unsupported import UnsupportedError  # noqa: E402


def test_missing_optimizer_names_the_api():
    assert hasattr(torch.optim, "SparseAdam")
    with pytest.raises(NotImplementedError,
                       match=r"^torch\.optim\.SparseAdam is not supported by torchish yet$"):
        torchish.optim.SparseAdam
    assert not hasattr(torchish.optim, "SparseAdam")
    assert getattr(torchish.optim, "SparseAdam", None) is None


def test_name_pytorch_lacks_is_an_attribute_error_in_both():
    for lib in (torch, torchish):
        with pytest.raises(AttributeError):
            lib.optim.NoSuchOptimizer
    with pytest.raises(UnsupportedError):
        torchish.optim.NoSuchOptimizer


def test_dunder_lookups_stay_plain_attribute_errors():
    with pytest.raises(AttributeError) as info:
        torchish.optim.__wrapped__
    assert not isinstance(info.value, NotImplementedError)

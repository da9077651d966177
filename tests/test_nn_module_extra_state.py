"""`Module.get_extra_state` / `set_extra_state` against PyTorch: the base class's errors and a
module that overrides them, through state_dict and load_state_dict."""
import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402


@pytest.mark.parametrize("method,args", [("get_extra_state", ()), ("set_extra_state", (1,))])
def test_base_extra_state_errors(method, args):
    got = []
    for lib in (torch, torchish):
        with pytest.raises(Exception) as info:
            getattr(lib.nn.Module(), method)(*args)
        got.append((type(info.value).__name__, str(info.value)))
    assert got[0] == got[1]


def test_overridden_extra_state_round_trip():
    got = []
    for lib in (torch, torchish):
        class WithState(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.seen = None

            def get_extra_state(self):
                return {"step": 3}

            def set_extra_state(self, state):
                self.seen = state
        sd = WithState().state_dict()
        other = WithState()
        result = other.load_state_dict(sd)
        got.append((list(sd), sd["_extra_state"], other.seen, tuple(result)))
    assert got[0] == got[1]

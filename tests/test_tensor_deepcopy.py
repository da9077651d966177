"""copy.deepcopy of tensors against real PyTorch: one copy of a storage per deepcopy call, so
views and aliases copied together keep sharing their data (and nothing with the originals)."""
import copy

import pytest

import torchish

torch = pytest.importorskip("torch")


def _shared_after_writes(T, order):
    t = T.arange(6.)
    named = {"base": t, "tail": t[1:].view(1, 5), "even": t[::2], "alias": t.detach()}
    cp = copy.deepcopy([named[k] for k in order])
    cp[-1].add_(1)
    cp[0].mul_(2)
    return ([c.tolist() for c in cp], [c._base is None for c in cp],
            [(c.storage_offset(), c.stride(), c.is_contiguous()) for c in cp], t.tolist())


@pytest.mark.parametrize("order", [("base", "tail", "even"), ("tail", "even", "base"),
                                   ("even", "alias"), ("tail",)])
def test_deepcopy_keeps_views_sharing_storage(order):
    assert _shared_after_writes(torchish, order) == _shared_after_writes(torch, order)


def test_deepcopy_of_a_view_copies_its_whole_storage():
    def facts(T):
        s = copy.deepcopy(T.arange(6.)[2:])
        return s.tolist(), s.storage_offset(), s.untyped_storage().size(), s._base is None
    assert facts(torchish) == facts(torch)


def test_deepcopy_of_parameter_and_view_of_its_data():
    # a Parameter's deepcopy clones its data: a view of that data copied alongside does not
    # share with the new parameter
    def facts(T):
        p = T.nn.Parameter(T.ones(2, 2))
        d = copy.deepcopy({"p": p, "row": p.detach()[0]})
        d["row"].add_(5)
        return type(d["p"]).__name__, d["p"].tolist(), d["row"].tolist(), p.tolist()
    assert facts(torchish) == facts(torch)

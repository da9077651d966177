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


def _copy_versions(T):
    import pickle
    t = T.ones(3)
    t.add_(1)
    p = T.nn.Parameter(T.ones(3))
    leaf = T.ones(3, requires_grad=True)
    b = T.ones(4)
    v = b[1:3]
    v.add_(1)
    m = T.nn.Linear(2, 2)
    bn = T.nn.BatchNorm1d(2)
    bn(T.ones(3, 2))
    copies = [copy.deepcopy(x) for x in (t, p, leaf, v, T.ones(2))]
    copies += list(copy.deepcopy((b, v)))
    cm, cbn = copy.deepcopy(m), copy.deepcopy(bn)
    copies += [cm.weight, cm.bias, cbn.running_mean, cbn.num_batches_tracked]
    copies += [copy.copy(t), pickle.loads(pickle.dumps(t))]
    return [c._version for c in copies]


def test_copies_start_at_pytorch_versions():
    """PyTorch fills a deep copy's (or unpickled tensor's) storage with `set_`: version 1;
    a Parameter's deepcopy clones: version 0."""
    assert _copy_versions(torchish) == _copy_versions(torch)

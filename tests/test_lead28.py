"""torch.utils._pytree's named-tuple / structseq predicates, differential against PyTorch:
return types are structseqs, not named tuples (the predicates take a class or an instance)."""
import collections

import pytest

torch = pytest.importorskip("torch")

import torchish  # noqa: E402

PREDICATES = ["is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance", "is_structseq",
              "is_structseq_class", "is_structseq_instance"]
_Pair = collections.namedtuple("_Pair", "a b")


def _subjects(m):
    r = m.max(m.ones(2, 2), 0)
    return [r, type(r), _Pair(1, 2), _Pair, (1, 2), tuple, m.ones(2)]


@pytest.mark.parametrize("name", PREDICATES)
def test_predicates(name):
    ours = [getattr(torchish.utils._pytree, name)(s) for s in _subjects(torchish)]
    theirs = [getattr(torch.utils._pytree, name)(s) for s in _subjects(torch)]
    assert ours == theirs


def test_return_type_flattens_as_node():
    ours = torchish.utils._pytree.tree_flatten(torchish.max(torchish.ones(2, 2), 0))
    theirs = torch.utils._pytree.tree_flatten(torch.max(torch.ones(2, 2), 0))
    assert len(ours[0]) == len(theirs[0]) == 2
    assert repr(ours[1]) == repr(theirs[1])

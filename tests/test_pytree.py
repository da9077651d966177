"""`torch.utils._pytree` against real PyTorch's: leaf order (dicts in insertion order), None
and tensors as leaves, namedtuple/defaultdict/registered nodes, map/all/any and errors."""
import collections
import importlib

import pytest

import torchish

torch = pytest.importorskip("torch")

NT = collections.namedtuple("NT", "a b")


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


def _program(T):
    p = importlib.import_module(f"{T.__name__}.utils._pytree")
    log = [p.tree_leaves([None, 1, (2, {"b": 3, "a": 4})])]
    leaves, spec = p.tree_flatten({"x": [1, 2], "y": (3,)})
    log += [leaves, spec.num_leaves, spec.num_nodes, p.tree_unflatten([7, 8, 9], spec)]
    log += [p.tree_map(lambda v: v * 10, {"b": 1, "a": [2, 3]}), p.tree_flatten(NT(1, 2))[0],
            p.tree_unflatten([3, 4], p.tree_structure(NT(1, 2))),
            p.tree_unflatten([5], p.tree_structure(collections.defaultdict(list, a=1))),
            p.tree_map_only(int, lambda v: -v, [1, 2.0, "a"]),
            p.tree_map_only(T.Tensor, lambda t: (t * 2).tolist(), {"w": T.ones(2), "n": 3}),
            p.tree_all(lambda v: v > 0, [1, 2]), p.tree_any(lambda v: v > 1, (1, 2)),
            p.tree_map(lambda a, b: a + b, [1, (2,)], [10, (20,)]),
            p.tree_structure(5).is_leaf(), p.tree_structure([1]) == p.tree_structure([2])]
    if Pair not in p.SUPPORTED_NODES:
        p.register_pytree_node(Pair, lambda x: ([x.a, x.b], None), lambda c, ctx: Pair(*c))
    log += [p.tree_leaves([Pair(1, [2])]), p.tree_unflatten([5, 6], p.tree_structure(Pair(1, 2))).a]
    for bad in (lambda: p.tree_unflatten([1], p.tree_structure([1, 2])),
                lambda: p.register_pytree_node(Pair, None, None)):
        try:
            bad()
        except ValueError as exc:
            log.append(type(exc).__name__)
    return log


def test_pytree_matches_pytorch():
    assert _program(torchish) == _program(torch)


def test_treespec_repr_matches_pytorch():
    # multi-child specs print one child per line, indented by nesting depth
    trees = [(1,), (1, 2), {"b": [1, (2, 3)], "a": 4}, NT(1, [2, 3]), [[1, [2]], 3], 5, []]
    for tree in trees:
        got = repr(torchish.utils._pytree.tree_structure(tree))
        assert got == repr(torch.utils._pytree.tree_structure(tree))

"""`torch.utils._pytree`: nested containers (tuple, list, dict, namedtuple, OrderedDict,
defaultdict, deque, and registered classes) flattened to leaves and a TreeSpec, in PyTorch's
order (dicts in insertion order, unlike `jax.tree_util`, which sorts keys). Everything that is
not a registered container is a leaf, None and Tensors included."""
import collections
import dataclasses

__all__ = ["register_pytree_node", "tree_flatten", "tree_unflatten", "tree_leaves",
           "tree_structure", "tree_iter", "tree_map", "tree_map_", "tree_map_only",
           "tree_map_only_", "tree_all", "tree_any", "tree_all_only", "tree_any_only",
           "tree_is_leaf", "TreeSpec", "LeafSpec", "SUPPORTED_NODES", "is_namedtuple",
           "is_namedtuple_class", "is_namedtuple_instance", "is_structseq",
           "is_structseq_class", "is_structseq_instance"]


@dataclasses.dataclass(frozen=True)
class NodeDef:
    type: type
    flatten_fn: object
    unflatten_fn: object


SUPPORTED_NODES = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """`flatten_fn(x) -> (children, context)`, `unflatten_fn(children, context) -> x`."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn)


_register_pytree_node = register_pytree_node


def is_structseq_class(cls):
    """A structseq class (`torch.return_types.max`, `os.stat_result`)."""
    return isinstance(cls, type) and issubclass(cls, tuple) and all(
        isinstance(getattr(cls, n, None), int)
        for n in ("n_fields", "n_sequence_fields", "n_unnamed_fields"))


def is_structseq_instance(obj):
    return is_structseq_class(type(obj))


def is_structseq(obj):
    """Whether `obj` (a class or an instance) is a structseq."""
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_class(cls):
    # (torchish's return types keep a class-level `_fields` for its own code: structseqs)
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields") \
        and not is_structseq_class(cls)


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj):
    """Whether `obj` (a class or an instance) is a named tuple."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


register_pytree_node(tuple, lambda t: (list(t), None), lambda c, _: tuple(c))
register_pytree_node(list, lambda t: (list(t), None), lambda c, _: list(c))
register_pytree_node(dict, _dict_flatten, lambda c, keys: dict(zip(keys, c)))
register_pytree_node(collections.OrderedDict, _dict_flatten,
                     lambda c, keys: collections.OrderedDict(zip(keys, c)))
register_pytree_node(collections.defaultdict,
                     lambda d: (list(d.values()), [d.default_factory, list(d.keys())]),
                     lambda c, ctx: collections.defaultdict(ctx[0], zip(ctx[1], c)))
register_pytree_node(collections.deque, lambda d: (list(d), d.maxlen),
                     lambda c, maxlen: collections.deque(c, maxlen=maxlen))
_NAMEDTUPLE = NodeDef(collections.namedtuple, lambda t: (list(t), type(t)),
                      lambda c, cls: cls(*c))


def _node_of(tree):
    node = SUPPORTED_NODES.get(type(tree))
    if node is None and is_namedtuple_instance(tree):
        return _NAMEDTUPLE
    return node


def tree_is_leaf(tree, is_leaf=None):
    return (is_leaf is not None and is_leaf(tree)) or _node_of(tree) is None


class TreeSpec:
    def __init__(self, type, context, children_specs):  # noqa: A002 - PyTorch's name
        self.type = type
        self.context = context
        self.children_specs = list(children_specs)
        self.num_children = len(self.children_specs)
        self.num_leaves = sum(c.num_leaves for c in self.children_specs)
        self.num_nodes = 1 + sum(c.num_nodes for c in self.children_specs)

    def is_leaf(self):
        return self.type is None

    def children(self):
        return list(self.children_specs)

    def child(self, index):
        return self.children_specs[index]

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)

    def __eq__(self, other):
        return isinstance(other, TreeSpec) and (self.type, self.context, self.children_specs) \
            == (other.type, other.context, other.children_specs)

    def __hash__(self):
        return hash((self.type, repr(self.context), tuple(self.children_specs)))

    def __repr__(self, indent=0):
        if self.is_leaf():
            return "*"
        name = "namedtuple" if self.type is collections.namedtuple else self.type.__name__
        # PyTorch's layout: the second and later children each on a new line, indented two
        # more spaces per nesting level.
        indent += 2
        children = [c.__repr__(indent) for c in self.children_specs]
        inner = (",\n" + " " * indent).join(children)
        return f"TreeSpec({name}, {self.context}, [{inner}])"


class LeafSpec(TreeSpec):
    def __init__(self):
        super().__init__(None, None, [])
        self.num_leaves = 1
        self.num_nodes = 1


def treespec_leaf():
    return LeafSpec()


def _flatten(tree, is_leaf, leaves):
    if tree_is_leaf(tree, is_leaf):
        leaves.append(tree)
        return LeafSpec()
    node = _node_of(tree)
    children, context = node.flatten_fn(tree)
    return TreeSpec(node.type, context, [_flatten(c, is_leaf, leaves) for c in children])


def tree_flatten(tree, is_leaf=None):
    leaves = []
    spec = _flatten(tree, is_leaf, leaves)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but "
                         f"the spec refers to a pytree that holds {treespec.num_leaves} items "
                         f"({treespec}).")
    it = iter(leaves)

    def build(spec):
        if spec.is_leaf():
            return next(it)
        children = [build(c) for c in spec.children_specs]
        node = _NAMEDTUPLE if spec.type is collections.namedtuple else SUPPORTED_NODES[spec.type]
        return node.unflatten_fn(children, spec.context)
    return build(treespec)


def tree_iter(tree, is_leaf=None):
    if tree_is_leaf(tree, is_leaf):
        yield tree
        return
    for child in _node_of(tree).flatten_fn(tree)[0]:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None):
    return list(tree_iter(tree, is_leaf))


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [tree_flatten(r, is_leaf)[0] for r in rests]
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def tree_map_(func, tree, *rests, is_leaf=None):
    """Calls `func` on every leaf (for its side effects); returns `tree`."""
    leaves = tree_leaves(tree, is_leaf)
    others = [tree_leaves(r, is_leaf) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def _only(types, func):
    def apply(x):
        return func(x) if isinstance(x, types) else x
    return apply


def tree_map_only(type_or_types, func, tree, is_leaf=None):
    return tree_map(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types, func, tree, is_leaf=None):
    return tree_map_(_only(type_or_types, func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))

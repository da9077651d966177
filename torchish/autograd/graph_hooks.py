"""The rest of `torch.autograd.graph`: gradient edges, `increment_version`, and
`register_multi_grad_hook` (a hook over several tensors' gradients in one backward pass)."""
import collections
import threading

from .._hook_handle import RemovableHandle
from .graph import BACKWARD_RUNS, edge_of, queue_callback, will_execute

GradientEdge = collections.namedtuple("GradientEdge", ["node", "output_nr"])


def get_gradient_edge(tensor):
    """The edge `tensor`'s gradient flows into: (its grad_fn or AccumulateGrad, output_nr)."""
    edge = edge_of(tensor)
    if edge is None:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    return GradientEdge(*edge)


def increment_version(tensor):
    """Bump the version counter(s), as an in-place change would."""
    for t in (tensor if isinstance(tensor, (list, tuple)) else [tensor]):
        t._vc[0] += 1


class _MultiHandle(RemovableHandle):
    """One handle over a handle per tensor; PyTorch's lives in `torch.autograd.graph`."""
    __module__ = "torchish.autograd.graph"

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """mode "all": `fn(grads)` once per backward pass that computes any of `tensors`' gradients,
    with None for those it does not compute, called as soon as the last of those the pass
    will compute is ready. mode "any": `fn(grad)` with the first gradient of `tensors`
    computed in a pass."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    state = {"run": None, "grads": None}

    def hook_for(i):
        def hook(grad):
            with lock:
                first = state["run"] != BACKWARD_RUNS[0]
                if first:
                    state["run"] = BACKWARD_RUNS[0]
                    state["grads"] = [None] * len(tensors)
                    state["left"] = sum(1 for t in tensors if t.requires_grad and
                                        will_execute(edge_of(t)[0]))
                if mode == "any":
                    if first:
                        fn(grad)
                    return None
                grads = state["grads"]
                grads[i] = grad
                state["left"] -= 1
                if first and state["left"] < 0:   # (a pass the count does not know)
                    queue_callback(lambda: fn(grads))
                ready = state["left"] == 0
            if ready:
                fn(grads)
            return None
        return hook

    return _MultiHandle([t.register_hook(hook_for(i)) for i, t in enumerate(tensors)
                         if t.requires_grad])

"""`torchish.optim.SparseAdam`: Adam's moments updated only where the (sparse) gradient has
entries, PyTorch 2.13. Each parameter's step is one compiled row update (`_sparse_rows`),
which coalesces the gradient as PyTorch's does."""
import math

from ._sparse_rows import adam_rows, rows_of
from .optimizer import Optimizer, _torch

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Implements the lazy Adam variant for sparse gradients, as `torch.optim.SparseAdam`."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        found = {"sparse": [], "complex": []}
        for index, group in enumerate(self.param_groups):
            for d_index, p in enumerate(group["params"]):
                if p.is_sparse:
                    found["sparse"].append([index, d_index])
                if p.is_complex():
                    found["complex"].append([index, d_index])
        if found["sparse"]:
            raise ValueError(f"Sparse params at indices {found['sparse']}: SparseAdam requires "
                             "dense parameter tensors")
        if found["complex"]:
            raise ValueError(f"Complex params at indices {found['complex']}: SparseAdam does "
                             "not support complex parameters")

    def step(self, closure=None):
        """Perform a single optimization step.

        Args:
            closure (Callable, optional): A closure that reevaluates the model and returns
                the loss.
        """
        t = _torch()
        loss = None
        if closure is not None:
            with t.enable_grad():
                loss = closure()
        with t.no_grad():
            for group in self.param_groups:
                params = [p for p in group["params"] if p.grad is not None]
                for p in params:
                    if not p.grad.is_sparse:
                        raise RuntimeError("SparseAdam does not support dense gradients, please "
                                           "consider Adam instead")
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["exp_avg"] = t.zeros_like(p)
                        state["exp_avg_sq"] = t.zeros_like(p)
                    state["step"] += 1
                for p in params:
                    self._update(group, p, self.state[p])
        return loss

    @staticmethod
    def _update(group, p, state):
        found = rows_of(p.grad)
        if found is None:   # (an empty gradient: PyTorch skips the update)
            return
        beta1, beta2 = group["betas"]
        bias1 = 1 - beta1 ** state["step"]
        bias2 = 1 - beta2 ** state["step"]
        step_size = group["lr"] * math.sqrt(bias2) / bias1
        outs = adam_rows([p._data, state["exp_avg"]._data, state["exp_avg_sq"]._data], *found,
                         beta1, beta2, group["eps"], step_size,
                         maximize=bool(group.get("maximize", False)))
        for t, out in zip((p, state["exp_avg"], state["exp_avg_sq"]), outs):
            t._set_data(out)

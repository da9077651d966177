"""`torchish.optim.AdamW`: Adam with decoupled weight decay (PyTorch 2.13: a thin Adam subclass)."""
from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    """Implements the AdamW algorithm, as `torch.optim.AdamW`."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True

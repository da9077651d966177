"""ExponentialFamily: densities p(x) = h(x) exp(<t(x), theta> - F(theta)). Subclasses give
the natural parameters theta, the log normaliser F and E[log h]; entropy and same-family KL
then follow from F and its gradient (a Bregman divergence), computed with autograd."""
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


def _torch():
    import torchish
    return torchish


class ExponentialFamily(Distribution):
    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        # H = F(theta) - <theta, grad F(theta)> - E[log h]
        torch = _torch()
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        grads = torch.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for p, g in zip(nparams, grads):
            result = result - (p * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result

"""Forward-mode AD refusals (`torch.autograd.forward_ad`): the ops PyTorch 2.13 has no forward
derivative for raise its NotImplementedError when an operand carries a tangent, instead of
the tangent `jax.jvp` of their forward would give."""
from .recording import NOT_IMPLEMENTED, _grad_name, kernel_name

# grad_fn name -> the ATen kernel PyTorch's message names: ops whose derivatives.yaml entry
# has a backward formula but no forward one (probed with PyTorch 2.13's OpInfo samples;
# tests/test_forward_ad_refusals.py checks each against live PyTorch)
NO_FORWARD_FORMULA = {
    "CdistBackward0": "_cdist_forward", "PdistBackward0": "_pdist_forward",
    "EuclideanDistBackward0": "_euclidean_dist",
    "CholeskyBackward0": "cholesky", "OrmqrBackward0": "ormqr",
    "MultiMarginLossBackward0": "multi_margin_loss",
    "MultilabelMarginLossBackward0": "multilabel_margin_loss_forward",
    "GridSampler2DBackward0": "grid_sampler_2d", "GridSampler3DBackward0": "grid_sampler_3d",
    "IndexReduceBackward0": "index_reduce", "EmbeddingBagBackward0": "_embedding_bag",
    "SegmentReduceBackward0": "segment_reduce", "CtcLossBackward0": "_ctc_loss",
}


def forward_ad_refusal(plan, inplace=False):
    """The NotImplementedError PyTorch raises for a tangent through this op call, or None."""
    name = _grad_name(plan.op, plan.kinds, plan.statics)
    if name == NOT_IMPLEMENTED:   # (an overload recorded without any derivative)
        kernel = kernel_name(plan) + ("_" if inplace else "")
        return NotImplementedError(f"Trying to use forward AD with aten::{kernel} that does "
                                   "not support it.")
    kernel = NO_FORWARD_FORMULA.get(name)
    if kernel is None:
        return None
    return NotImplementedError(
        f"Trying to use forward AD with {kernel} that does not support it because it has not "
        "been implemented yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/"
        "pytorch/issues/new?template=feature-request.yml so that we can prioritize its "
        "implementation or submit a PR adding the implementation to derivatives.yaml")

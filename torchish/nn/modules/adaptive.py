"""`AdaptiveLogSoftmaxWithLoss`: a head over the frequent classes plus one cluster token per
tail cluster, each cluster scored by its own low-rank projection (Grave et al., 2016)."""
from collections import namedtuple

from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 \
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        kw = {"device": device, "dtype": dtype}
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            width = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kw),
                                        Linear(hidden, width, bias=False, **kw)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for down, up in self.tail:
            down.reset_parameters()
            up.reset_parameters()

    def forward(self, input_, target_):
        if target_.dim() == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        rows = target.size(0)
        output = input.new_zeros(rows)
        head_index = target.new_empty(rows)
        covered = 0
        for i in range(len(self.cutoffs)):
            low = 0 if i == 0 else self.cutoffs[i - 1]
            in_range = (target >= low) & (target < self.cutoffs[i])
            picked = in_range.nonzero().squeeze()
            if picked.numel() == 0:
                continue
            if i == 0:
                head_index.index_copy_(0, picked, target[in_range])
            else:
                # the head scores the cluster token; the cluster scores the word within it
                head_index.index_fill_(0, picked, self.shortlist_size + i - 1)
                scores = F.log_softmax(self.tail[i - 1](input.index_select(0, picked)), dim=1)
                word = (target[in_range] - low).unsqueeze(1)
                output.index_copy_(0, picked, scores.gather(1, word).squeeze(1))
            covered += picked.numel()
        if covered != rows:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output += head_logprob.gather(1, head_index.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        out = input.new_empty((head_output.size(0), self.n_classes))
        head_logprob = F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head_logprob[:, :self.shortlist_size]
        for i, (start, stop) in enumerate(zip(self.cutoffs, self.cutoffs[1:])):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            out[:, start:stop] = cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1)
        return out

    def log_prob(self, input):
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        outside = output >= self.shortlist_size
        if outside.all():
            return self._full_log_prob(input, head_output).argmax(dim=1)
        if outside.any():
            output[outside] = self._full_log_prob(input[outside],
                                                  head_output[outside]).argmax(dim=1)
        return output

"""The less common nn losses, as a multi-task head trains them: KLDivLoss (log_target),
PoissonNLLLoss, GaussianNLLLoss, HuberLoss, SoftMarginLoss, HingeEmbeddingLoss,
MultiLabelSoftMarginLoss, MultiLabelMarginLoss, MultiMarginLoss, CTCLoss, NLLLoss with weights
and ignore_index, cross entropy with probabilities and label smoothing, BCE pos_weight; each
with its reductions, gradients and grad_fn names."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def show(name, loss, *inputs):
    print(name, loss.grad_fn.name() if loss.grad_fn else None, loss.shape,
          torch.round(loss.detach(), decimals=5) if loss.dim() else f"{loss.item():.6f}")
    grads = torch.autograd.grad(loss.sum(), inputs)
    for g in grads:
        print("  grad", [round(v, 5) for v in g.flatten()[:6].tolist()])


x = torch.randn(4, 5, requires_grad=True)
t = torch.softmax(torch.randn(4, 5), dim=1)
for red in ["batchmean", "sum", "none"]:
    show(f"kl {red}", nn.KLDivLoss(reduction=red)(F.log_softmax(x, 1), t), x)
show("kl log_target", F.kl_div(F.log_softmax(x, 1), t.log(), reduction="batchmean", log_target=True), x)

rate = torch.randn(6, requires_grad=True)
counts = torch.poisson(torch.full((6,), 3.0))
print(counts)
show("poisson log", nn.PoissonNLLLoss()(rate, counts), rate)
show("poisson full", nn.PoissonNLLLoss(full=True, reduction="none")(rate, counts), rate)
show("poisson nolog", nn.PoissonNLLLoss(log_input=False, eps=1e-4)(rate.exp(), counts), rate)

mu = torch.randn(5, 2, requires_grad=True)
var = torch.rand(5, 2, requires_grad=True)
y = torch.randn(5, 2)
show("gauss", nn.GaussianNLLLoss()(mu, y, var), mu, var)
show("gauss full", nn.GaussianNLLLoss(full=True, eps=1e-3, reduction="sum")(mu, y, var), mu, var)
show("gauss shared var", F.gaussian_nll_loss(mu, y, var[:, :1], reduction="none"), mu, var)

p = torch.randn(8, requires_grad=True)
q = torch.randn(8) * 2
for delta in [0.5, 1.0, 2.0]:
    show(f"huber {delta}", nn.HuberLoss(delta=delta)(p, q), p)
show("smooth_l1 beta", F.smooth_l1_loss(p, q, beta=0.3, reduction="none"), p)
sign = torch.tensor([1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, -1.0])
show("soft margin", nn.SoftMarginLoss()(p, sign), p)
show("hinge emb", nn.HingeEmbeddingLoss(margin=0.7, reduction="none")(p, sign), p)

logits = torch.randn(3, 4, requires_grad=True)
multi = torch.tensor([[1, 0, 1, 0], [0, 0, 0, 1], [1, 1, 1, 0]]).float()
show("mlsm", nn.MultiLabelSoftMarginLoss()(logits, multi), logits)
show("mlsm weighted", nn.MultiLabelSoftMarginLoss(weight=torch.tensor([1.0, 2.0, 0.5, 1.0]),
                                                 reduction="none")(logits, multi), logits)
targets = torch.tensor([[2, 0, -1, 1], [3, -1, 0, 0], [0, 1, 2, 3]])
show("mlm", nn.MultiLabelMarginLoss()(logits, targets), logits)
cls = torch.tensor([1, 3, 0])
show("multimargin", nn.MultiMarginLoss()(logits, cls), logits)
show("multimargin p2", nn.MultiMarginLoss(p=2, margin=0.5, weight=torch.tensor([1.0, 0.5, 2.0, 1.0]),
                                          reduction="none")(logits, cls), logits)

w = torch.tensor([1.0, 2.0, 0.5, 1.5])
tgt = torch.tensor([1, -100, 3])
show("nll w ignore", nn.NLLLoss(weight=w)(F.log_softmax(logits, 1), tgt), logits)
show("ce ignore idx", F.cross_entropy(logits, torch.tensor([1, 2, 2]), ignore_index=2), logits)
show("ce smoothing", F.cross_entropy(logits, cls, label_smoothing=0.1, weight=w), logits)
show("ce probs", F.cross_entropy(logits, torch.softmax(torch.randn(3, 4), 1), label_smoothing=0.2), logits)
img = torch.randn(2, 4, 3, 3, requires_grad=True)
seg = torch.randint(0, 4, (2, 3, 3))
show("ce 2d", F.cross_entropy(img, seg, reduction="none"), img)
show("bce pos_weight", nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0, 3.0, 0.5, 2.0]))(logits, multi), logits)
show("bce weight", F.binary_cross_entropy(torch.sigmoid(logits), multi, weight=torch.tensor([2.0, 1.0, 1.0, 0.5])), logits)

T, N, C, S = 12, 2, 5, 4
acts = torch.randn(T, N, C, requires_grad=True)
log_probs = acts.log_softmax(2)
targets = torch.tensor([[1, 2, 2, 3], [4, 1, 0, 0]])
in_len = torch.tensor([12, 10])
tgt_len = torch.tensor([4, 2])
ctc = nn.CTCLoss(blank=0)
show("ctc mean", ctc(log_probs, targets, in_len, tgt_len), acts)
show("ctc none", F.ctc_loss(acts.log_softmax(2), targets, in_len, tgt_len, reduction="none"), acts)
flat_t = torch.tensor([1, 2, 2, 3, 4, 1])
show("ctc flat sum", F.ctc_loss(acts.log_softmax(2), flat_t, in_len, tgt_len, reduction="sum",
                                zero_infinity=True), acts)
short = torch.tensor([3, 10])
show("ctc inf zeroed", F.ctc_loss(acts.log_softmax(2), targets, short, tgt_len, zero_infinity=True,
                                  reduction="none"), acts)

# a tiny multi-task regression head trained on the Gaussian NLL + Huber
torch.manual_seed(1)
net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 3))
X = torch.randn(32, 3)
Y = X @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1 * torch.randn(32, 1)
opt = torch.optim.Adam(net.parameters(), lr=0.02)
gnll = nn.GaussianNLLLoss()
for step in range(30):
    out = net(X)
    mean, var, aux = out[:, :1], F.softplus(out[:, 1:2]) + 1e-4, out[:, 2:]
    loss = gnll(mean, Y, var) + F.huber_loss(aux, Y, delta=0.5)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 9:
        print(f"step {step} loss {loss.item():.5f} var {var.mean().item():.5f}")

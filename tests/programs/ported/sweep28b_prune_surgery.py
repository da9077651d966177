"""Iterative magnitude pruning of a small CNN as a compression script does it: l1_unstructured,
random_structured and ln_structured on conv/linear weights, a second round on the same tensor
(a PruningContainer), global_unstructured with custom importance scores, a custom
BasePruningMethod, custom_from_mask and identity; named_parameters / named_buffers, the
weight_orig / weight_mask entries of a state_dict and its round trip through torch.save into a
fresh pruned model, parameters_to_vector / vector_to_parameters surgery, a few fine-tuning steps
(the mask keeps pruned weights at zero), then prune.remove to make it permanent."""
import io

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parameters_to_vector, prune, vector_to_parameters

torch.manual_seed(0)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(4)
        self.conv2 = nn.Conv2d(4, 6, 3, padding=1, bias=False)
        self.fc = nn.Linear(6 * 2 * 2, 5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.adaptive_avg_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


def sparsity(t):
    return f"{100.0 * float((t == 0).sum()) / t.numel():.2f}%"


def report(model, tag):
    parts = []
    for name, mod in model.named_modules():
        if isinstance(mod, (nn.Conv2d, nn.Linear)):
            parts.append(f"{name}.weight={sparsity(mod.weight)}")
    print(tag, " ".join(parts))


model = SmallCNN()
x = torch.randn(8, 1, 8, 8)
y = torch.randint(0, 5, (8,))
print("params before", sum(p.numel() for p in model.parameters()))
print("is_pruned before", prune.is_pruned(model))

# layer-wise pruning of different kinds
m = prune.l1_unstructured(model.conv1, name="weight", amount=0.25)
print("returns module:", m is model.conv1)
prune.random_structured(model.conv2, name="weight", amount=0.34, dim=0)
prune.ln_structured(model.fc, name="weight", amount=2, n=2, dim=0)
prune.l1_unstructured(model.fc, name="bias", amount=1)
print("is_pruned after", prune.is_pruned(model))
print("conv1 params", [n for n, _ in model.conv1.named_parameters()])
print("conv1 buffers", [n for n, _ in model.conv1.named_buffers()])
print("all buffers", [n for n, _ in model.named_buffers()])
print("weight is param:", isinstance(model.conv1.weight, nn.Parameter),
      "grad_fn", model.conv1.weight.grad_fn.name())
print("mask dtype", model.conv1.weight_mask.dtype, "sum", model.conv1.weight_mask.sum().item())
print("conv2 kept channels", model.conv2.weight_mask.sum(dim=(1, 2, 3)).tolist())
print("fc row norms zeroed", (model.fc.weight.norm(dim=1) == 0).nonzero().flatten().tolist())
print("fc bias mask", model.fc.bias_mask.tolist())
hooks = [type(h).__name__ for h in model.fc._forward_pre_hooks.values()]
print("fc hooks", hooks)
report(model, "layerwise")

# a second round on conv1: the new amount applies to what is still unpruned
prune.l1_unstructured(model.conv1, name="weight", amount=0.5)
hook = next(h for h in model.conv1._forward_pre_hooks.values() if h._tensor_name == "weight")
print("container", type(hook).__name__, [type(h).__name__ for h in hook._pruning_methods])
report(model, "round two")
# (a failed call leaves its module without the hook it had: test bad arguments on a spare one)
spare = nn.Linear(2, 2)
try:
    prune.l1_unstructured(spare, name="weight", amount=1.5)
except ValueError as e:
    print("ValueError:", e)
try:
    prune.l1_unstructured(spare, name="weight", amount=-1)
except ValueError as e:
    print("ValueError:", e)
try:
    prune.l1_unstructured(spare, name="nope", amount=0.1)
except AttributeError as e:
    print("AttributeError:", e)
try:
    prune.random_unstructured(nn.Linear(2, 2), name="weight", amount=10)
except ValueError as e:
    print("ValueError:", e)


class EveryOther(prune.BasePruningMethod):
    """Prunes every other entry of the flattened tensor."""
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        mask = default_mask.clone()
        mask.view(-1)[::2] = 0
        return mask


head = nn.Linear(4, 3)
EveryOther.apply(head, "weight")
print("custom mask", head.weight_mask.tolist())
prune.custom_from_mask(head, name="bias", mask=torch.tensor([1.0, 0.0, 1.0]))
print("custom bias", head.bias.tolist() == (head.bias_orig * head.bias_mask).tolist())
prune.identity(nn.Conv1d(2, 2, 1), "weight")

# global pruning across layers with importance scores that favour the classifier
params = [(model.conv1, "weight"), (model.conv2, "weight"), (model.fc, "weight")]
scores = {(model.fc, "weight"): model.fc.weight_orig.abs() * 10.0}
prune.global_unstructured(params, pruning_method=prune.L1Unstructured, amount=0.3,
                          importance_scores=scores)
report(model, "global")
total_zero = sum(int((getattr(mod, n) == 0).sum()) for mod, n in params)
total = sum(getattr(mod, n).numel() for mod, n in params)
print("global zeros", total_zero, "of", total)
try:
    prune.global_unstructured(params, pruning_method=prune.RandomStructured, amount=0.1)
except TypeError as e:
    print("TypeError:", e)

# the state_dict of a pruned model and a round trip into a fresh, equally pruned model
sd = model.state_dict()
print("state keys", list(sd.keys()))
buf = io.BytesIO()
torch.save(sd, buf)
buf.seek(0)
fresh = SmallCNN()
for name in ["conv1", "conv2", "fc"]:
    prune.identity(getattr(fresh, name), "weight")
prune.identity(fresh.fc, "bias")
result = fresh.load_state_dict(torch.load(buf))
print("load result", result)
fresh.eval()
model.eval()
with torch.no_grad():
    print("same eval output:", torch.allclose(fresh(x), model(x)))
try:
    SmallCNN().load_state_dict(sd)
except RuntimeError as e:
    print("RuntimeError:", str(e).splitlines()[0])
    print("  ", str(e).splitlines()[1].strip()[:90])

# fine-tune: gradients flow to weight_orig, masked entries get zero gradient
model.train()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(4):
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    g = model.conv1.weight_orig.grad
    masked_grad = (g * (1 - model.conv1.weight_mask)).abs().sum().item()
    opt.step()
    print(f"step {step} loss {loss.item():.5f} masked-grad {masked_grad:.1f} "
          f"conv1 {sparsity(model.conv1.weight)}")
print("fc.weight grad_fn after steps", model.fc.weight.grad_fn.name())

# surgery through a flat vector of all parameters
vec = parameters_to_vector(model.parameters())
print("vector", vec.shape, vec.dtype, "grad_fn", vec.grad_fn.name(),
      f"norm {vec.norm().item():.5f}")
with torch.no_grad():
    vector_to_parameters(vec * 0.5, model.parameters())
print("halved norm", f"{parameters_to_vector(model.parameters()).norm().item():.5f}")
try:
    vector_to_parameters(vec[:-1], model.parameters())
except RuntimeError as e:
    print("RuntimeError:", e)
try:
    vector_to_parameters([vec], model.parameters())
except TypeError as e:
    print("TypeError:", e)

# make the pruning permanent
for name in ["conv1", "conv2", "fc"]:
    prune.remove(getattr(model, name), "weight")
prune.remove(model.fc, "bias")
print("after remove params", [n for n, _ in model.named_parameters()])
print("after remove buffers", [n for n, _ in model.named_buffers()])
print("is_pruned", prune.is_pruned(model), "hooks", len(model.conv1._forward_pre_hooks))
report(model, "final")
try:
    prune.remove(model.conv1, "weight")
except ValueError as e:
    print("ValueError:", e)
with torch.no_grad():
    out = model.eval()(x)
print("final out", out.shape, f"sum {out.sum().item():.5f}", out[0])

"""Transfer learning through an in-memory checkpoint: a model trained on one task is saved with
torch.save to an io.BytesIO (as if wrapped in DataParallel, so its keys carry a "module." prefix),
loaded with weights_only=True, the prefix stripped with consume_prefix_in_state_dict_if_present,
then loaded with strict=False into a changed architecture (missing/unexpected keys, a load
post-hook, the size-mismatch error strict=False still raises). The backbone is frozen with
requires_grad_(False), each head gets its own param group and LambdaLR factor, and later the
backbone is unfrozen through add_param_group; the optimizer state round-trips through BytesIO."""
import io
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present

torch.manual_seed(0)


class Encoder(nn.Module):
    def __init__(self, vocab=20, d=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        self.conv = nn.Conv1d(d, d, 3, padding=1)
        self.norm = nn.LayerNorm(d)

    def forward(self, tokens):
        h = self.emb(tokens).transpose(1, 2)
        h = F.relu(self.conv(h)).transpose(1, 2)
        return self.norm(h).mean(1)


class Source(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.classifier = nn.Linear(8, 5)

    def forward(self, t):
        return self.classifier(self.encoder(t))


class Target(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.sentiment = nn.Linear(8, 3)
        self.score = nn.Sequential(nn.Linear(8, 4), nn.ReLU(), nn.Linear(4, 1))

    def forward(self, t):
        z = self.encoder(t)
        return self.sentiment(z), self.score(z).squeeze(-1)


tokens = torch.randint(1, 20, (16, 7))
tokens[:, 5:] = 0
src = Source()
opt = torch.optim.Adam(src.parameters(), lr=1e-2)
labels = tokens[:, 0] % 5
for _ in range(3):
    loss = F.cross_entropy(src(tokens), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
print(f"source loss {loss.item():.5f}")

# saved as the checkpoint of a DataParallel-wrapped model would be
wrapped = OrderedDict(("module." + k, v) for k, v in src.state_dict().items())
buf = io.BytesIO()
torch.save({"model": wrapped, "epoch": 3, "opt": opt.state_dict()}, buf)
print("bytes written", buf.tell() > 0)
buf.seek(0)
ckpt = torch.load(buf, weights_only=True, map_location="cpu")
state = ckpt["model"]
print(ckpt["epoch"], list(state)[:2], type(state).__name__)
consume_prefix_in_state_dict_if_present(state, "module.")
print(list(state))
print(sorted(ckpt["opt"]["state"])[:3], ckpt["opt"]["param_groups"][0]["lr"],
      ckpt["opt"]["state"][0]["step"])

tgt = Target()
seen = []
h = tgt.register_load_state_dict_post_hook(
    lambda module, keys: seen.append((len(keys.missing_keys), len(keys.unexpected_keys))))
result = tgt.load_state_dict(state, strict=False)
h.remove()
print("missing", result.missing_keys)
print("unexpected", result.unexpected_keys)
print(result, seen)
print("copied", torch.equal(tgt.encoder.conv.weight, src.encoder.conv.weight),
      tgt.encoder.emb.weight[0].abs().sum().item())
try:
    tgt.load_state_dict(state)
except RuntimeError as e:
    print(str(e).splitlines()[0])
bad = dict(state)
bad["sentiment.weight"] = bad.pop("classifier.weight")
try:
    tgt.load_state_dict(bad, strict=False)
except RuntimeError as e:
    lines = str(e).splitlines()
    print(lines[0])
    print(lines[1].strip())

# fine-tune: frozen backbone, one param group per head
tgt.encoder.requires_grad_(False)
trainable = [n for n, p in tgt.named_parameters() if p.requires_grad]
print("trainable", trainable, sum(p.numel() for p in tgt.parameters() if p.requires_grad))
opt = torch.optim.AdamW([
    {"params": tgt.sentiment.parameters(), "lr": 5e-3, "name": "sentiment"},
    {"params": tgt.score.parameters(), "lr": 1e-2, "weight_decay": 0.0, "name": "score"},
], weight_decay=0.05)
sched = torch.optim.lr_scheduler.LambdaLR(opt, [lambda e: 0.5 ** e, lambda e: 1.0 / (1 + e)])
y_cls = tokens[:, 1] % 3
y_reg = tokens.float().mean(1) / 10
for epoch in range(3):
    logits, score = tgt(tokens)
    l_cls = F.cross_entropy(logits, y_cls)
    l_reg = F.smooth_l1_loss(score, y_reg)
    loss = l_cls + l_reg
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    sched.step()
    print(f"epoch {epoch} cls {l_cls.item():.5f} reg {l_reg.item():.5f} lrs "
          f"{[round(g['lr'], 6) for g in opt.param_groups]} enc grad {tgt.encoder.conv.weight.grad}")
print("frozen unchanged", torch.equal(tgt.encoder.conv.weight, src.encoder.conv.weight))

# unfreeze the backbone with a small learning rate
tgt.encoder.requires_grad_(True)
opt.add_param_group({"params": tgt.encoder.parameters(), "lr": 1e-4, "name": "encoder"})
print([(g["name"], g["lr"], g["weight_decay"], len(g["params"])) for g in opt.param_groups])
try:
    opt.add_param_group({"params": tgt.score[0].weight})
except ValueError as e:
    print("ValueError:", e)
logits, score = tgt(tokens)
loss = F.cross_entropy(logits, y_cls) + F.smooth_l1_loss(score, y_reg)
opt.zero_grad()
loss.backward()
opt.step()
print(f"joint loss {loss.item():.5f}", tgt.encoder.conv.weight.grad.shape,
      torch.equal(tgt.encoder.conv.weight, src.encoder.conv.weight))

# the optimizer state round-trips through memory into a fresh optimizer
buf = io.BytesIO()
torch.save(opt.state_dict(), buf)
buf.seek(0)
osd = torch.load(buf)
opt2 = torch.optim.AdamW([
    {"params": tgt.sentiment.parameters()}, {"params": tgt.score.parameters()},
    {"params": tgt.encoder.parameters()}], lr=1.0)
opt2.load_state_dict(osd)
print([(g.get("name"), g["lr"], g["initial_lr"] if "initial_lr" in g else None) for g in opt2.param_groups])
p0 = tgt.sentiment.weight
print(sorted(opt2.state[p0]), opt2.state[p0]["step"], torch.equal(opt2.state[p0]["exp_avg"], opt.state[p0]["exp_avg"]))
print(len(osd["state"]), [g["params"] for g in osd["param_groups"]])

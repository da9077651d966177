"""A Hugging-Face-style training loop written by hand: a tiny pre-norm BERT-ish encoder,
padding attention masks, linear warmup/decay via LambdaLR, AdamW with no weight decay on
bias/LayerNorm, gradient accumulation, clip_grad_norm_, and a state_dict round trip."""
import io

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, D, PAD = 20, 16, 0


class TinyBert(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = nn.Embedding(VOCAB, D, padding_idx=PAD)
        self.position = nn.Parameter(torch.zeros(1, 6, D))
        self.register_buffer("position_ids", torch.arange(6).expand((1, -1)), persistent=False)
        layer = nn.TransformerEncoderLayer(D, 2, 32, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.LayerNorm = nn.LayerNorm(D)
        self.classifier = nn.Linear(D, 2)

    def forward(self, input_ids, attention_mask):
        h = self.embeddings(input_ids) + self.position[:, self.position_ids[0, : input_ids.size(1)]]
        h = self.encoder(h, src_key_padding_mask=attention_mask == 0)
        h = self.LayerNorm(h)
        m = attention_mask.unsqueeze(-1).to(h.dtype)
        pooled = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
        return self.classifier(pooled)


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps):
    def lr_lambda(step):
        if step < num_warmup_steps:
            return float(step) / float(max(1, num_warmup_steps))
        return max(0.0, float(num_training_steps - step) / float(max(1, num_training_steps - num_warmup_steps)))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda)


model = TinyBert()
no_decay = ["bias", "LayerNorm.weight", "norm1.weight", "norm2.weight"]
groups = [
    {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
    {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
]
print([len(g["params"]) for g in groups])
opt = torch.optim.AdamW(groups, lr=1e-2)
sched = get_linear_schedule_with_warmup(opt, 1, 4)
print(sched.get_last_lr())

ids = torch.tensor([[5, 6, 7, 8, 0, 0], [3, 4, 9, 0, 0, 0], [1, 2, 3, 4, 5, 6], [7, 7, 0, 0, 0, 0]])
mask = (ids != PAD).long()
labels = torch.tensor([0, 1, 1, 0])
print(mask.sum(1), mask.dtype, model.position_ids.stride(), "position_ids" in model.state_dict())
mlm_labels = ids.masked_fill(mask == 0, -100)
mlm = F.cross_entropy(torch.zeros(4, 6, VOCAB).transpose(1, 2), mlm_labels, reduction="none")
print(mlm[3], F.cross_entropy(torch.zeros(4, 6, VOCAB).transpose(1, 2), mlm_labels).item())

model.train()
for step in range(3):
    for micro in range(2):
        sl = slice(2 * micro, 2 * micro + 2)
        logits = model(ids[sl], mask[sl])
        loss = F.cross_entropy(logits, labels[sl]) / 2
        loss.backward()
        if step == 0 and micro == 0:
            print(logits.shape, loss.grad_fn.name())
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    opt.step()
    sched.step()
    opt.zero_grad(set_to_none=True)
    print(step, f"{loss.item() * 2:.5f}", f"{norm.item():.5f}", [f"{lr:.5f}" for lr in sched.get_last_lr()])

print(model.embeddings.weight.grad, model.embeddings.weight[PAD].abs().sum().item())
buf = io.BytesIO()
torch.save(model.state_dict(), buf)
buf.seek(0)
state = torch.load(buf, weights_only=True)
print(len(state), list(state)[:4], state["encoder.layers.0.self_attn.in_proj_weight"].shape)
clone = TinyBert()
print(clone.load_state_dict(state))
model.eval()
clone.eval()
with torch.no_grad():
    a, b = model(ids[:2], mask[:2]), clone(ids[:2], mask[:2])
print(torch.equal(a, b), a.argmax(-1), F.softmax(a, -1).round(decimals=4))
print(opt.state_dict()["param_groups"][1]["weight_decay"], opt.param_groups[0]["initial_lr"])

"""A Hugging-Face-style GPT-2 port trained the way transformers' examples do: Conv1D layers
(addmm with a transposed weight layout), gelu_new, causal masking with torch.where and
finfo(dtype).min, an additive padding mask from attention_mask, labels padded with -100 and
shifted inside the model, gradient checkpointing through torch.utils.checkpoint
(use_reentrant=False) checked against the plain forward, gradient accumulation, a
get_linear_schedule_with_warmup LambdaLR, a ModelOutput-like OrderedDict, left-padded batched
greedy generation with position_ids from cumsum, and a sequence-classification head that
pools the last non-pad token."""
import math
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.utils.checkpoint
from torch.nn import CrossEntropyLoss

torch.manual_seed(42)
PAD, BOS, EOS = 0, 1, 2
VOCAB, N_POS, N_EMBD, N_HEAD, N_LAYER = 24, 16, 16, 2, 2


class Conv1D(nn.Module):
    """Linear layer with the weight stored transposed, as GPT-2's checkpoints have it."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def __repr__(self) -> str:
        return "Conv1D(nf={nf}, nx={nx})".format(**self.__dict__, nx=self.weight.shape[0])

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class NewGELUActivation(nn.Module):
    def forward(self, input):
        return 0.5 * input * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (input + 0.044715 * torch.pow(input, 3.0))))


class ModelOutput(OrderedDict):
    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name)

    def to_tuple(self):
        return tuple(self[k] for k in self.keys())


class GPT2Attention(nn.Module):
    def __init__(self, layer_idx):
        super().__init__()
        self.register_buffer("bias", torch.tril(torch.ones((N_POS, N_POS), dtype=torch.bool)).view(1, 1, N_POS, N_POS),
                             persistent=False)
        self.register_buffer("masked_bias", torch.tensor(-1e4), persistent=False)
        self.head_dim = N_EMBD // N_HEAD
        self.layer_idx = layer_idx
        self.c_attn = Conv1D(3 * N_EMBD, N_EMBD)
        self.c_proj = Conv1D(N_EMBD, N_EMBD)
        self.attn_dropout = nn.Dropout(0.0)

    def _split_heads(self, tensor):
        new_shape = tensor.size()[:-1] + (N_HEAD, self.head_dim)
        return tensor.view(new_shape).permute(0, 2, 1, 3)

    def _merge_heads(self, tensor):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        return tensor.view(tensor.size()[:-2] + (N_HEAD * self.head_dim,))

    def _attn(self, query, key, value, attention_mask=None):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / torch.full([], value.size(-1) ** 0.5, dtype=attn_weights.dtype,
                                                 device=attn_weights.device)
        attn_weights = attn_weights / float(self.layer_idx + 1)  # scale_attn_by_inverse_layer_idx
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype, device=attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        return torch.matmul(attn_weights, value), attn_weights

    def forward(self, hidden_states, attention_mask=None):
        query, key, value = self.c_attn(hidden_states).split(N_EMBD, dim=2)
        query, key, value = self._split_heads(query), self._split_heads(key), self._split_heads(value)
        attn_output, attn_weights = self._attn(query, key, value, attention_mask)
        return self.c_proj(self._merge_heads(attn_output)), attn_weights


class GPT2Block(nn.Module):
    def __init__(self, layer_idx):
        super().__init__()
        self.ln_1 = nn.LayerNorm(N_EMBD, eps=1e-5)
        self.attn = GPT2Attention(layer_idx)
        self.ln_2 = nn.LayerNorm(N_EMBD, eps=1e-5)
        self.mlp = nn.ModuleDict(dict(c_fc=Conv1D(4 * N_EMBD, N_EMBD), c_proj=Conv1D(N_EMBD, 4 * N_EMBD),
                                      act=NewGELUActivation()))

    def forward(self, hidden_states, attention_mask=None):
        attn_output, attn_weights = self.attn(self.ln_1(hidden_states), attention_mask=attention_mask)
        hidden_states = attn_output + hidden_states
        mlp = self.mlp
        feed_forward = mlp.c_proj(mlp.act(mlp.c_fc(self.ln_2(hidden_states))))
        return hidden_states + feed_forward, attn_weights


class GPT2LMHeadModel(nn.Module):
    _tied_weights_keys = ["lm_head.weight"]

    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, N_EMBD)
        self.wpe = nn.Embedding(N_POS, N_EMBD)
        self.h = nn.ModuleList([GPT2Block(i) for i in range(N_LAYER)])
        self.ln_f = nn.LayerNorm(N_EMBD)
        self.lm_head = nn.Linear(N_EMBD, VOCAB, bias=False)
        self.lm_head.weight = self.wte.weight
        self.gradient_checkpointing = False

    def gradient_checkpointing_enable(self):
        self.gradient_checkpointing = True

    def num_parameters(self, only_trainable=False):
        seen = {id(p): p for p in self.parameters() if p.requires_grad or not only_trainable}
        return sum(p.numel() for p in seen.values())

    def forward(self, input_ids, attention_mask=None, position_ids=None, labels=None, output_attentions=False):
        input_shape = input_ids.size()
        if position_ids is None:
            position_ids = torch.arange(0, input_shape[-1], dtype=torch.long, device=input_ids.device).unsqueeze(0)
        if attention_mask is not None:
            attention_mask = attention_mask.view(input_shape[0], -1)[:, None, None, :]
            attention_mask = attention_mask.to(dtype=self.wte.weight.dtype)
            attention_mask = (1.0 - attention_mask) * torch.finfo(self.wte.weight.dtype).min
        hidden_states = self.wte(input_ids) + self.wpe(position_ids)
        all_attentions = () if output_attentions else None
        for block in self.h:
            if self.gradient_checkpointing and self.training:
                outputs = torch.utils.checkpoint.checkpoint(block.__call__, hidden_states, attention_mask,
                                                            use_reentrant=False)
            else:
                outputs = block(hidden_states, attention_mask=attention_mask)
            hidden_states = outputs[0]
            if output_attentions:
                all_attentions = all_attentions + (outputs[1],)
        lm_logits = self.lm_head(self.ln_f(hidden_states))
        loss = None
        if labels is not None:
            shift_logits = lm_logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss_fct = CrossEntropyLoss()
            loss = loss_fct(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
        out = ModelOutput(loss=loss, logits=lm_logits)
        if output_attentions:
            out["attentions"] = all_attentions
        return out


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, last_epoch=-1):
    def lr_lambda(current_step: int):
        if current_step < num_warmup_steps:
            return float(current_step) / float(max(1, num_warmup_steps))
        return max(0.0, float(num_training_steps - current_step) /
                   float(max(1, num_training_steps - num_warmup_steps)))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda, last_epoch)


def collate(examples, padding_side="right", pad_to_multiple_of=6):
    max_len = max(len(e) for e in examples)
    if pad_to_multiple_of:
        max_len = -(-max_len // pad_to_multiple_of) * pad_to_multiple_of
    input_ids = torch.full((len(examples), max_len), PAD, dtype=torch.long)
    attention_mask = torch.zeros((len(examples), max_len), dtype=torch.long)
    for i, e in enumerate(examples):
        t = torch.tensor(e, dtype=torch.long)
        if padding_side == "right":
            input_ids[i, :len(e)] = t
            attention_mask[i, :len(e)] = 1
        else:
            input_ids[i, max_len - len(e):] = t
            attention_mask[i, max_len - len(e):] = 1
    labels = input_ids.clone()
    labels[attention_mask == 0] = -100
    return {"input_ids": input_ids, "attention_mask": attention_mask, "labels": labels}


# counting sequences: BOS a a+1 a+2 ... EOS, of varying lengths
examples = []
for i in range(16):
    start, length = (i * 5) % 17 + 3, 4 + i % 5
    examples.append([BOS] + [3 + (start + j) % (VOCAB - 3) for j in range(length)] + [EOS])
batch = collate(examples[:3])
print({k: v.shape for k, v in batch.items()})
print(batch["labels"])

model = GPT2LMHeadModel()
model.apply(lambda m: nn.init.normal_(m.weight, std=0.02) if isinstance(m, (nn.Embedding,)) else None)
print(model.h[0].attn.c_attn, model.h[0].mlp)
print(model.num_parameters(), model.num_parameters(only_trainable=True), len(model.state_dict()))
print(list(model.state_dict().keys())[:6])
print("bias" in model.h[0].attn.state_dict(), [n for n, _ in model.h[0].attn.named_buffers()])

# gradient checkpointing gives the same loss and gradients as the plain forward
out = model(**batch)
print(type(out).__name__, list(out.keys()), f"{out.loss.item():.5f}", out.logits.shape, out.loss.grad_fn.name())
out.loss.backward()
plain = [p.grad.clone() for p in model.parameters()]
model.zero_grad()
model.gradient_checkpointing_enable()
model.train()
out_ckpt = model(**batch)
out_ckpt.loss.backward()
print(f"{out_ckpt.loss.item():.5f}", out_ckpt.logits.grad_fn.name(),
      all(torch.allclose(a, p.grad, atol=1e-6) for a, p in zip(plain, model.parameters())))
model.zero_grad(set_to_none=True)
print(model.wte.weight.grad)

no_decay = ["bias", "LayerNorm.weight", "ln_"]
optimizer_grouped_parameters = [
    {"params": [p for n, p in model.named_parameters() if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
    {"params": [p for n, p in model.named_parameters() if any(nd in n for nd in no_decay)], "weight_decay": 0.0},
]
print([len(g["params"]) for g in optimizer_grouped_parameters])
optimizer = torch.optim.AdamW(optimizer_grouped_parameters, lr=5e-3, eps=1e-8)
accum, epochs, bs = 2, 2, 4
num_update_steps = epochs * (len(examples) // bs) // accum
scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=1, num_training_steps=num_update_steps)
print("lr0", scheduler.get_last_lr())
g = torch.Generator().manual_seed(0)
loader = torch.utils.data.DataLoader(examples, batch_size=bs, shuffle=True, collate_fn=collate, generator=g)
global_step = 0
for epoch in range(epochs):
    tr_loss = 0.0
    for step, b in enumerate(loader):
        outputs = model(**b)
        loss = outputs.loss / accum
        loss.backward()
        tr_loss += loss.item()
        if (step + 1) % accum == 0:
            gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            global_step += 1
            print(f"epoch {epoch} step {global_step} loss {tr_loss:.4f} grad_norm {gn.item():.4f} lr {scheduler.get_last_lr()[1]:.6f}")
            tr_loss = 0.0

model.eval()
with torch.no_grad():
    ev = collate(examples[:6])
    out = model(**ev, output_attentions=True)
    preds = out.logits[:, :-1].argmax(-1)
    labels = ev["labels"][:, 1:]
    mask = labels != -100
    acc = (preds[mask] == labels[mask]).float().mean()
    print(f"eval loss {out.loss.item():.4f} acc {acc.item():.4f} ppl {math.exp(out.loss.item()):.3f}")
    print(len(out.attentions), out.attentions[0].shape, out.attentions[1][0, 0, 3, :6])
    print(out.to_tuple()[0].shape, out.to_tuple()[1].dtype)

    # left padding for batched generation: positions come from the attention mask
    prompts = collate([[BOS, 5, 6, 7], [BOS, 10], [BOS, 14, 15]], padding_side="left")
    input_ids, attn = prompts["input_ids"], prompts["attention_mask"]
    print(input_ids)
    for _ in range(2):
        position_ids = attn.long().cumsum(-1) - 1
        position_ids.masked_fill_(attn == 0, 1)
        logits = model(input_ids, attention_mask=attn, position_ids=position_ids).logits
        next_tokens = torch.argmax(logits[:, -1, :], dim=-1)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        attn = torch.cat([attn, attn.new_ones((attn.shape[0], 1))], dim=-1)
    print(input_ids)
    print(position_ids)

    # sequence classification pooling: the last non-pad token of right-padded inputs
    ids = collate(examples[:4])["input_ids"]
    hidden = model.ln_f(model.wte(ids))
    sequence_lengths = torch.eq(ids, PAD).int().argmax(-1) - 1
    sequence_lengths = sequence_lengths % ids.shape[-1]
    print(sequence_lengths, sequence_lengths.dtype)
    pooled = hidden[torch.arange(ids.shape[0], device=hidden.device), sequence_lengths]
    print(pooled.shape, f"{pooled.sum().item():.4f}")

missing = model.load_state_dict({k: v for k, v in model.state_dict().items() if "ln_f" not in k}, strict=False)
print(missing.missing_keys, missing.unexpected_keys)
try:
    model.load_state_dict({"wte.weight": torch.zeros(3, 3)}, strict=False)
except RuntimeError as e:
    print(str(e).splitlines()[0])
    print(str(e).splitlines()[1].strip())

"""Mixed numerics: a small pre-norm transformer block under torch.autocast("cpu", bfloat16)
with F.scaled_dot_product_attention(is_causal=True) and nn.MultiheadAttention with a
key_padding_mask, printing the dtypes of outputs and grads; finfo/iinfo, half and bfloat16
conversions and their printing, and torch.testing.assert_close with its error text."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d=8, heads=2):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.cross = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, x, memory, pad):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(att.transpose(1, 2).reshape(b, t, d))
        c, w = self.cross(x, memory, memory, key_padding_mask=pad)
        x = x + c
        return x + self.ff(self.norm2(x)), att, w


block = Block()
opt = torch.optim.SGD(block.parameters(), lr=0.1)
x, memory = torch.randn(2, 4, 8), torch.randn(2, 3, 8)
pad = torch.tensor([[False, False, True], [False, False, False]])
for step in range(2):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out, att, w = block(x, memory, pad)
        loss = out.float().pow(2).mean()
        print(step, torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
    print(" dtypes", out.dtype, att.dtype, w.dtype, loss.dtype, block.qkv(x).dtype)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(" loss", round(loss.item(), 2), block.qkv.weight.grad.dtype, out.grad_fn.name())
    print(" pad weight", w[0, :, 2].float().tolist())
print(F.scaled_dot_product_attention(q := torch.ones(1, 1, 2, 2), q, q, is_causal=True))
with torch.autocast("cpu", dtype=torch.bfloat16):
    print(torch.mm(x[0], x[0].T).dtype, torch.softmax(x, -1).dtype, (x + 1).dtype,
          F.layer_norm(x, (8,)).dtype, torch.cat([x.bfloat16(), x], 0).dtype)
    with torch.autocast("cpu", enabled=False):
        print("disabled", torch.mm(x[0], x[0].T).dtype)

for t in (torch.float16, torch.bfloat16, torch.float32):
    fi = torch.finfo(t)
    print(t, fi.bits, fi.eps, fi.max, fi.tiny, fi.resolution, fi.dtype)
print(torch.iinfo(torch.int8), torch.iinfo(torch.int32).max, torch.iinfo(torch.uint8).min)
v = torch.tensor([1 / 3, 65504.0, 70000.0, 1e-8, -2.5])
print(v.half(), v.bfloat16(), v.half().float().tolist(), v.bfloat16().tolist())
print(v.half() + torch.tensor(1, dtype=torch.bfloat16), (v.half() * 2).dtype)
print(torch.tensor([1.5, 2.5], dtype=torch.bfloat16).sum(), torch.arange(4, dtype=torch.half) / 3)
try:
    torch.testing.assert_close(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.1, 3.0]))
except AssertionError as e:
    print(str(e))
try:
    torch.testing.assert_close(torch.ones(2).half(), torch.ones(2))
except AssertionError as e:
    print(str(e))
near = torch.tensor([0.1, 0.1001], dtype=torch.bfloat16)
torch.testing.assert_close(near[0], near[1])
print("close", torch.allclose(v.half().float(), v, rtol=1e-3), torch.isinf(v.half()).tolist())

"""NumPy interop in an evaluation script: features prepared in NumPy and shared with torch through
from_numpy / as_tensor / .numpy() (writes visible both ways), numpy dtype mapping, copies made by
torch.tensor, tolist / item for logging, the errors for grad-requiring and negatively strided
arrays, and torch.testing.assert_close failures caught and printed as a regression check would."""
import numpy as np
import torch
import torch.nn as nn

rng = np.random.default_rng(0)
feats = rng.standard_normal((6, 4)).astype(np.float32)
labels = np.array([0, 1, 1, 0, 2, 2])

t = torch.from_numpy(feats)
print(t.dtype, t.shape, t.is_contiguous(), t.stride())
feats[0, 0] = 100.0
print(t[0, 0].item())
t[1].zero_()
print(feats[1].tolist())
lab = torch.as_tensor(labels)
copy = torch.tensor(labels)
labels[0] = 9
print(lab[0].item(), copy[0].item(), lab.dtype)

for np_dtype in [np.float64, np.float16, np.int8, np.int16, np.int32, np.uint8, np.bool_,
                 np.complex64, np.complex128]:
    arr = np.zeros(2, dtype=np_dtype)
    print(np.dtype(np_dtype).name, torch.from_numpy(arr).dtype)
print(torch.zeros(2, dtype=torch.bfloat16).float().numpy().dtype,
      torch.ones(2, dtype=torch.int16).numpy().dtype, torch.tensor([True]).numpy().dtype)

# a scalar array and numpy scalars
print(torch.from_numpy(np.array(3.5)).shape, torch.tensor(np.float32(2.5)).dtype,
      torch.tensor(np.int64(7)).dtype, torch.tensor([np.float64(1.0), 2.0]).dtype)
# views: a transposed array and a slice keep sharing memory
tt = torch.from_numpy(feats.T)
print(tt.shape, tt.stride(), tt.is_contiguous())
feats[2, 3] = -5.0
print(tt[3, 2].item())
sl = torch.from_numpy(feats[::2, 1:3])
print(sl.shape, sl.stride())
try:
    torch.from_numpy(feats[::-1])
except ValueError as e:
    print("ValueError:", e)
print(torch.from_numpy(feats[::-1].copy())[0, 0].item())

# numpy() of a tensor shares memory too
w = torch.arange(6, dtype=torch.float32).reshape(2, 3)
a = w.numpy()
a[0, 1] = -1
w.mul_(2)
print(w.tolist(), a.tolist())
param = nn.Parameter(torch.ones(3))
try:
    param.numpy()
except RuntimeError as e:
    print("RuntimeError:", e)
print(param.detach().numpy().tolist(), (param * 2).detach().numpy().dtype)
arr = np.asarray(w)   # np.asarray goes through numpy(): shared as well
arr[1, 1] = 42
print(w[1].tolist(), np.asarray(w[0], dtype=np.float64).dtype)
try:
    np.asarray(param)
except RuntimeError as e:
    print("RuntimeError:", e)
print(torch.ones(2, dtype=torch.bfloat16).float().numpy())

# an HWC uint8 image handed to torch.tensor keeps NumPy's memory order
img = (rng.random((4, 5, 3)) * 255).astype(np.uint8)
chw = torch.tensor(img.transpose(2, 0, 1))
print(chw.shape, chw.stride(), chw.is_contiguous(), chw.dtype)
print(chw.view(3, -1).stride())
try:
    chw.view(-1)
except RuntimeError as e:
    print("RuntimeError:", e)
print(chw.reshape(3, -1).float().div(255).mean(1), chw.contiguous().view(3, -1).stride())
batch = torch.stack([torch.from_numpy(img).permute(2, 0, 1), chw])
print(batch.shape, batch.stride(), torch.equal(batch[0], batch[1]))
print(type(torch.tensor(2.5).item()), type(torch.tensor(3).item()), type(torch.tensor(True).item()))
print(torch.tensor([[1, 2], [3, 4]]).tolist(), torch.tensor(1.25).tolist(),
      torch.tensor([1.5, 2.5], dtype=torch.float64).tolist())
try:
    torch.ones(3).item()
except RuntimeError as e:
    print("RuntimeError:", e)

# a tiny classifier evaluated with NumPy metrics
torch.manual_seed(0)
clf = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
x = torch.from_numpy(rng.standard_normal((6, 4)).astype(np.float32))
y = torch.from_numpy(np.array([0, 1, 1, 0, 2, 2]))
opt = torch.optim.Adam(clf.parameters(), lr=0.05)
for epoch in range(4):
    logits = clf(x)
    loss = nn.functional.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    pred = logits.argmax(1).numpy()
    acc = float((pred == y.numpy()).mean())
    print(epoch, round(loss.item(), 5), pred.tolist(), acc)
probs = torch.softmax(clf(x), 1).detach().numpy()
print(probs.dtype, probs.shape, np.round(probs.sum(1), 4).tolist())
conf = np.zeros((3, 3), dtype=np.int64)
np.add.at(conf, (y.numpy(), probs.argmax(1)), 1)
print(torch.from_numpy(conf))

# regression checks with torch.testing
expected = torch.tensor([1.0, 2.0, 3.0])
torch.testing.assert_close(expected + 1e-7, expected)
checks = [
    (torch.tensor([1.0, 2.0, 3.5]), expected, {}),
    (torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64), expected, {}),
    (torch.tensor([1.0, 2.0]), expected, {}),
    (torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]), {}),
    (torch.tensor([1.0, float("nan")]), torch.tensor([1.0, float("nan")]), {}),
    (torch.tensor([1.0, 2.1, 3.0]), expected, {"rtol": 0.0, "atol": 0.05}),
    (torch.tensor([1.0, 2.1, 3.0]), expected, {"rtol": 0.0, "atol": 0.05, "msg": "drifted"}),
]
for actual, exp, kw in checks:
    try:
        torch.testing.assert_close(actual, exp, **kw)
        print("close")
    except AssertionError as e:
        print("AssertionError:", e)
torch.testing.assert_close(torch.tensor([1.0, float("nan")]), torch.tensor([1.0, float("nan")]),
                           equal_nan=True)
try:
    torch.testing.assert_close(torch.tensor([1.0, 2.0]), np.array([1.0, 2.0], dtype=np.float32))
except TypeError as e:
    print("TypeError:", e)
try:
    torch.testing.assert_close(torch.tensor([1.0, 2.0]), [1.0, 2.0])
except TypeError as e:
    print("TypeError:", e)
torch.testing.assert_close(torch.tensor([1, 2]), torch.tensor([1.0, 2.0]), check_dtype=False)
print("done")

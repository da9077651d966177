# A variable-length sequence tagging pipeline: a map-style Dataset of token sequences split
# with a seeded random_split, a custom length-bucketing batch sampler, SubsetRandomSampler and
# WeightedRandomSampler (without replacement) over class-imbalanced data, a collate_fn that
# pads with pad_sequence and builds masks, an IterableDataset that shards a stream, packed-
# sequence round trips, and a small convolutional tagger trained on the masked tags.
import torch
import torch.nn as nn
from torch.nn.utils.rnn import (pack_padded_sequence, pack_sequence, pad_packed_sequence,
                                pad_sequence, unpad_sequence)
from torch.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset,
                              IterableDataset, Sampler, SequentialSampler, SubsetRandomSampler,
                              WeightedRandomSampler, random_split)

PAD = 0
g = torch.Generator().manual_seed(11)


class Tagged(Dataset):
    def __init__(self, n, vocab=20, gen=None):
        self.items = []
        for i in range(n):
            length = int(torch.randint(2, 9, (1,), generator=gen))
            tokens = torch.randint(1, vocab, (length,), generator=gen)
            self.items.append((tokens, (tokens % 3 == 0).long(), i % 4 == 0))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        tokens, tags, rare = self.items[i]
        return {"tokens": tokens, "tags": tags, "rare": rare, "idx": i}


class BucketBatchSampler(Sampler):
    """Shuffles, then sorts each window of `window` indices by length so batches pad little."""

    def __init__(self, lengths, batch_size, window, generator):
        self.lengths, self.batch_size, self.window, self.generator = lengths, batch_size, window, generator

    def __iter__(self):
        order = torch.randperm(len(self.lengths), generator=self.generator).tolist()
        for s in range(0, len(order), self.window):
            chunk = sorted(order[s:s + self.window], key=lambda i: -self.lengths[i])
            for b in range(0, len(chunk), self.batch_size):
                yield chunk[b:b + self.batch_size]

    def __len__(self):
        full, rest = divmod(len(self.lengths), self.window)
        per = -(-self.window // self.batch_size)
        return full * per + -(-rest // self.batch_size)


def collate(batch):
    tokens = [b["tokens"] for b in batch]
    lengths = torch.tensor([len(t) for t in tokens])
    padded = pad_sequence(tokens, batch_first=True, padding_value=PAD)
    tags = pad_sequence([b["tags"] for b in batch], batch_first=True, padding_value=-100)
    mask = torch.arange(padded.size(1))[None, :] < lengths[:, None]
    return padded, tags, lengths, mask, [b["idx"] for b in batch]


data = Tagged(30, gen=g)
train, val, test = random_split(data, [0.6, 0.2, 0.2], generator=torch.Generator().manual_seed(4))
print("split sizes", len(train), len(val), len(test), "val idx", val.indices)
lengths = [len(data[i]["tokens"]) for i in train.indices]
print("train lengths", lengths)

bucket = BucketBatchSampler(lengths, batch_size=4, window=8, generator=torch.Generator().manual_seed(2))
print("bucket batches", len(bucket), list(bucket)[:2])
loader = DataLoader(train, batch_sampler=bucket, collate_fn=collate)
for padded, tags, lens, mask, idx in loader:
    print("batch", tuple(padded.shape), padded.dtype, lens.tolist(), "pad frac",
          round(1 - mask.float().mean().item(), 3), idx)

# rare examples oversampled without replacement, and a random subset of the validation split
weights = torch.tensor([4.0 if data[i]["rare"] else 1.0 for i in train.indices])
wrs = WeightedRandomSampler(weights, num_samples=8, replacement=False,
                            generator=torch.Generator().manual_seed(5))
picked = list(wrs)
print("weighted picks", picked, "rare", sum(data[train.indices[i]]["rare"] for i in picked))
subset = SubsetRandomSampler(list(range(0, 18, 2)), generator=torch.Generator().manual_seed(6))
print("subset order", list(subset), len(subset))
print("batched subset", list(BatchSampler(subset, batch_size=4, drop_last=False)))
print("sequential", list(BatchSampler(SequentialSampler(val), 3, drop_last=True)))

# a streaming source split across two simulated workers, chained with a second stream
class Stream(IterableDataset):
    def __init__(self, start, stop, shard=0, shards=1):
        self.start, self.stop, self.shard, self.shards = start, stop, shard, shards

    def __iter__(self):
        for i in range(self.start + self.shard, self.stop, self.shards):
            yield torch.tensor([i, i * i])


chained = ChainDataset([Stream(0, 6, 0, 2), Stream(0, 6, 1, 2), Stream(100, 102)])
print("chained", [x.tolist() for x in chained])
print("stream batches", [tuple(b.shape) for b in DataLoader(Stream(0, 7), batch_size=3)])
concat = ConcatDataset([val, test])
print("concat", len(concat), concat.cumulative_sizes, concat[7]["idx"])

# packing round trip feeding a small GRU tagger, trained a few steps
seqs = [data[i]["tokens"] for i in train.indices[:4]]
packed = pack_sequence(seqs, enforce_sorted=False)
print("packed", packed.data.shape, packed.batch_sizes.tolist(), packed.sorted_indices.tolist())
back = unpad_sequence(pad_sequence(seqs, batch_first=True), torch.tensor([len(s) for s in seqs]),
                      batch_first=True)
print("unpad round trip", all(torch.equal(a, b) for a, b in zip(seqs, back)))
left = pad_sequence(seqs, batch_first=True, padding_side="left")
print("left padded\n", left)


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 8, padding_idx=PAD)
        self.conv = nn.Conv1d(8, 12, kernel_size=3, padding=1)
        self.out = nn.Linear(12, 2)

    def forward(self, padded):
        h = torch.relu(self.conv(self.emb(padded).transpose(1, 2)))
        return self.out(h.transpose(1, 2)), h


def collate_fixed(batch, length=8):
    # one padded length for every batch: the model sees a single shape
    padded, tags, lens, mask, idx = collate(batch)
    extra = length - padded.size(1)
    return (nn.functional.pad(padded, (0, extra), value=PAD),
            nn.functional.pad(tags, (0, extra), value=-100),
            lens, nn.functional.pad(mask, (0, extra), value=False), idx)


torch.manual_seed(0)
model = Tagger()
opt = torch.optim.Adam(model.parameters(), lr=0.02)
loss_fn = nn.CrossEntropyLoss(ignore_index=-100)
fixed = DataLoader(train, batch_size=6, shuffle=True, collate_fn=collate_fixed,
                   generator=torch.Generator().manual_seed(8), drop_last=True)
for epoch in range(2):
    for padded, tags, lens, mask, idx in fixed:
        logits, h = model(padded)
        loss = loss_fn(logits.flatten(0, 1), tags.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
    acc = ((logits.argmax(-1) == tags) & mask).sum() / mask.sum()
    print(f"epoch {epoch} loss {loss.item():.4f} acc {acc.item():.3f} h {tuple(h.shape)}",
          logits.grad_fn.name(), tuple(padded.shape), idx)

# the embedded batch packed for an RNN and unpacked again keeps only the real time steps
with torch.no_grad():
    padded, tags, lens, mask, idx = collate_fixed([train[i] for i in range(6)])
    packed = pack_padded_sequence(model.emb(padded), lens, batch_first=True, enforce_sorted=False)
    out, out_lens = pad_packed_sequence(packed, batch_first=True, total_length=8)
    print("packed eval", tuple(packed.data.shape), tuple(out.shape), out_lens.tolist(),
          out[0, lens[0]:].abs().sum().item(), packed.batch_sizes.tolist())

"""Kipf & Welling's GCN as tkipf/pygcn writes it (GraphConvolution layers over a row-normalised
sparse adjacency, torch.spmm, Adam, NLL loss), on a tiny random graph built without scipy."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.nn.modules.module import Module
from torch.nn.parameter import Parameter


class GraphConvolution(Module):
    """Simple GCN layer, similar to https://arxiv.org/abs/1609.02907"""

    def __init__(self, in_features, out_features, bias=True):
        super(GraphConvolution, self).__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(torch.FloatTensor(in_features, out_features))
        if bias:
            self.bias = Parameter(torch.FloatTensor(out_features))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1. / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        output = torch.spmm(adj, support)
        if self.bias is not None:
            return output + self.bias
        else:
            return output

    def __repr__(self):
        return self.__class__.__name__ + ' (' + str(self.in_features) + ' -> ' \
            + str(self.out_features) + ')'


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super(GCN, self).__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        x = self.gc2(x, adj)
        return F.log_softmax(x, dim=1)


def normalize(mx):
    """Row-normalize a (dense numpy) matrix."""
    rowsum = mx.sum(1)
    r_inv = np.power(rowsum, -1.0)
    r_inv[np.isinf(r_inv)] = 0.
    return mx * r_inv[:, None]


def dense_to_torch_sparse_tensor(mx):
    """A numpy matrix as a torch sparse tensor (pygcn's sparse_mx_to_torch_sparse_tensor)."""
    mx = mx.astype(np.float32)
    row, col = np.nonzero(mx)
    indices = torch.from_numpy(np.vstack((row, col)).astype(np.int64))
    values = torch.from_numpy(mx[row, col])
    shape = torch.Size(mx.shape)
    return torch.sparse.FloatTensor(indices, values, shape)


def accuracy(output, labels):
    preds = output.max(1)[1].type_as(labels)
    correct = preds.eq(labels).double()
    correct = correct.sum()
    return correct / len(labels)


def load_data(rng, n=24, nfeat=10, nclass=3):
    labels = rng.randint(0, nclass, size=n)
    centers = rng.randn(nclass, nfeat)
    features = (centers[labels] + rng.randn(n, nfeat) > 0.5).astype(np.float32)
    adj = np.zeros((n, n), dtype=np.float32)
    for _ in range(3 * n):
        i, j = rng.randint(0, n, size=2)
        if labels[i] == labels[j] or rng.rand() < 0.2:
            adj[i, j] = 1.0
    adj = np.maximum(adj, adj.T)                 # build symmetric adjacency matrix
    features = normalize(features)
    adj = normalize(adj + np.eye(n, dtype=np.float32))
    idx_train, idx_val, idx_test = range(12), range(12, 18), range(18, 24)
    features = torch.FloatTensor(np.array(features, dtype=np.float32))
    labels = torch.LongTensor(labels)
    adj = dense_to_torch_sparse_tensor(adj)
    return (adj, features, labels, torch.LongTensor(list(idx_train)),
            torch.LongTensor(list(idx_val)), torch.LongTensor(list(idx_test)))


np.random.seed(42)
torch.manual_seed(42)
adj, features, labels, idx_train, idx_val, idx_test = load_data(np.random.RandomState(0))
print(adj.layout, adj.shape, adj._nnz(), adj.is_coalesced(), adj.dtype)
print(torch.sparse.sum(adj, 1).to_dense()[:4])

model = GCN(nfeat=features.shape[1], nhid=8, nclass=int(labels.max()) + 1, dropout=0.5)
print(model)
optimizer = optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)


def train(epoch):
    model.train()
    optimizer.zero_grad()
    output = model(features, adj)
    loss_train = F.nll_loss(output[idx_train], labels[idx_train])
    acc_train = accuracy(output[idx_train], labels[idx_train])
    loss_train.backward()
    optimizer.step()
    model.eval()
    output = model(features, adj)
    loss_val = F.nll_loss(output[idx_val], labels[idx_val])
    acc_val = accuracy(output[idx_val], labels[idx_val])
    print('Epoch: {:04d}'.format(epoch + 1),
          'loss_train: {:.4f}'.format(loss_train.item()),
          'acc_train: {:.4f}'.format(acc_train.item()),
          'loss_val: {:.4f}'.format(loss_val.item()),
          'acc_val: {:.4f}'.format(acc_val.item()))


def test():
    model.eval()
    output = model(features, adj)
    loss_test = F.nll_loss(output[idx_test], labels[idx_test])
    acc_test = accuracy(output[idx_test], labels[idx_test])
    print("Test set results:",
          "loss= {:.4f}".format(loss_test.item()),
          "accuracy= {:.4f}".format(acc_test.item()))


for epoch in range(5):
    train(epoch)
print(model.gc1.weight.grad.shape, model.gc1.weight.grad.abs().sum() > 0)
test()

# a learnable edge weight: the gradient reaches the values through the sparse product
w = torch.ones(adj._nnz(), requires_grad=True)
weighted = torch.sparse_coo_tensor(adj._indices(), adj._values() * w, adj.shape)
out = torch.spmm(weighted, features).sum()
out.backward()
print(weighted.grad_fn.name(), out.grad_fn.name(), w.grad[:5])

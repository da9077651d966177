"""The spatial transformer tutorial's network: affine_grid, grid_sample, dropout2d, nll_loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=5)
        self.conv2 = nn.Conv2d(4, 8, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(8 * 4 * 4, 16)
        self.fc2 = nn.Linear(16, 10)
        self.localization = nn.Sequential(
            nn.Conv2d(1, 4, kernel_size=7),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(4, 5, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
        )
        self.fc_loc = nn.Sequential(nn.Linear(5 * 3 * 3, 8), nn.ReLU(True), nn.Linear(8, 3 * 2))
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 5 * 3 * 3)
        theta = self.fc_loc(xs)
        theta = theta.view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False)

    def forward(self, x):
        x = self.stn(x)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 8 * 4 * 4)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


model = Net()
print(model)
data = torch.randn(4, 1, 28, 28)
target = torch.tensor([3, 1, 4, 1])
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
for step in range(3):
    model.train()
    optimizer.zero_grad()
    output = model(data)
    loss = F.nll_loss(output, target)
    loss.backward()
    optimizer.step()
    print(f"Train step {step} Loss: {loss.item():.6f}")
model.eval()
with torch.no_grad():
    output = model(data)
    test_loss = F.nll_loss(output, target, reduction="sum").item()
    pred = output.max(1, keepdim=True)[1]
    correct = pred.eq(target.view_as(pred)).sum().item()
print(f"Test loss {test_loss:.4f} correct {correct}")
theta = torch.tensor([[[0.8, -0.2, 0.1], [0.3, 0.9, -0.1]]])
img = torch.arange(36.0).view(1, 1, 6, 6)
grid = F.affine_grid(theta, img.size(), align_corners=False)
print(grid.shape, f"{grid[0, 0, 0, 0].item():.4f} {grid[0, 5, 5, 1].item():.4f}")
for mode in ["bilinear", "nearest"]:
    for pad in ["zeros", "border", "reflection"]:
        out = F.grid_sample(img, grid, mode=mode, padding_mode=pad, align_corners=True)
        print(mode, pad, f"{out.sum().item():.4f}", f"{out[0, 0, 0, 0].item():.4f}")
theta.requires_grad_(True)
img.requires_grad_(True)
out = F.grid_sample(img, F.affine_grid(theta, img.size(), align_corners=False), align_corners=False)
out.pow(2).mean().backward()
print(out.grad_fn.name(), theta.grad, f"{img.grad.sum().item():.4f}")
print(F.interpolate(img.detach(), scale_factor=0.5, mode="bilinear", align_corners=False)[0, 0])

"""Neural style transfer loop: gram matrices, content/style losses as modules, LBFGS closure."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

torch.manual_seed(0)


class ContentLoss(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


def gram_matrix(input):
    a, b, c, d = input.size()
    features = input.view(a * b, c * d)
    G = torch.mm(features, features.t())
    return G.div(a * b * c * d)


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super().__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        self.loss = F.mse_loss(gram_matrix(input), self.target)
        return input


class Normalization(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def forward(self, img):
        return (img - self.mean) / self.std


cnn = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(),
                    nn.MaxPool2d(2), nn.Conv2d(4, 6, 3, padding=1), nn.ReLU()).eval()
for p in cnn.parameters():
    p.requires_grad_(False)
style_img = torch.rand(1, 3, 8, 8)
content_img = torch.rand(1, 3, 8, 8)
normalization = Normalization([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
model = nn.Sequential(normalization)
content_losses, style_losses = [], []
i = 0
for layer in cnn.children():
    if isinstance(layer, nn.Conv2d):
        i += 1
        name = f"conv_{i}"
    elif isinstance(layer, nn.ReLU):
        name = f"relu_{i}"
        layer = nn.ReLU(inplace=False)
    elif isinstance(layer, nn.MaxPool2d):
        name = f"pool_{i}"
    model.add_module(name, layer)
    if name == "conv_2":
        target = model(content_img).detach()
        cl = ContentLoss(target)
        model.add_module(f"content_loss_{i}", cl)
        content_losses.append(cl)
    if name in ("conv_1", "conv_2", "conv_3"):
        target_feature = model(style_img).detach()
        sl = StyleLoss(target_feature)
        model.add_module(f"style_loss_{i}", sl)
        style_losses.append(sl)
print(model)

input_img = content_img.clone()
input_img.requires_grad_(True)
model.eval()
model.requires_grad_(False)
optimizer = optim.LBFGS([input_img], max_iter=4, history_size=3)
run = [0]
while run[0] <= 6:
    def closure():
        with torch.no_grad():
            input_img.clamp_(0, 1)
        optimizer.zero_grad()
        model(input_img)
        style_score = sum(sl.loss for sl in style_losses) * 1000
        content_score = sum(cl.loss for cl in content_losses)
        loss = style_score + content_score
        loss.backward()
        run[0] += 1
        if run[0] % 2 == 0:
            print(f"run {run[0]}: Style Loss : {style_score.item():4f} Content Loss: {content_score.item():4f}")
        return style_score + content_score
    optimizer.step(closure)
with torch.no_grad():
    input_img.clamp_(0, 1)
print(input_img.shape, input_img.requires_grad, f"{input_img.mean().item():.4f}")
st = optimizer.state[optimizer.param_groups[0]["params"][0]]
print(sorted(k for k in st.keys()), st["func_evals"], st["n_iter"])

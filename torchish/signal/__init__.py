"""`torchish.signal`: PyTorch's torch.signal namespace (its `windows`)."""
from . import windows  # noqa: F401

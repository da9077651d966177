"""`torch.cuda.amp.grad_scaler`: where PyTorch defines the deprecated `torch.cuda.amp.GradScaler`
(the class lives in torchish.amp.grad_scaler, named and placed as PyTorch's)."""
from ...amp.grad_scaler import CudaGradScaler as GradScaler

__all__ = ["GradScaler"]

"""`torch.cpu.amp.grad_scaler`: where PyTorch defines the deprecated `torch.cpu.amp.GradScaler`
(the class lives in torchish.amp.grad_scaler, named and placed as PyTorch's)."""
from ...amp.grad_scaler import CpuGradScaler as GradScaler

__all__ = ["GradScaler"]

"""`torch.nn.grad`: the gradients of a convolution with respect to its input or its weight,
without running a forward pass first (the helpers custom conv Functions call in `backward`).

A convolution is linear in each of its two operands, so the vector-Jacobian product taken at a
zero operand of the right shape is the gradient itself; it is computed with `autograd.grad`
through `nn.functional.conv{1,2,3}d`. Written on the public torchish API only.
"""
import torchish
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight",
           "conv3d_input", "conv3d_weight"]


def _conv_grad(conv, wrt_input, input, weight, grad_output, stride, padding, dilation, groups):
    # like PyTorch's, the result is differentiable (w.r.t. the given tensors) when grad mode is on
    create_graph = torchish.is_grad_enabled()
    with torchish.enable_grad():
        if wrt_input:
            input = torchish.zeros(tuple(input), dtype=grad_output.dtype,
                                   device=grad_output.device, requires_grad=True)
            target = input
        else:
            weight = torchish.zeros(tuple(weight), dtype=grad_output.dtype,
                                    device=grad_output.device, requires_grad=True)
            target = weight
        out = conv(input, weight, None, stride, padding, dilation, groups)
        if out.shape != grad_output.shape:
            raise RuntimeError(f"Expected grad_output to have shape {tuple(out.shape)}, "
                               f"but got {tuple(grad_output.shape)}")
        grad, = torchish.autograd.grad(out, target, grad_output, create_graph=create_graph)
    return grad


def _input_grad(conv, name):
    def grad_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return _conv_grad(conv, True, input_size, weight, grad_output, stride, padding,
                          dilation, groups)
    grad_input.__name__ = grad_input.__qualname__ = name
    return grad_input


def _weight_grad(conv, name):
    def grad_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
        return _conv_grad(conv, False, input, weight_size, grad_output, stride, padding,
                          dilation, groups)
    grad_weight.__name__ = grad_weight.__qualname__ = name
    return grad_weight


conv1d_input = _input_grad(F.conv1d, "conv1d_input")
conv1d_weight = _weight_grad(F.conv1d, "conv1d_weight")
conv2d_input = _input_grad(F.conv2d, "conv2d_input")
conv2d_weight = _weight_grad(F.conv2d, "conv2d_weight")
conv3d_input = _input_grad(F.conv3d, "conv3d_input")
conv3d_weight = _weight_grad(F.conv3d, "conv3d_weight")

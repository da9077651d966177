"""The mistakes users make in training programs (wrong shapes, dtypes, sizes, devices, targets
of a loss) get PyTorch's exception, with PyTorch's first line: never a silent answer or a
JAX traceback. Each case is compared with real PyTorch where it is installed, else with the
outcome PyTorch 2.x gives (recorded below). Wrong argument *types* are in test_arg_errors.py."""
import warnings

import pytest

import torchish

try:
    import torch
except ImportError:   # (the recorded outcomes stand in)
    torch = None


def _outcome(L, expr):
    """(exception type name, first line of its message), or (None, repr of the result)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = eval(expr, {"L": L, "F": L.nn.functional})
        except Exception as exc:  # noqa: BLE001 - the type is what is compared
            return type(exc).__name__, str(exc).split("\n")[0]
    return None, repr(result).replace("torchish", "torch")


_OVERFLOW = "value cannot be converted to type {} without overflow"
_P_IN = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message "
         "be improved?  If so, please report an enhancement request to PyTorch.)")

# (expression with L the library and F its nn.functional, PyTorch's exception type or None
# for a result, the message's first line or the result's repr)
CASES = [
    # mixed dtypes where ATen's kernel takes one (no promotion)
    ('L.einsum("ij,jk->ik", L.ones(2, 3), L.ones(3, 2, dtype=L.float64))',
     'RuntimeError', 'expected scalar type Float but found Double'),
    ('L.einsum("ij,kj,lj->ikl", L.ones(2, 3), L.ones(2, 3), L.ones(2, 3, dtype=L.long))',
     'RuntimeError', 'expected scalar type Float but found Long'),
    ('L.einsum("ij,jk->ik", L.ones(2, 3, dtype=L.long), L.ones(3, 2, dtype=L.long)).dtype',
     None, 'torch.int64'),
    ('L.inner(L.ones(3), L.ones(3, dtype=L.float64))',
     'RuntimeError', 'both inputs should have same dtype'),
    ('L.inner(L.ones(2, 3), L.ones(2, 3, dtype=L.half))',
     'RuntimeError', 'both inputs should have same dtype'),
    ('L.inner(L.ones(3, dtype=L.long), L.ones(3, dtype=L.int32))',
     'RuntimeError', 'both inputs should have same dtype'),
    ('L.inner(L.ones(3), L.ones(4, dtype=L.float64))',
     'RuntimeError', 'inner() the last dimension must match on both input tensors but got '
                     'shapes [3] and [4]'),
    ('L.inner(L.ones(3, requires_grad=True), L.ones(3, dtype=L.float64))',
     'RuntimeError', 'both inputs should have same dtype'),
    ('L.inner(L.tensor(2.), L.ones(3, dtype=L.float64))',
     None, 'tensor([2., 2., 2.], dtype=torch.float64)'),
    ('L.inner(L.ones(3), L.tensor(2., dtype=L.float64))',
     None, 'tensor([2., 2., 2.])'),
    ('L.cross(L.ones(3), L.ones(3, dtype=L.float64), dim=0)',
     'RuntimeError', 'expected scalar type Float but found Double'),
    ('L.linalg.cross(L.ones(3, dtype=L.long), L.ones(3))',
     'RuntimeError', 'expected scalar type Long but found Float'),
    ('L.cross(L.ones(3), L.ones(4, dtype=L.float64), dim=0)',
     'RuntimeError', 'linalg.cross: inputs dimension 0 must have length 3. Got 3 and 4'),
    ('L.cdist(L.ones(2, 3), L.ones(2, 3, dtype=L.float64))',
     'RuntimeError', 'expected scalar type Float but found Double'),
    ('L.cdist(L.ones(2, 3, dtype=L.long), L.ones(2, 3))',
     'RuntimeError', 'cdist only supports floating-point dtypes, X1 got: Long'),
    ('L.cdist(L.ones(2, 3), L.ones(2, 3, dtype=L.long))',
     'RuntimeError', 'cdist only supports floating-point dtypes, X2 got: Long'),
    ('L.cdist(L.ones(2, 3, dtype=L.half), L.ones(2, 3, dtype=L.half))',
     'NotImplementedError', '"cdist" not implemented for \'Half\''),
    ('F.nll_loss(L.tensor([1., 2., 3.]), L.tensor([1])).shape',
     None, 'torch.Size([])'),
    ('F.nll_loss(L.tensor([1., 2., 3.]), L.tensor([1, 2]))',
     'ValueError', 'For 1D input, 1D target must have size 1, but got target size: 2'),
    ('F.cross_entropy(L.tensor([1., 2., 3.]), L.tensor([[1]]))',
     'RuntimeError', '0D or 1D target tensor expected, multi-target not supported'),
    ('F.nll_loss(L.ones(4, 3), L.tensor(1))',
     'ValueError', 'Expected input batch_size (4) to match target batch_size (0).'),
    ('F.nll_loss(L.ones(4, 3), L.zeros(3))',
     'ValueError', 'Expected input batch_size (4) to match target batch_size (3).'),
    ('F.nll_loss(L.ones(4, 3), L.zeros(4, dtype=L.long), weight=L.ones(3, 1))',
     'RuntimeError', 'weight tensor should be defined either for all 3 classes or no '
                     'classes but got weight tensor of shape: [3, 1]'),
    ('F.nll_loss(L.ones(4, 3), L.zeros(4, dtype=L.long), weight=L.ones(3).double())',
     'RuntimeError', 'expected scalar type Float but found Double'),
    ('F.nll_loss(L.ones(4, 3), L.zeros(4, dtype=L.int32))',
     'RuntimeError', 'expected target dtype to be Long or Byte, but got Int'),
    ('F.nll_loss(L.ones(4, 3), L.zeros(4, dtype=L.bool))',
     'RuntimeError', 'expected target dtype to be Long or Byte, but got Bool'),
    ('F.nll_loss(L.ones(4, 3), L.zeros(4, dtype=L.uint8)).shape',
     None, 'torch.Size([])'),
    ('F.nll_loss(L.ones(4, 3, dtype=L.long), L.zeros(4, dtype=L.long))',
     'NotImplementedError', '"nll_loss_out_frame" not implemented for \'Long\''),
    ('F.nll_loss(L.ones(2, 3, 4, dtype=L.long), L.zeros(2, 4, dtype=L.long))',
     'NotImplementedError', '"nll_loss2d_forward_out_frame" not implemented for \'Long\''),
    ('F.nll_loss(L.ones(2, 3, 4), L.zeros(2, 5, dtype=L.long))',
     'RuntimeError', 'Expected target size [2, 4], got [2, 5]'),
    ('F.nll_loss(L.ones(2, 3, 4), L.zeros(2, 4, dtype=L.long), weight=L.ones(2))',
     'RuntimeError', 'weight tensor should be defined either for all or no classes'),
    ('F.nll_loss(L.ones(2, 3, 4, 4), L.zeros(2, 16, dtype=L.long))',
     'RuntimeError', 'only batches of spatial targets supported (3D tensors) but got '
                     'targets of dimension: 2'),
    ('F.nll_loss(L.ones(2, 3, 4, 4), L.zeros(2, 4, 5, dtype=L.long))',
     'RuntimeError', 'size mismatch (got input: [2, 3, 4, 4] , target: [2, 4, 5]'),
    ('F.nll_loss(L.ones(2, 3, 4, 4), L.zeros(2, 4, 4), weight=L.ones(2))',
     'RuntimeError', 'expected target dtype to be Long or Byte, but got Float'),
    ('F.nll_loss(L.ones(2, 3, 4, 4), L.zeros(2, 4, 5, dtype=L.long), weight=L.ones(2))',
     'RuntimeError', 'weight tensor should be defined either for all or no classes'),
    ('F.cross_entropy(L.ones(4, 3), L.tensor([0, 1, 2, 0]).int())',
     'RuntimeError', 'expected target dtype to be Long or Byte, but got Int'),
    ('F.cross_entropy(L.ones(4, 3, dtype=L.long), L.tensor([0, 1, 2, 0]))',
     'NotImplementedError', '"log_softmax_lastdim_kernel_impl" not implemented for \'Long\''),
    ('F.cross_entropy(L.ones(2, 3, 4, 4), L.zeros(2, 4, 5, dtype=L.long))',
     'RuntimeError', 'size mismatch (got input: [2, 3, 4, 4] , target: [2, 4, 5]'),
    ('F.softmax(L.ones(4, 3, dtype=L.long), 1)',
     'NotImplementedError', '"softmax_lastdim_kernel_impl" not implemented for \'Long\''),
    ('F.log_softmax(L.ones(4, 3, dtype=L.uint8), 0)',
     'NotImplementedError', '"log_softmax_kernel_impl" not implemented for \'Byte\''),
    ('L.softmax(L.ones(3, dtype=L.bool), 0)',
     'NotImplementedError', '"softmax_lastdim_kernel_impl" not implemented for \'Bool\''),
    ('L.ones(4, 3).softmax(1, dtype=L.int64)',
     'NotImplementedError', '"softmax_lastdim_kernel_impl" not implemented for \'Long\''),
    ('L.ones(4, 3, dtype=L.int64).softmax(1, L.float64).dtype',
     None, 'torch.float64'),
    ('F.binary_cross_entropy(L.full((4, 2), 0.5), L.full((4, 2), 0.5), weight=L.ones(3))',
     'RuntimeError', 'Attempting to broadcast a dimension of length 3 at -1! Mismatching '
                     'argument at index 1 had torch.Size([3]); but expected shape should '
                     'be broadcastable to [4, 2]'),
    ('F.binary_cross_entropy(L.full((4, 2), 0.5), L.full((4, 2), 0.5), weight=L.ones(3, 1))',
     'RuntimeError', 'Attempting to broadcast a dimension of length 3 at -2! Mismatching '
                     'argument at index 1 had torch.Size([3, 1]); but expected shape '
                     'should be broadcastable to [4, 2]'),
    ('F.binary_cross_entropy(L.full((4, 2), 0.5), L.full((4, 2), 0.5), weight=L.ones(2, 4, 2))',
     'RuntimeError', "output with shape [4, 2] doesn't match the broadcast shape [2, 4, 2]"),
    ('F.binary_cross_entropy_with_logits(L.ones(4), L.ones(4, dtype=L.long))',
     'RuntimeError', "result type Float can't be cast to the desired output type Long"),
    ('F.binary_cross_entropy_with_logits(L.ones(4), L.ones(4, dtype=L.int32))',
     'RuntimeError', "result type Float can't be cast to the desired output type Int"),
    ('F.binary_cross_entropy_with_logits(L.ones(4), L.ones(4, dtype=L.bool))',
     'RuntimeError', 'Subtraction, the `-` operator, with two bool tensors is not '
                     'supported. Use the `^` or `logical_xor()` operator instead.'),
    ('F.binary_cross_entropy_with_logits(L.ones(4, 3), L.ones(4, 3), pos_weight=L.ones(2))',
     'RuntimeError', 'The size of tensor a (2) must match the size of tensor b (3) at '
                     'non-singleton dimension 1'),
    ('F.binary_cross_entropy_with_logits(L.ones(4, 3), L.ones(4, 3), pos_weight=L.ones(5, 1))',
     'RuntimeError', 'The size of tensor a (5) must match the size of tensor b (4) at '
                     'non-singleton dimension 0'),
    ('F.binary_cross_entropy_with_logits(L.ones(4, 3), L.ones(4, 3), weight=L.ones(2, 4, 3))',
     'RuntimeError', "output with shape [4, 3] doesn't match the broadcast shape [2, 4, 3]"),
    ('F.linear(L.ones(2, 4), L.ones(3, 4), L.ones(5))',
     'RuntimeError', 'The expanded size of the tensor (3) must match the existing size '
                     '(5) at non-singleton dimension 1.  Target sizes: [2, 3].  Tensor '
                     'sizes: [5]'),
    ('F.linear(L.ones(2, 4), L.ones(3, 4), L.ones(2, 3, 1))',
     'RuntimeError', 'expand(torch.FloatTensor{[2, 3, 1]}, size=[2, 3]): the number of '
                     'sizes provided (2) must be greater or equal to the number of '
                     'dimensions in the tensor (3)'),
    ('F.linear(L.ones(2, 4), L.ones(3, 4), L.ones(4, 3))',
     'RuntimeError', 'The expanded size of the tensor (2) must match the existing size '
                     '(4) at non-singleton dimension 0.  Target sizes: [2, 3].  Tensor '
                     'sizes: [4, 3]'),
    ('F.linear(L.ones(2, 4), L.ones(4), L.ones(5))',
     'RuntimeError', 'mat2 must be a matrix, got 1-D tensor'),
    ('F.linear(L.ones(2, 4), L.ones(2, 3, 4))',
     'RuntimeError', 't() expects a tensor with <= 2 dimensions, but self is 3D'),
    ('L.addmm(L.ones(3), L.ones(2, 4), L.ones(4))',
     'RuntimeError', 'mat2 must be a matrix, got 1-D tensor'),
    ('L.mm(L.ones(2, 2), L.ones(2))', 'RuntimeError', 'mat2 must be a matrix'),
    # an `input` that does not broadcast to the product's shape
    ('L.baddbmm(L.ones(2, 4, 8), L.ones(2, 4, 8), L.ones(2, 8, 4))',
     'RuntimeError', 'The expanded size of the tensor (4) must match the existing size (8) at '
                     'non-singleton dimension 2.  Target sizes: [2, 4, 4].  Tensor sizes: '
                     '[2, 4, 8]'),
    ('L.addbmm(L.ones(4, 8), L.ones(2, 4, 8), L.ones(2, 8, 4))',
     'RuntimeError', 'The expanded size of the tensor (4) must match the existing size (8) at '
                     'non-singleton dimension 1.  Target sizes: [4, 4].  Tensor sizes: [4, 8]'),
    ('L.addr(L.ones(3, 2), L.ones(4), L.ones(8))',
     'RuntimeError', 'The expanded size of the tensor (8) must match the existing size (2) at '
                     'non-singleton dimension 1.  Target sizes: [4, 8].  Tensor sizes: [3, 2]'),
    ('L.addr(L.ones(4, 8), L.ones(4, 1), L.ones(8))',
     'RuntimeError', 'addr: Expected 1-D argument vec1, but got 2-D'),
    ('L.addmv(L.ones(3), L.ones(4, 8), L.ones(8))',
     'RuntimeError', 'size mismatch, got input (3), mat (4x8), vec (8)'),
    ('L.addmv(L.ones(1, 4), L.ones(4, 8), L.ones(8))',
     'RuntimeError', 'vector + matrix @ vector expected, got 2, 2, 1'),
    # a legacy tensor type converts (as its string name does)
    ('L.ones(2).type(L.HalfTensor).dtype', None, 'torch.float16'),
    ('L.ones(2).type(L.LongTensor)', None, 'tensor([1, 1])'),
    ('F.scaled_dot_product_attention(L.ones(1, 2, 2), L.ones(1, 2, 2).half(), '
     'L.ones(1, 2, 2, dtype=L.long))',
     'RuntimeError', 'Expected query, key, and value to have the same dtype, but got '
                     'query.dtype: float key.dtype: c10::Half and value.dtype: long int '
                     'instead.'),
    ('L.mm(L.ones(2), L.ones(2, 2))', 'RuntimeError', 'self must be a matrix'),
    ('L.addmm(L.ones(5), L.ones(2, 5), L.ones(4, 3))',
     'RuntimeError', 'mat1 and mat2 shapes cannot be multiplied (2x5 and 4x3)'),
    ('L.ones(3, 4) @ L.ones(4, dtype=L.long)',
     'RuntimeError', 'addmv input tensors must have the same dtype, but got Long, Float, '
                     'and Long'),
    ('L.ones(2, 3, 4) @ L.ones(4).double()',
     'RuntimeError', 'addmv input tensors must have the same dtype, but got Double, '
                     'Float, and Double'),
    ('L.mv(L.ones(3, 4, dtype=L.int32), L.ones(4, dtype=L.long))',
     'RuntimeError', 'addmv input tensors must have the same dtype, but got Long, Int, '
                     'and Long'),
    ('L.bmm(L.ones(2, 2, 4), L.ones(2, 4, 5).double())',
     'RuntimeError', 'expected scalar type Float but found Double'),
    ('F.conv2d(L.ones(1, 3, 8, 8), L.ones(8, 3, 3))',
     'RuntimeError', 'expected stride to be a single integer value or a list of 1 values '
                     'to match the convolution dimensions, but got stride=[1, 1]'),
    ('F.conv2d(L.ones(1, 3, 8, 8), L.ones(8, 3, 3, 3, 3), padding=(1, 1))',
     'RuntimeError', 'expected stride to be a single integer value or a list of 3 values '
                     'to match the convolution dimensions, but got stride=[1, 1]'),
    ('F.conv2d(L.ones(1, 3, 8, 8), L.ones(8, 3, 3, 3), padding=(1, 1, 1))',
     'RuntimeError', 'expected padding to be a single integer value or a list of 2 values '
                     'to match the convolution dimensions, but got padding=[1, 1, 1]'),
    ('F.conv2d(L.ones(1, 3, 8, 8), L.ones(8, 3, 3, 3), dilation=(1, 1, 1))',
     'RuntimeError', 'expected dilation to be a single integer value or a list of 2 '
                     'values to match the convolution dimensions, but got dilation=[1, 1, '
                     '1]'),
    ('F.conv1d(L.ones(1, 3, 8), L.ones(8, 3, 3, 3), stride=2)',
     'RuntimeError', 'Expected 4-dimensional input for 4-dimensional weight [8, 3, 3, 3], '
                     'but got 3-dimensional input of size [1, 3, 8] instead'),
    ('F.conv_transpose2d(L.ones(1, 3, 8, 8), L.ones(3, 3, 3))',
     'RuntimeError', 'expected stride to be a single integer value or a list of 1 values '
                     'to match the convolution dimensions, but got stride=[1, 1]'),
    ('F.conv2d(L.ones(1, 3, 8, 8).double(), L.ones(8, 3, 3, 3), L.ones(8))',
     'RuntimeError', 'Input type (double) and bias type (float) should be the same'),
    ('F.conv_transpose2d(L.ones(1, 3, 8, 8).double(), L.ones(3, 3, 3, 3), L.ones(3))',
     'RuntimeError', 'expected scalar type Double but found Float'),
    ('F.layer_norm(L.ones(2, 3), (3,), weight=L.ones(4))',
     'RuntimeError', 'Expected weight to be of same shape as normalized_shape, but got '
                     'weight of shape [4] and normalized_shape = [3]'),
    ('F.layer_norm(L.ones(2, 3), (3,), bias=L.ones(1, 3))',
     'RuntimeError', 'Expected bias to be of same shape as normalized_shape, but got bias '
                     'of shape [1, 3] and normalized_shape = [3]'),
    ('F.embedding(L.tensor([1.5]), L.ones(5, 2), max_norm=1.0)',
     'RuntimeError', "Expected tensor for argument #2 'indices' to have one of the "
                     'following scalar types: Long, Int; but got torch.FloatTensor '
                     'instead (while checking arguments for embedding_renorm_)'),
    ('L.ones(2, 3).reshape(-2, 3)',
     'RuntimeError', 'invalid shape dimension -2 at index 0 of shape [-2, 3]'),
    ('L.ones(2, 6).view(-1, -3)',
     'RuntimeError', 'invalid shape dimension -3 at index 1 of shape [-1, -3]'),
    ('L.ones(2, 6).view(-2, -1, -1)',
     'RuntimeError', 'invalid shape dimension -2 at index 0 of shape [-2, -1, -1]'),
    ('L.ones(2, 6).view(-1, -1, -2)',
     'RuntimeError', 'only one dimension can be inferred'),
    ('L.ones(6).view(2, 3.0)',
     'TypeError', "view(): argument 'size' failed to unpack the object at pos 2 with "
                  'error "type must be tuple of ints,but got float"'),
    ('L.ones(6).view(2, 3.5)',
     'TypeError', "view(): argument 'size' failed to unpack the object at pos 2 with "
                  'error "type must be tuple of ints,but got float"'),
    ('L.ones(6).reshape((3.0, 2))',
     'TypeError', "reshape(): argument 'shape' (position 1) must be tuple of ints, but "
                  'found element of type float at pos 0'),
    ('L.ones(2, 6).unflatten(1, (4, 2))',
     'RuntimeError', "unflatten: Provided sizes [4, 2] don't multiply up to the size of "
                     'dim 1 (6) in the input tensor'),
    ('L.ones(2, 6).unflatten(-1, (4, -1, 1))',
     'RuntimeError', "unflatten: Provided sizes [4, -1, 1] don't multiply up to the size "
                     'of dim 1 (6) in the input tensor'),
    ('L.ones(2, 6).unflatten(1, ())',
     'RuntimeError', 'unflatten: sizes must be non-empty'),
    ('L.cat([L.ones(2, 3), L.ones(2, 4), L.tensor(1.)])',
     'RuntimeError', 'zero-dimensional tensor (at position 2) cannot be concatenated'),
    ('L.cat([L.tensor(1.), L.tensor(2.)])',
     'RuntimeError', 'zero-dimensional tensor (at position 0) cannot be concatenated'),
    ('L.ones(2).repeat(-1)',
     'RuntimeError', 'Trying to create tensor with negative dimension -2: [-2]'),
    ('L.ones(2, 3).repeat(1, -2)',
     'RuntimeError', 'Trying to create tensor with negative dimension -6: [2, -6]'),
    ('L.ones(2).copy_(L.ones(3))',
     'RuntimeError', 'The size of tensor a (2) must match the size of tensor b (3) at '
                     'non-singleton dimension 0'),
    ('L.ones(2).copy_(L.ones(1, 2))',
     'RuntimeError', "output with shape [2] doesn't match the broadcast shape [1, 2]"),
    ('L.ones(2, 3).copy_(L.ones(2, 1, 3))',
     'RuntimeError', "output with shape [2, 3] doesn't match the broadcast shape [2, 2, 3]"),
    ('L.ones(3, 4).__setitem__(0, L.ones(3))',
     'RuntimeError', 'The expanded size of the tensor (4) must match the existing size '
                     '(3) at non-singleton dimension 0.  Target sizes: [4].  Tensor '
                     'sizes: [3]'),
    ('L.tensor(1.)[0]',
     'IndexError', 'invalid index of a 0-dim tensor. Use `tensor.item()` in Python or '
                   '`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number'),
    ('L.tensor(1.)[0:1]',
     'IndexError', 'slice() cannot be applied to a 0-dim tensor.'),
    ('L.tensor(1.)[None, 0]',
     'IndexError', 'too many indices for tensor of dimension 0'),
    ('L.zeros(3, 4).scatter(1, L.tensor([[0, 1]]), L.ones(1, 1))',
     'RuntimeError', 'Expected index [1, 2] to be no larger than self [3, 4] apart from '
                     'dimension 1 and to be no larger size than src [1, 1]'),
    ('L.zeros(3, 4).scatter_add(1, L.tensor([[0, 1]]), L.ones(1, 1))',
     'RuntimeError', 'Expected index [1, 2] to be no larger than self [3, 4] apart from '
                     'dimension 1 and to be no larger size than src [1, 1]'),
    ("L.zeros(3, 4).scatter_reduce(1, L.tensor([[0, 1]]), L.ones(1, 1), 'sum')",
     'RuntimeError', 'Expected index [1, 2] to be no larger than self [3, 4] apart from '
                     'dimension 1 and to be no larger size than src [1, 1]'),
    ('L.zeros(3, 4).scatter(1, L.tensor([[0, 1]] * 4), L.ones(4, 2))',
     'RuntimeError', 'Expected index [4, 2] to be no larger than self [3, 4] apart from '
                     'dimension 1 and to be no larger size than src [4, 2]'),
    ('L.zeros(3, 4).scatter(1, L.tensor([[0, 1]] * 4), 1.0)',
     'RuntimeError', 'Expected index [4, 2] to be no larger than self [3, 4] apart from '
                     'dimension 1'),
    ('L.zeros(3, 4).scatter(1, L.tensor([[0]]), L.ones(1))',
     'IndexError', 'Dimension out of range (expected to be in range of [-1, 0], but got 1)'),
    ('L.zeros(3, 4).scatter(1, L.tensor([[0]]), L.ones(1, 1, 1))',
     'RuntimeError', 'Index tensor must have the same number of dimensions as src tensor'),
    ('L.zeros(4).scatter(0, L.tensor([0, 1]), L.ones(1))',
     'RuntimeError', 'Expected index [2] to be no larger than self [4] apart from '
                     'dimension 0 and to be no larger size than src [1]'),
    ('L.zeros(3, 4).gather(1, L.zeros(4, 2, dtype=L.long))',
     'RuntimeError', 'Size does not match at dimension 0 expected index [4, 2] to be no '
                     'larger than self [3, 4] apart from dimension 1'),
    ('L.zeros(3).index_add(0, L.tensor([3]), L.ones(1))',
     'IndexError', 'index out of range in self'),
    ('L.zeros(3).index_add(0, L.tensor([-1]), L.ones(1))',
     'IndexError', 'index out of range in self'),
    ('L.zeros(3, 2).index_add(0, L.tensor([3]), L.ones(1, 2))',
     'RuntimeError', 'index 3 is out of bounds for dimension 0 with size 3'),
    ('L.zeros(3, 2, 2).index_add(1, L.tensor([2]), L.ones(3, 1, 2))',
     'IndexError', 'index out of range in self'),
    ('L.zeros(3, 2, 2).index_add(2, L.tensor([2]), L.ones(3, 2, 1))',
     'RuntimeError', 'index 2 is out of bounds for dimension 2 with size 2'),
    ('L.where(L.ones(3), L.ones(3), L.zeros(3))',
     'RuntimeError', 'where expected condition to be a boolean tensor, but got a tensor '
                     'with dtype Float'),
    ('L.ones(3).where(L.ones(3, dtype=L.long), 0.0)',
     'RuntimeError', 'where expected condition to be a boolean tensor, but got a tensor '
                     'with dtype Long'),
    ('~L.ones(3)',
     'TypeError', '~ (operator.invert) is only implemented on integer and Boolean-type '
                  'tensors'),
    ('~L.ones(3, dtype=L.complex64)',
     'TypeError', '~ (operator.invert) is only implemented on integer and Boolean-type '
                  'tensors'),
    ('(~L.ones(3, dtype=L.long)).tolist()',
     None, '[-2, -2, -2]'),
    ('L.nn.Parameter(L.ones(3, dtype=L.long))',
     'RuntimeError', 'Only Tensors of floating point and complex dtype can require '
                     'gradients'),
    ('L.nn.Parameter(L.ones(3, dtype=L.long), requires_grad=False).dtype',
     None, 'torch.int64'),
    ('L.ones(3, dtype=L.long).norm()',
     'RuntimeError', 'linalg.vector_norm: Expected a floating point or complex tensor as '
                     'input. Got Long'),
    ('L.tensor([300], dtype=L.int8)',
     'RuntimeError', 'value cannot be converted to type int8 without overflow'),
    ('L.tensor([-129], dtype=L.uint8).tolist()',
     None, '[127]'),
    ('L.tensor([-256], dtype=L.uint8)',
     'RuntimeError', 'value cannot be converted to type uint8 without overflow'),
    ('L.tensor([127.9], dtype=L.int8)',
     'RuntimeError', 'value cannot be converted to type int8 without overflow'),
    ("L.tensor([float('nan')], dtype=L.int32)",
     'RuntimeError', 'value cannot be converted to type int32 without overflow'),
    ('L.tensor([1.5, -2.7], dtype=L.int8).tolist()',
     None, '[1, -2]'),
    ('L.tensor([2 ** 63])',
     'ValueError', 'Overflow when unpacking long long'),
    ('L.tensor([-2 ** 63 - 1])',
     'ValueError', 'Overflow when unpacking long long'),
    ('L.tensor([2 ** 64])',
     'ValueError', 'Overflow when unpacking long long'),
    ('L.tensor([1e300], dtype=L.float32).tolist()',
     None, '[inf]'),
    ('L.full((2,), 300, dtype=L.int8)',
     'RuntimeError', 'value cannot be converted to type int8_t without overflow'),
    ('L.tensor([L.ones(2), L.ones(2)])',
     'ValueError', 'only one element tensors can be converted to Python scalars'),
    ('L.tensor([L.ones(0)])',
     'ValueError', 'only one element tensors can be converted to Python scalars'),
    ('L.tensor([L.ones(1), L.ones(1, 1)]).tolist()',
     None, '[1.0, 1.0]'),
    ('L.tensor([L.tensor(1), 2.5]).tolist()',
     None, '[1.0, 2.5]'),
    ('L.tensor([L.tensor(1, dtype=L.int32), 5]).dtype',
     None, 'torch.int64'),
    ('L.tensor([L.tensor(1, dtype=L.int32), True]).dtype',
     None, 'torch.int32'),
    ('L.randn(2, -3)',
     'RuntimeError', 'Trying to create tensor with negative dimension -3: [2, -3]'),
    ('L.rand(-1)',
     'RuntimeError', 'Trying to create tensor with negative dimension -1: [-1]'),
    ('L.ones(2).new_zeros(-1)',
     'RuntimeError', 'Trying to create tensor with negative dimension -1: [-1]'),
    ('L.zeros(2, 1.5)',
     'TypeError', "zeros(): argument 'size' failed to unpack the object at pos 2 with "
                  'error "type must be tuple of ints,but got float"'),
    ('L.zeros([2, 1.5])',
     'TypeError', "zeros(): argument 'size' failed to unpack the object at pos 2 with "
                  'error "type must be tuple of ints,but got float"'),
    ('L.randn(2.0)',
     'TypeError', "randn(): argument 'size' (position 1) must be tuple of ints, not float"),
    ('L.rand(2, 1.5)',
     'TypeError', "rand(): argument 'size' failed to unpack the object at pos 2 with "
                  'error "type must be tuple of ints,but got float"'),
    ('L.ones(L.tensor([2, 3]))',
     'TypeError', "ones(): argument 'size' (position 1) must be tuple of ints, not Tensor"),
    ('L.ones(L.tensor(2.0))',
     'TypeError', "ones(): argument 'size' (position 1) must be tuple of ints, not Tensor"),
    ('L.ones(2, L.tensor(2)).shape',
     None, 'torch.Size([2, 2])'),
    ('L.randint(3, 10)',
     'TypeError', "randint(): argument 'size' (position 2) must be tuple of ints, not int"),
    ('L.randperm(-2)',
     'RuntimeError', 'Trying to create tensor with negative dimension -2: [-2]'),
    ("L.device('')",
     'RuntimeError', 'Device string must not be empty'),
    ("L.device('cpu', -1)",
     'RuntimeError', 'Device index must not be negative'),
    ('L.device(1.5)',
     'TypeError', 'device() received an invalid combination of arguments - got (float), '
                  'but expected one of:'),
    ("L.ones(2).type('torch.Foo')",
     'ValueError', "invalid type: 'torch.Foo'"),
    ("L.ones(2).type('Foo')",
     'ValueError', "invalid type: 'Foo'"),
    ("L.ones(2).type('torch.IntTensor').dtype",
     None, 'torch.int32'),
    ('L.save(L.ones(2), 5)',
     'AttributeError', "expected 'f' to be string, path, or a file-like object with a "
                       "'write' attribute"),
    ('L.ones(3).split(0)',
     'RuntimeError', 'split_size can only be 0 if dimension size is 0, but got dimension '
                     'size of 3'),
    ('L.ones(0).split(0)[0].shape',
     None, 'torch.Size([0])'),
    ('L.ones(2, 2, 2).flip(0, 1, 0)',
     'RuntimeError', 'dim 0 appears multiple times in the list of dims'),
    ('L.ones(2, 2, 2).flip(-1, 2)',
     'RuntimeError', 'dim 2 appears multiple times in the list of dims'),
    ('L.zeros_like([1, 2])',
     'TypeError', "zeros_like(): argument 'input' (position 1) must be Tensor, not list"),
    # a Python number converted to the tensor's type where a kernel takes a Scalar: c10's
    # overflow check (integers from -max for unsigned types; floats beyond the largest)
    ('L.zeros(2, dtype=L.int8).fill_(300)', 'RuntimeError', _OVERFLOW.format('int8_t')),
    ('L.zeros(2, dtype=L.uint8).fill_(-255)', None, 'tensor([1, 1], dtype=torch.uint8)'),
    ('L.zeros(2, dtype=L.uint8).fill_(-256)', 'RuntimeError', _OVERFLOW.format('uint8_t')),
    ('L.zeros(2, dtype=L.uint8).fill_(-0.5)', 'RuntimeError', _OVERFLOW.format('uint8_t')),
    ('L.zeros(2, dtype=L.int8).fill_(127.5)', 'RuntimeError', _OVERFLOW.format('int8_t')),
    ("L.zeros(2, dtype=L.int32).fill_(float('nan'))", 'RuntimeError', _OVERFLOW.format('int')),
    ('L.zeros(2, dtype=L.half).fill_(65505.0)', 'RuntimeError', _OVERFLOW.format('c10::Half')),
    ('L.zeros(1, dtype=L.half).fill_(1e5)', None, 'tensor([inf], dtype=torch.float16)'),
    ('L.zeros(2, dtype=L.bfloat16).fill_(1e39)',
     'RuntimeError', _OVERFLOW.format('c10::BFloat16')),
    ('L.zeros(2).fill_(1e39)', 'RuntimeError', _OVERFLOW.format('float')),
    ("L.zeros(2).fill_(float('inf'))", None, 'tensor([inf, inf])'),
    ('L.zeros(2).fill_(1 + 2j)', 'RuntimeError', _OVERFLOW.format('float')),
    ('L.zeros(2, dtype=L.complex64).fill_(1e39)',
     'RuntimeError', _OVERFLOW.format('c10::complex<float>')),
    ('L.zeros(2, dtype=L.bool).fill_(300)', None, 'tensor([True, True])'),
    ('L.zeros(2, dtype=L.int64).fill_(L.tensor(2 ** 40))',
     None, 'tensor([1099511627776, 1099511627776])'),
    ('L.zeros(2, dtype=L.int8).masked_fill(L.tensor([True, False]), 300)',
     'RuntimeError', _OVERFLOW.format('int8_t')),
    ('L.zeros(2, dtype=L.half).masked_fill_(L.tensor([True, False]), -1e5)',
     'RuntimeError', _OVERFLOW.format('c10::Half')),
    ('L.zeros(3, dtype=L.int8).index_fill(0, L.tensor([5]), 300)',
     'RuntimeError', _OVERFLOW.format('int8_t')),
    ('L.zeros(2, dtype=L.int16).index_fill_(0, L.tensor([0]), 2 ** 15)',
     'RuntimeError', _OVERFLOW.format('int16_t')),
    ('L.zeros(2, dtype=L.int8).clamp(-300, 300)', 'RuntimeError', _OVERFLOW.format('int8_t')),
    ('L.zeros(2, dtype=L.int8).clamp(min=300.5)', None, 'tensor([300.5000, 300.5000])'),
    ('L.zeros(2, dtype=L.half).clamp_(max=1e5)', 'RuntimeError', _OVERFLOW.format('c10::Half')),
    ('L.zeros(2, dtype=L.int8).clamp_min(128)', 'RuntimeError', _OVERFLOW.format('int8_t')),
    ('L.zeros(2, dtype=L.uint8).clamp_max(256)', 'RuntimeError', _OVERFLOW.format('uint8_t')),
    ('L.where(L.tensor([True, False]), L.zeros(2, dtype=L.int8), 300)',
     'RuntimeError', _OVERFLOW.format('int8_t')),
    ('L.where(L.tensor([True, False]), L.zeros(2, dtype=L.int8), 300.5)',
     None, 'tensor([  0.0000, 300.5000])'),
    ('L.zeros(2, dtype=L.int8).scatter(0, L.tensor([0]), 300)',
     'RuntimeError', _OVERFLOW.format('int8_t')),
    ("L.zeros(2, dtype=L.int8).scatter_(0, L.tensor([0]), 300, reduce='add')",
     'RuntimeError', _OVERFLOW.format('int8_t')),
    ('L.zeros(2, dtype=L.int8) ** 300', 'RuntimeError', _OVERFLOW.format('int8_t')),
    ('L.zeros(2, dtype=L.half).pow(1e5)', 'RuntimeError', _OVERFLOW.format('c10::Half')),
    ('L.zeros(2, dtype=L.int8).addcmul(L.zeros(2, dtype=L.int8), L.zeros(2, dtype=L.int8), '
     'value=300)', 'RuntimeError', _OVERFLOW.format('int8_t')),
    ('L.zeros(2, dtype=L.half).addcmul(L.zeros(2, dtype=L.half), L.zeros(2, dtype=L.half), '
     'value=1e5)', None, 'tensor([0., 0.], dtype=torch.float16)'),
    # an integer addcmul converts `value` to its type first; addcdiv refuses integer operands
    # whatever `input` is
    ('L.addcmul(L.tensor([1, 5, 9]), L.tensor([1, 5, 9]), L.tensor([1, 5, 9]), value=0.5)',
     None, 'tensor([1, 5, 9])'),
    ('L.tensor([1, 5, 9]).addcmul_(L.tensor([1, 5, 9]), L.tensor([1, 5, 9]), value=-1.7)',
     None, 'tensor([  0, -20, -72])'),
    ('L.addcmul(L.ones(2), L.tensor([1, 5]), L.tensor([1, 5]), value=0.5)',
     None, 'tensor([ 1.5000, 13.5000])'),
    ('L.addcdiv(L.ones(2), L.tensor([1, 5]), L.tensor([2, 2]))', 'RuntimeError',
     'Integer division with addcdiv is no longer supported, and in a future  release addcdiv '
     'will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be '
     'implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for '
     'integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future '
     'addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), '
     'for all dtypes.'),
    ('L.addcdiv(L.tensor([1, 5]), L.tensor([1., 5.]), L.tensor([2, 2]))',
     None, 'tensor([1.5000, 7.5000])'),
    ('F.threshold(L.zeros(2, dtype=L.int8), 300, 1)', 'RuntimeError', _OVERFLOW.format('int8_t')),
    ('F.hardtanh(L.zeros(2, dtype=L.half), -1e5, 1.0)',
     'RuntimeError', _OVERFLOW.format('c10::Half')),
    ('L.zeros(2, 2, dtype=L.int8).fill_diagonal_(300)',
     'RuntimeError', _OVERFLOW.format('int8_t')),
    ('L.zeros(2, dtype=L.int8) + 300', None, 'tensor([44, 44], dtype=torch.int8)'),
    # torch.gradient's spacing: one coordinate tensor (1-d) per dim
    ('L.gradient(L.ones(5), spacing=(L.tensor(2.0),))',
     'RuntimeError', 'torch.gradient expected each element of spacing to have one dimension, '
                     'but got an element with 0 dimensions!'),
    ('L.gradient(L.ones(3, 4), spacing=(L.ones(3), L.ones(2, 2)))',
     'RuntimeError', 'torch.gradient expected each element of spacing to have one dimension, '
                     'but got an element with 2 dimensions!'),
    ('L.gradient(L.ones(3, 4), spacing=(L.tensor([0., 1., 3.]),))',
     'RuntimeError', "torch.gradient expected spacing to be unspecified, a scalar, or a list of "
                     "length equal to 'self.dim() = 2', since dim argument was not given, but "
                     "got a list of length 1"),
    ('L.gradient(L.ones(3, 4), spacing=[1.0])',
     'RuntimeError', "torch.gradient expected spacing to be unspecified, a scalar, or a list of "
                     "length equal to 'self.dim() = 2', since dim argument was not given, but "
                     "got a list of length 1"),
    ('L.gradient(L.ones(3, 4), spacing=[1.0], dim=(0, 1))',
     'RuntimeError', "torch.gradient expected spacing to be unspecified, a scalar or it's "
                     "spacing and dim arguments to have the same length, but got a spacing "
                     "argument of length 1 and a dim argument of length 2."),
    ('L.gradient(L.arange(4.) ** 2, spacing=(L.tensor([0., 1., 1.5, 3.5]),))',
     None, '(tensor([1.0000, 4.3333, 5.3000, 2.5000]),)'),
    # sampler parameters checked on their values (eager, as PyTorch's CPU kernels)
    ('L.normal(L.zeros(3), L.tensor([1., -1., 1.]))',
     'RuntimeError', 'normal expects all elements of std >= 0.0'),
    ("L.normal(0.0, L.tensor([1., float('nan')]))",
     'RuntimeError', 'normal expects all elements of std >= 0.0'),
    ('L.normal(L.zeros(3), L.tensor([1., 0., -0.])).shape', None, 'torch.Size([3])'),
    ('L.normal(L.zeros(3), -1.0)',
     'RuntimeError', 'normal expects std >= 0.0, but found std -1'),
    ('L.zeros(3).normal_(0, -0.5)',
     'RuntimeError', 'normal expects std >= 0.0, but found std -0.5'),
    ('L.bernoulli(L.tensor([0.5, 1.5]))', 'RuntimeError', _P_IN),
    ("L.bernoulli(L.tensor([0.5, float('nan')], dtype=L.float64))", 'RuntimeError', _P_IN),
    ('L.zeros(2).bernoulli_(L.tensor([0.5, -0.5]))', 'RuntimeError', _P_IN),
    ('L.bernoulli(L.tensor([0.0, 1.0])).shape', None, 'torch.Size([2])'),
    # bool and complex inputs of the sorting and selection ops (no CPU kernel)
    ('L.median(L.tensor([True, False]))',
     'NotImplementedError', '"median_cpu" not implemented for \'Bool\''),
    ('L.tensor([True, False]).median(0)',
     'NotImplementedError', '"median_out" not implemented for \'Bool\''),
    ('L.nanmedian(L.tensor(True))',
     'NotImplementedError', '"median_cpu" not implemented for \'Bool\''),
    ('L.nanmedian(L.tensor([True]), 0)',
     'NotImplementedError', '"median_out" not implemented for \'Bool\''),
    ('L.median(L.zeros(0, dtype=L.bool))',
     None, 'tensor(True)'),
    ('L.median(L.zeros(0, dtype=L.bool), 0)',
     'IndexError', 'median(): Expected reduction dim 0 to have non-zero size.'),
    ('L.nanmedian(L.zeros(0), 0)',
     'IndexError', 'median(): Expected reduction dim 0 to have non-zero size.'),
    ('L.median(L.tensor([1j]))',
     'NotImplementedError', '"median_cpu" not implemented for \'ComplexFloat\''),
    ('L.kthvalue(L.tensor([True, False]), 1)',
     'NotImplementedError', '"kthvalue_cpu" not implemented for \'Bool\''),
    ('L.kthvalue(L.tensor(True), 1).values',
     None, 'tensor(True)'),
    ('L.kthvalue(L.tensor([True, False]), 3)',
     'RuntimeError', 'kthvalue(): selected number k out of range for dimension 0'),
    ('L.topk(L.tensor([True, False]), 1)',
     'RuntimeError', 'topk does not support bool dtypes on CPU'),
    ('L.topk(L.tensor([True, False]), 3)',
     'RuntimeError', 'selected index k out of range'),
    ('L.topk(L.tensor([1j]), 1)',
     'RuntimeError', ' topk does not support complex dtypes on CPU'),
    ('L.sort(L.tensor([1j, 2j]))',
     'RuntimeError', ' Sort does not support complex dtypes on CPU'),
    ('L.argsort(L.tensor(1j))',
     'RuntimeError', ' Sort does not support complex dtypes on CPU'),
    ('L.tensor([1j]).msort()',
     'RuntimeError', ' Sort does not support complex dtypes on CPU'),
    ('L.mode(L.tensor([1j]), 0)',
     'NotImplementedError', '"mode_cpu" not implemented for \'ComplexFloat\''),
    ('L.mode(L.tensor([True, False, True])).indices',
     None, 'tensor(2)'),
    ('L.nanquantile(L.tensor([1, 2]), 0.5)',
     'RuntimeError', 'quantile() input tensor must be either float or double dtype'),
    ('L.nanquantile(L.tensor([1., 2.]), 1.5)',
     'RuntimeError', 'quantile() q must be in the range [0, 1] but got 1.5'),
    ('L.histc(L.tensor([True]))',
     'NotImplementedError', '"linspace_cpu" not implemented for \'Bool\''),
    ('L.histc(L.tensor([1j]))',
     'NotImplementedError', '"aminmax_cpu" not implemented for \'ComplexFloat\''),
    # subtraction with a bool operand (tensor or Python bool), whichever side
    *[(expr, 'RuntimeError', 'Subtraction, the `-` operator, with a bool tensor is not '
       'supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator '
       'instead.') for expr in (
        'L.tensor([True]) - 1', '1 - L.tensor([True])', 'L.ones(1) - L.tensor([True])',
        'L.ones(1) - True', 'True - L.ones(1)', 'L.ones(1).sub_(L.tensor([True]))',
        'L.rsub(L.ones(1), L.tensor([True]))', 'L.nn.functional.tanhshrink(L.tensor([True]))')],
    ("L.zeros(2, 3).scatter_reduce(1, L.tensor([[0, 0, 2]]), L.tensor([[1., 5., 2.]]), 'max')"
     ".tolist()", None, '[[5.0, 0.0, 2.0], [0.0, 0.0, 0.0]]'),
    ("L.zeros(3).scatter_reduce(0, L.tensor([0, 0, 2]), L.tensor([1., 5., -2.]), 'min')"
     ".tolist()", None, '[0.0, 0.0, -2.0]'),
    # factories check a fill value against the dtype as fill_ does
    ('L.full((2,), 300, dtype=L.int8)', 'RuntimeError',
     'value cannot be converted to type int8_t without overflow'),
    ('L.full((2,), 2 ** 40, dtype=L.int32)', 'RuntimeError',
     'value cannot be converted to type int without overflow'),
    ('L.full((2,), 1e5, dtype=L.half)', 'RuntimeError',
     'value cannot be converted to type c10::Half without overflow'),
    ('L.zeros(2).new_full((2,), 1e40)', 'RuntimeError',
     'value cannot be converted to type float without overflow'),
    ('L.full_like(L.zeros(2, dtype=L.int16), 70000)', 'RuntimeError',
     'value cannot be converted to type int16_t without overflow'),
    # expand checks from the last dimension: the error names the last mismatching one
    ('L.zeros(2, 3).expand(3, 4)', 'RuntimeError', 'The expanded size of the tensor (4) must '
     'match the existing size (3) at non-singleton dimension 1.  Target sizes: [3, 4].  Tensor '
     'sizes: [2, 3]'),
    ('L.zeros(2, 3).expand(-1, -1, 3)', 'RuntimeError', 'The expanded size of the tensor (-1) '
     "isn't allowed in a leading, non-existing dimension 0"),
    ('L.tensor([True]) - True', 'RuntimeError', 'Subtraction, the `-` operator, with two bool '
     'tensors is not supported. Use the `^` or `logical_xor()` operator instead.'),
]


@pytest.mark.parametrize("expr, kind, text", CASES, ids=[c[0] for c in CASES])
def test_user_error(expr, kind, text):
    expected = _outcome(torch, expr) if torch is not None else (kind, text)
    assert _outcome(torchish, expr) == expected


def _warnings(L, fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(L)
    return [(w.category.__name__, str(w.message).split(" (Triggered")[0]) for w in caught]


@pytest.mark.parametrize("name, fn, expected", [
    ("where_uint8", lambda L: L.where(L.ones(3, dtype=L.uint8), L.ones(3), L.zeros(3)),
     [("UserWarning", "where received a uint8 condition tensor. This behavior is deprecated "
                      "and will be removed in a future version of PyTorch. Use a boolean "
                      "condition instead.")]),
    ("mse_broadcast", lambda L: L.nn.functional.mse_loss(L.ones(4, 1), L.ones(4)),
     [("UserWarning", "Using a target size (torch.Size([4])) that is different to the input "
                      "size (torch.Size([4, 1])). This will likely lead to incorrect results "
                      "due to broadcasting. Please ensure they have the same size.")]),
])
def test_user_warning(name, fn, expected):
    expected = _warnings(torch, fn) if torch is not None else expected
    assert _warnings(torchish, fn) == expected


def test_grad_argument_errors_come_in_pytorch_order():
    for L in filter(None, (torchish, torch)):
        x = L.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="^`inputs` argument to `grad\\(\\)` cannot "
                                               "be empty.$"):
            L.autograd.grad(x * 2, [])
        with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad "
                                               "and does not have a grad_fn$"):
            L.autograd.grad(L.ones(3).sum(), L.ones(3))


def test_checks_leave_compiled_code_alone():
    """The new checks read shapes and dtypes only: the same ops run under compile."""
    F = torchish.nn.functional

    def f(x, w, b, t):
        loss = F.cross_entropy(F.linear(x, w, b), t) + F.softmax(x, 1).sum()
        z = torchish.zeros(2, 4).scatter(1, t.view(2, 1).expand(2, 2), x[:, :2])
        return loss + z.sum() + x.view(2, 2, 2).sum() + torchish.where(x > 0, x, 0.0).sum()

    args = (torchish.ones(2, 4), torchish.ones(3, 4), torchish.zeros(3),
            torchish.tensor([0, 2]))
    assert torchish.compile(f)(*args).item() == pytest.approx(f(*args).item())


def test_scalar_overflow_checks_skip_traced_values():
    """The Scalar overflow checks read Python numbers only: under compile the ops still run."""
    def f(x, m):
        return x.clamp(-1, 1).masked_fill(m, 2.0) + torchish.where(m, x, 3.0) + x.pow(2)

    args = (torchish.tensor([0.5, -2.0]), torchish.tensor([True, False]))
    assert torchish.compile(f)(*args).tolist() == f(*args).tolist()


@pytest.mark.skipif(torch is None, reason="needs PyTorch (the oracle)")
def test_requires_grad_takes_only_a_bool():
    import numpy as np

    def outcomes(T):
        x = T.ones(2)
        calls = [lambda: x.requires_grad_(1), lambda: x.requires_grad_(None),
                 lambda: x.requires_grad_(requires_grad=0), lambda: x.requires_grad_(np.bool_(1)),
                 lambda: x.requires_grad_(True, True), lambda: x.requires_grad_(foo=True),
                 lambda: x.requires_grad_(T.tensor(True)), lambda: setattr(x, "data", [1.0]),
                 lambda: setattr(x, "requires_grad", 1), lambda: x.requires_grad_(),
                 lambda: x.requires_grad_(requires_grad=False)]
        out = []
        for call in calls:
            try:
                call()
                out.append(x.requires_grad)
            except (TypeError, RuntimeError) as e:
                out.append((type(e).__name__, str(e)))
        return out
    assert outcomes(torchish) == outcomes(torch)

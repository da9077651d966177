"""`torch._dynamo.eval_frame`: scripts test `isinstance(model, OptimizedModule)` to unwrap
`_orig_mod`."""
from .._compile import _optimized_module_class

OptimizedModule = _optimized_module_class()

"""The format layer of `torchish.serialization`, on NumPy only (no torchish, no torch).

* `format`: the dtypes a checkpoint stores and their bytes, the legacy format's magic numbers.
* `records`: `TensorRecord` (a tensor as a checkpoint stores it), stand-ins for PyTorch globals,
  `LoadedStorage` and `RecordBackend` (what reading builds).
* `writer`: `write_checkpoint`, the zip layout `torch.save` writes and the legacy format.
* `allowlist`: the globals a weights-only load may name (PyTorch's, plus the user's).
* `unpickler`: the weights-only pickle interpreter.
* `reader`: `read_checkpoint` for zip and legacy files, and the errors `torch.load` raises.
"""

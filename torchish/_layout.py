"""`torch.layout` and its values. Tensors are strided (dense), or sparse COO (`_sparse_coo.py`);
the other sparse layouts exist as names so that code comparing or passing them keeps working."""

__all__ = ["layout", "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
           "sparse_bsc", "jagged"]

from ._dtype import missing_attribute, read_only


class layout:
    __slots__ = ("_name",)

    def __init__(self, name):
        object.__setattr__(self, "_name", name)

    __getattr__ = missing_attribute("torch.layout")
    __setattr__ = read_only("torch.layout")

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):  # pickles as the same object (torch.save of a layout)
        return self._name


layout.__module__ = "torch"
strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")

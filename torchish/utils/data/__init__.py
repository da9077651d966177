"""``torchish.utils.data``: datasets, samplers and the ``DataLoader`` (as ``torch.utils.data``)."""

from .dataloader import (
    DataLoader,
    WorkerInfo,
    _DatasetKind,
    default_collate,
    default_convert,
    get_worker_info,
)
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler,
    DistributedSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)
from . import _collate, _utils, distributed  # noqa: F401 (attributes, as in PyTorch)

__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "StackDataset",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate",
    "default_convert",
    "get_worker_info",
    "random_split",
]


from ..._unsupported import module_getattr as _module_getattr  # noqa: E402

__getattr__ = _module_getattr(__name__)

"""``torchish.utils.tensorboard``: write TensorBoard event files (scalars, histograms, text,
images, audio, hparams) without the tensorboard or protobuf packages."""
from ._event_file import RecordWriter
from .writer import FileWriter, SummaryWriter

__all__ = ["FileWriter", "RecordWriter", "SummaryWriter"]

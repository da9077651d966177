"""SummaryWriter: PyTorch's TensorBoard logging API, writing event files with no dependency
on the tensorboard or protobuf packages."""
import os
import socket
import time
from datetime import datetime

from ..._unsupported import UnsupportedError
from . import _proto as pb
from . import summary as _summary
from ._convert import figure_to_image, make_np
from ._event_file import EventFileWriter

__all__ = ["FileWriter", "SummaryWriter"]


def _unsupported(what, why):
    return UnsupportedError(f"torch.utils.tensorboard.SummaryWriter.{what} is not supported "
                            f"by torchish yet ({why})")


class FileWriter:
    """Wraps summaries into Events and writes them to one event file in `log_dir`."""

    def __init__(self, log_dir, max_queue=10, flush_secs=120, filename_suffix=""):
        log_dir = str(log_dir)  # a pathlib.Path is fine too
        self.event_writer = EventFileWriter(log_dir, max_queue, flush_secs, filename_suffix)

    def get_logdir(self):
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None):
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None):
        self.add_event(pb.Event(summary=summary), global_step, walltime)

    def flush(self):
        self.event_writer.flush()

    def close(self):
        self.event_writer.close()


class SummaryWriter:
    """Logs scalars, histograms, text, images, audio and hparams for TensorBoard.

    `log_dir` defaults to `runs/<Mon>DD_HH-MM-SS_<hostname><comment>`. Events are buffered and
    reach the file every `max_queue` events, `flush_secs` seconds, on flush() and on close().
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10,
                 flush_secs=120, filename_suffix=""):
        if not log_dir:
            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_"
                                   + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        # TensorBoard's default histogram edges: +-1e-12 growing by 10% up to 1e20, and 0
        v, edges = 1e-12, []
        while v < 1e20:
            edges.append(v)
            v *= 1.1
        self.default_bins = [-e for e in reversed(edges)] + [0] + edges

    def _get_file_writer(self):
        """The writer of the main event file, (re)created after close()."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # TensorBoard hides events at or after this step that an earlier run wrote
                self.file_writer.add_event(
                    pb.Event(step=self.purge_step, file_version="brain.Event:2"))
                self.file_writer.add_event(pb.Event(
                    step=self.purge_step, session_log=pb.SessionLog(status=pb.SESSION_START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def _add(self, summary, global_step=None, walltime=None):
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None,
                    run_name=None, global_step=None):
        """Log hyperparameters and metrics for the HParams dashboard, into a sub-run
        `<log_dir>/<run_name>` (default: the current time)."""
        if type(hparam_dict) is not dict or type(metric_dict) is not dict:
            raise TypeError("hparam_dict and metric_dict should be dictionary.")
        exp, ssi, sei = _summary.hparams(hparam_dict, metric_dict, hparam_domain_discrete)
        if not run_name:
            run_name = str(time.time())
        logdir = os.path.join(self._get_file_writer().get_logdir(), run_name)
        with SummaryWriter(log_dir=logdir) as w_hp:
            for s in (exp, ssi, sei):
                w_hp.file_writer.add_summary(s, global_step)
            for k, v in metric_dict.items():
                w_hp.add_scalar(k, v, global_step)

    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        self._add(_summary.scalar(tag, scalar_value, new_style=new_style,
                                  double_precision=double_precision), global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """One scalar per key, each in its own run directory
        `<log_dir>/<main_tag with '/'->'_'>_<key>`, all under the tag `main_tag`."""
        walltime = time.time() if walltime is None else walltime
        fw_logdir = self._get_file_writer().get_logdir()
        for tag, scalar_value in tag_scalar_dict.items():
            fw_tag = fw_logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = self.all_writers.get(fw_tag)
            if fw is None:
                fw = FileWriter(fw_tag, self.max_queue, self.flush_secs, self.filename_suffix)
                self.all_writers[fw_tag] = fw
            fw.add_summary(_summary.scalar(main_tag, scalar_value), global_step, walltime)

    def add_tensor(self, tag, tensor, global_step=None, walltime=None):
        self._add(_summary.tensor_proto(tag, tensor), global_step, walltime)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None,
                      max_bins=None):
        """`bins` is 'tensorflow' (TensorBoard's exponential buckets) or anything
        numpy.histogram accepts ('auto', 'fd', an int, edges)."""
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._add(_summary.histogram(tag, values, bins, max_bins=max_bins), global_step,
                  walltime)

    def add_histogram_raw(self, tag, min, max, num, sum, sum_squares, bucket_limits,
                          bucket_counts, global_step=None, walltime=None):
        if len(bucket_limits) != len(bucket_counts):
            raise ValueError("len(bucket_limits) != len(bucket_counts), see the document.")
        self._add(_summary.histogram_raw(tag, min, max, num, sum, sum_squares, bucket_limits,
                                         bucket_counts), global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """Log an image (float in [0, 1] or uint8 in [0, 255]) as PNG."""
        self._add(_summary.image(tag, img_tensor, dataformats=dataformats), global_step,
                  walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None,
                   dataformats="NCHW"):
        """Log a batch of images, tiled 8 per row into one PNG."""
        self._add(_summary.image(tag, img_tensor, dataformats=dataformats), global_step,
                  walltime)

    def add_image_with_boxes(self, tag, img_tensor, box_tensor, global_step=None,
                             walltime=None, rescale=1, dataformats="CHW", labels=None):
        raise _unsupported("add_image_with_boxes", "drawing boxes and labels needs a font "
                                                   "renderer")

    def add_figure(self, tag, figure, global_step=None, close=True, walltime=None):
        """Render matplotlib figure(s) (matplotlib needed) and log them as an image."""
        formats = "NCHW" if isinstance(figure, list) else "CHW"
        self.add_image(tag, figure_to_image(figure, close), global_step, walltime,
                       dataformats=formats)

    def add_video(self, tag, vid_tensor, global_step=None, fps=4, walltime=None):
        raise _unsupported("add_video", "it needs a GIF encoder")

    def add_audio(self, tag, snd_tensor, global_step=None, sample_rate=44100, walltime=None):
        """Log a mono clip with values in [-1, 1] as 16-bit WAV."""
        self._add(_summary.audio(tag, snd_tensor, sample_rate=sample_rate), global_step,
                  walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        self._add(_summary.text(tag, text_string), global_step, walltime)

    def add_onnx_graph(self, prototxt):
        raise _unsupported("add_onnx_graph", "no ONNX graph reader")

    def add_graph(self, model, input_to_model=None, verbose=False, use_strict_trace=True):
        raise _unsupported("add_graph", "it needs torch.jit.trace")

    def add_embedding(self, mat, metadata=None, label_img=None, global_step=None,
                      tag="default", metadata_header=None):
        raise _unsupported("add_embedding", "no projector config writer")

    def add_pr_curve(self, tag, labels, predictions, global_step=None, num_thresholds=127,
                     weights=None, walltime=None):
        labels, predictions = make_np(labels), make_np(predictions)
        self._add(_summary.pr_curve(tag, labels, predictions, num_thresholds, weights),
                  global_step, walltime)

    def add_pr_curve_raw(self, tag, true_positive_counts, false_positive_counts,
                         true_negative_counts, false_negative_counts, precision, recall,
                         global_step=None, num_thresholds=127, weights=None, walltime=None):
        self._add(_summary.pr_curve_raw(tag, true_positive_counts, false_positive_counts,
                                        true_negative_counts, false_negative_counts,
                                        precision, recall, num_thresholds, weights),
                  global_step, walltime)

    def add_custom_scalars_multilinechart(self, tags, category="default", title="untitled"):
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(self, tags, category="default", title="untitled"):
        if len(tags) != 3:
            raise AssertionError(f"Expected 3 tags, got {len(tags)}.")
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    def add_custom_scalars(self, layout):
        self._add(_summary.custom_scalars(layout))

    def add_mesh(self, tag, vertices, colors=None, faces=None, config_dict=None,
                 global_step=None, walltime=None):
        raise _unsupported("add_mesh", "no mesh plugin metadata writer")

    def flush(self):
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        if self.all_writers is None:
            return  # closing twice is fine
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()

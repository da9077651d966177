"""TaskSpec (what was timed), Measurement (the times and their summary) and the unit and
significant-figure helpers behind their printing, as in `torch.utils.benchmark`.

The summaries are plain float64 arithmetic (NumPy's linear-interpolation quantiles, as
`Tensor.quantile`); the unit and digit choices are made in float32, as PyTorch makes them on
`torch.tensor(x)`, so that the same times print the same way.
"""
import collections
import contextlib
import dataclasses
import math
import textwrap

import numpy as np

import torchish as torch

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig",
           "ordered_unique", "set_torch_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9   # 25 ns
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


def _f32(x):
    return np.float32(x)


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """The description of a timed task: what ran, and how it is labelled."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        """The heading of a Measurement's printout."""
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        sub = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self):
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        """Title, description and setup, a multi-line section followed by a blank line."""
        parts = [p for p in (self.title, self.description or "", self.setup_str()) if p]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """The times of `number_per_run` runs each (`raw_times`) of one task, summarized."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None   # for the user

    def __post_init__(self):
        self._sorted_times = ()
        self._warnings = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name):
        # the TaskSpec's fields read as the Measurement's own (m.label, m.num_threads, ...)
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        return super().__getattribute__(name)

    @property
    def times(self):
        """The time of one run, for each measurement."""
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self):
        self._lazy_init()
        return self._median

    @property
    def mean(self):
        self._lazy_init()
        return self._mean

    @property
    def iqr(self):
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self):
        """Digits of the median that the spread of the middle half of the times supports."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = np.asarray(self._sorted_times[n // 4:int(math.ceil(_f32(3 * n / 4)))],
                            dtype=np.float32)
        std = float(middle.std())
        ci = max(1.645 * std / float(np.sqrt(_f32(len(middle)))), _MIN_CONFIDENCE_INTERVAL)
        figures = int(np.floor(_f32(np.log10(_f32(self._median / ci)))))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self):
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self):
        if not self.raw_times or self._sorted_times:
            return
        self._sorted_times = tuple(sorted(self.times))
        times = np.asarray(self._sorted_times, dtype=np.float64)
        self._median = float(np.quantile(times, 0.5))
        self._mean = float(times.mean())
        self._p25 = float(np.quantile(times, 0.25))
        self._p75 = float(np.quantile(times, 0.75))
        for threshold, note in ((_IQR_GROSS_WARN_THRESHOLD,
                                 "This suggests significant environmental influence."),
                                (_IQR_WARN_THRESHOLD, "This could indicate system fluctuation.")):
            if not self.meets_confidence(threshold):
                spread = self.iqr / self.median * 100
                self._warnings += (f"  WARNING: Interquartile range is {spread:.1f}% of the "
                                   f"median measurement.\n           {note}",)
                break

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    @property
    def title(self):
        return self.task_spec.title

    @property
    def env(self):
        # PyTorch's property fails over to the TaskSpec field: `env` is the spec's env
        return self.task_spec.env

    @property
    def as_row_name(self):
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize()]
        lines.append(f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}")
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} "
                         f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})")
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        if n > 1:
            lines.append(f"  {n} measurements, {self.number_per_run} runs per measurement, "
                         f"{threads}")
        else:
            lines.append(f"  {n} measurement, {self.number_per_run} runs , {threads}")
        lines.append("\n".join(self._warnings))
        return "\n".join("\n".join(lines).strip().splitlines())

    @staticmethod
    def merge(measurements):
        """One Measurement per distinct TaskSpec, pooling the per-run times."""
        groups = collections.defaultdict(list)
        for m in measurements:
            groups[m.task_spec].extend(m.times)
        return [Measurement(number_per_run=1, raw_times=times, task_spec=spec, metadata=None)
                for spec, times in groups.items()]


def select_unit(t):
    """The unit ("ns", "us", "ms" or "s") a time of t seconds prints in, and its scale."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(np.log10(_f32(t)) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u):
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """`x` rounded to `n` significant figures (in float32, as PyTorch computes it)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = int(np.ceil(np.log10(np.abs(_f32(x)))))
    scale = 10 ** (magnitude - n)
    return float(np.round(_f32(x / scale)) * _f32(scale))


def ordered_unique(elements):
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n):
    from .... import _functions
    # restore torchish's "was it ever set" flag too: timing must not change which kernel
    # behaviours (and error messages) the intra-op thread count selects
    was_set = getattr(_functions, "_threads_set", None)
    prior, prior_set = torch.get_num_threads(), was_set and was_set[0]
    try:
        torch.set_num_threads(n)
        yield
    finally:
        torch.set_num_threads(prior)
        if was_set is not None:
            was_set[0] = prior_set

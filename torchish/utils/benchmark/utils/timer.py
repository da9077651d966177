"""Timer: `timeit` for torchish code, returning Measurements, as `torch.utils.benchmark`.

Only Python statements are timed (PyTorch's C++ timing compiles the statement against
libtorch). torchish ops dispatch asynchronously to XLA; as PyTorch's timer synchronizes an
accelerator before reading the clock, this one synchronizes torchish's.
"""
import enum
import textwrap
import timeit

import torchish as torch
from ...._unsupported import UnsupportedError
from . import common

__all__ = ["Timer", "timer", "Language"]


def timer():
    """The default clock: `timeit.default_timer` after the accelerator has caught up."""
    if torch.accelerator.is_available():
        torch.accelerator.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _clean(code):
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()


class Timer:
    """Times `stmt` (run after `setup`, with `globals`) and reports Measurements.

    `label`, `sub_label`, `description` and `env` only name the result (see `Compare`);
    `num_threads` is the intra-op thread count set while timing.
    """

    _timer_cls = timeit.Timer

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise UnsupportedError("torch.utils.benchmark.Timer(language='c++') is not "
                                   "supported by torchish yet")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                             "this code can simply be moved to `setup`.")
        self._language = Language.PYTHON
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", torch)
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = self._timer_cls(stmt=stmt, setup=setup, timer=timer,
                                      globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                          label=label, sub_label=sub_label,
                                          description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number):
        # a zero time would break the ratios below
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """Time `number` runs of `stmt` (after a warm-up of number // 100 runs, at least 2)."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return common.Measurement(number_per_run=number,
                                      raw_times=[self._timeit(number=number)],
                                      task_spec=self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measure(self, number, stop, min_run_time, max_run_time=None, callback=None):
        """Blocks of `number` runs until `min_run_time` is spent and `stop(times)` agrees
        (or `max_run_time` is spent)."""
        times, total, done = [], 0.0, False
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not done:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                done = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time):
        """Runs per block: enough for the timer's overhead to vanish (1e-4 of a block) and a
        block to last min_run_time / 1000, without one block exceeding min_run_time."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = float(sorted(self._timeit(0) for _ in range(5))[2])
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of a size chosen once, repeated for at least `min_run_time` seconds."""
        number = self._estimate_block_size(min_run_time)
        times = self._measure(number, lambda times: True, min_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Blocks until the IQR is under `threshold` of the median (at least 4 blocks and
        `min_run_time`; at most `max_run_time`)."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times):
            return len(times) > 3 and common.Measurement(
                number_per_run=number, raw_times=times,
                task_spec=self._task_spec).meets_confidence(threshold=threshold)

        times = self._measure(number, stop, min_run_time, max_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def collect_callgrind(self, number=100, *, repeats=None, collect_baseline=True,
                          retain_out_file=False):
        raise UnsupportedError("torch.utils.benchmark.Timer.collect_callgrind is not "
                               "supported by torchish yet")

"""`torch.profiler` (and `torch.autograd.profiler`): a CPU profiler of torchish's own dispatch.

While a `profile` records, every computed op is an event `aten::<name>` (its wall time,
including the wait for its result when JAX runs it synchronously) nested in the
`record_function` ranges around it. `key_averages().table()` prints PyTorch's table,
`export_chrome_trace` writes the Chrome trace format. The times are torchish's, so they differ
from PyTorch's; XLA's own device-level profile is `jax.profiler`.
"""
import enum
import functools
import json
import os
import threading
import time

__all__ = ["profile", "record_function", "schedule", "ProfilerAction", "ProfilerActivity",
           "tensorboard_trace_handler", "supported_activities", "itt"]

ACTIVE = [None]      # the recording profile, read by the dispatcher per op
_local = threading.local()


class ProfilerActivity(enum.Enum):
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5

    def __repr__(self):
        return f"<ProfilerActivity.{self.name}: {self.value}>"


def supported_activities():
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """Which action a step takes: `skip_first` steps off, then cycles of `wait` steps off,
    `warmup` steps warming up and `active` steps recorded, the last saving; `repeat` cycles
    (0: forever). `skip_first_wait` skips the wait of the first cycle."""
    if warmup == 0:
        import warnings
        warnings.warn("Profiler won't be using warmup, this can skew profiler results")
    cycle = wait + warmup + active

    def action(step):
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        at = step % cycle
        if at < wait:
            return ProfilerAction.NONE
        if at < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if at < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return action


class FunctionEvent:
    """One recorded op or range (times in microseconds, as PyTorch's)."""

    def __init__(self, name, start, input_shapes=None, kind="cpu_op"):
        self.name = self.key = name
        self.start_us = start
        self.end_us = start
        self.input_shapes = input_shapes or []
        self.kind = kind
        self.thread = threading.get_ident()
        self.cpu_children = []
        self.cpu_parent = None
        self.count = 1

    @property
    def cpu_time_total(self):
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    cpu_time = cpu_time_total
    device_time_total = self_device_time_total = cuda_time_total = 0.0
    cpu_memory_usage = self_cpu_memory_usage = device_memory_usage = 0

    def __repr__(self):
        return (f"<FunctionEvent name={self.name} cpu_time={_fmt(self.cpu_time_total)} "
                f"self_cpu_time={_fmt(self.self_cpu_time_total)}>")


class FunctionEventAvg:
    """The events of one name (and input shapes, when grouped by them), summed."""

    def __init__(self, key, input_shapes=None):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    def add(self, event):
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        return self

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)

    device_time_total = self_device_time_total = cuda_time_total = 0.0
    cpu_memory_usage = self_cpu_memory_usage = device_memory_usage = 0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_fmt(self.self_cpu_time_total)}"
                f" cpu_time={_fmt(self.cpu_time)} input_shapes={self.input_shapes}>")


class EventList(list):
    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        groups = {}
        for e in self:
            key = (e.key, str(e.input_shapes)) if group_by_input_shape else e.key
            if key not in groups:
                groups[key] = FunctionEventAvg(e.key, e.input_shapes if group_by_input_shape
                                               else None)
            groups[key].add(e)
        return EventList(groups.values())

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        return _table(self, sort_by, row_limit, max_name_column_width, header)

    def export_chrome_trace(self, path):
        events = [{"ph": "X", "cat": getattr(e, "kind", "cpu_op"), "name": e.name,
                   "pid": os.getpid(), "tid": getattr(e, "thread", 0),
                   "ts": getattr(e, "start_us", 0), "dur": e.cpu_time_total,
                   "args": {"Input Dims": getattr(e, "input_shapes", [])}} for e in self]
        with open(path, "w") as f:
            json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)

    def total_average(self):
        total = FunctionEventAvg("Total")
        for e in self:
            total.count += e.count
            total.cpu_time_total += e.cpu_time_total
            total.self_cpu_time_total += e.self_cpu_time_total
        return total


def _fmt(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


_SORT_KEYS = {"cpu_time", "cpu_time_total", "self_cpu_time_total", "count",
              "cpu_memory_usage", "self_cpu_memory_usage", "device_time_total",
              "self_device_time_total", "cuda_time_total", "self_cuda_time_total",
              "device_memory_usage", "cuda_memory_usage", "self_device_memory_usage",
              "self_cuda_memory_usage", "cpu_time_avg"}


def _table(events, sort_by, row_limit, name_width, header):
    rows = list(events)
    if sort_by is not None:
        if sort_by not in _SORT_KEYS:
            raise AttributeError(f"'FunctionEventAvg' object has no attribute '{sort_by}'")
        key = "cpu_time" if sort_by == "cpu_time_avg" else sort_by
        rows.sort(key=lambda e: getattr(e, key, 0), reverse=True)
    if row_limit is not None and row_limit > 0:
        rows = rows[:row_limit]
    total = sum(e.self_cpu_time_total for e in events) or 1.0
    width = max([len("Name")] + [min(len(e.key), name_width) for e in rows]) + 2
    heads = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
             "# of Calls"]
    line = "-" * width + "  " + "  ".join("-" * 12 for _ in heads) + "  "
    out = [] if header is None else [header]
    out += [line, "Name".rjust(width) + "  " + "  ".join(h.rjust(12) for h in heads) + "  ",
            line]
    for e in rows:
        name = e.key if len(e.key) <= name_width else e.key[:name_width - 3] + "..."
        cells = [f"{100 * e.self_cpu_time_total / total:.2f}%", _fmt(e.self_cpu_time_total),
                 f"{100 * e.cpu_time_total / total:.2f}%", _fmt(e.cpu_time_total),
                 _fmt(e.cpu_time_total / max(e.count, 1)), str(e.count)]
        out.append(name.rjust(width) + "  " + "  ".join(c.rjust(12) for c in cells) + "  ")
    out += [line, f"Self CPU time total: {_fmt(sum(e.self_cpu_time_total for e in events))}",
            ""]
    return "\n".join(out)


def _now_us():
    return time.perf_counter_ns() / 1e3


class profile:
    """Context manager recording torchish ops and `record_function` ranges (CPU)."""

    def __init__(self, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None,
                 execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, enabled=True):
        self.activities = set(activities) if activities else supported_activities()
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.with_modules = with_modules
        self.enabled = enabled
        self.step_num = 0
        self._events = EventList()
        self._stack = []
        self._recording = False

    # -- lifecycle --
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    def _action(self):
        return self.schedule(self.step_num) if self.schedule else ProfilerAction.RECORD

    def start(self):
        self.current_action = self._action()
        self._set_recording(self.current_action)

    def stop(self):
        if self._recording and self.on_trace_ready is not None:
            self.on_trace_ready(self)
        self._set_recording(ProfilerAction.NONE)

    def step(self):
        """Advance the schedule: a window that ends saves (`on_trace_ready`), one that starts
        clears the events (the last window's stay readable after the profile)."""
        previous = self.current_action
        self.step_num += 1
        self.current_action = self._action()
        if previous is ProfilerAction.RECORD_AND_SAVE and self.on_trace_ready is not None:
            self.on_trace_ready(self)
        if previous in (ProfilerAction.NONE, ProfilerAction.RECORD_AND_SAVE) and \
                self.current_action is not ProfilerAction.NONE:
            self._events = EventList()
        self._set_recording(self.current_action)

    def _set_recording(self, action):
        on = self.enabled and action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        self._recording = on
        ACTIVE[0] = self if on else (None if ACTIVE[0] is self else ACTIVE[0])

    # -- events --
    def _open(self, name, shapes=None, kind="user_annotation"):
        event = FunctionEvent(name, _now_us(), shapes if self.record_shapes else None, kind)
        if self._stack:
            event.cpu_parent = self._stack[-1]
            self._stack[-1].cpu_children.append(event)
        self._stack.append(event)
        self._events.append(event)
        return event

    def _close(self, event):
        event.end_us = _now_us()
        if self._stack and self._stack[-1] is event:
            self._stack.pop()

    # -- results --
    def events(self):
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self._events.key_averages(group_by_input_shape)

    def export_chrome_trace(self, path):
        self._events.export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        with open(path, "w") as f:
            for e in self._events:
                f.write(f"{e.name} {int(getattr(e, metric))}\n")

    def export_memory_timeline(self, path, device=None):
        raise RuntimeError("torchish's profiler does not record memory")

    @property
    def profiler(self):
        return self

    def table(self, *args, **kwargs):
        return self.key_averages().table(*args, **kwargs)


def op_event(name, operands):
    """Open the event of one dispatched op (the dispatcher closes it with `close`);
    `operands()` gives its operand values, asked only when shapes are recorded."""
    prof = ACTIVE[0]
    shapes = [list(x.shape) if hasattr(x, "shape") else [] for x in operands()] \
        if prof.record_shapes else None
    return prof._open("aten::" + name, shapes, "cpu_op")


def close(event):
    prof = ACTIVE[0]
    if prof is not None:
        prof._close(event)


class record_function:
    """A named range in the profile (context manager or decorator)."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self._event = None

    def __enter__(self):
        prof = ACTIVE[0]
        if prof is not None:
            self._event = prof._open(self.name)
        return self

    def __exit__(self, *exc):
        if self._event is not None:
            close(self._event)
            self._event = None

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)
        return run


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An `on_trace_ready` writing each trace as Chrome JSON into `dir_name`."""
    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{os.uname().nodename}_{os.getpid()}"
        name = f"{worker}.{time.time_ns() // 1000000}.pt.trace.json"
        path = os.path.join(dir_name, name)
        prof.export_chrome_trace(path)
        if use_gzip:
            import gzip
            import shutil
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.remove(path)
    return handler


class _Itt:
    @staticmethod
    def is_available():
        return False

    @staticmethod
    def range_push(msg):
        pass

    @staticmethod
    def range_pop():
        pass

    @staticmethod
    def mark(msg):
        pass


itt = _Itt()

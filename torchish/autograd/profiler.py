"""`torch.autograd.profiler`: the legacy spelling of `torch.profiler` (same recorder)."""
import contextlib

from ..profiler import (EventList, FunctionEvent, FunctionEventAvg,  # noqa: F401
                        profile as _profile, record_function)


class profile(_profile):
    """`torch.autograd.profiler.profile(enabled=True, use_cuda=False, record_shapes=False,
    ...)`: records while its context is active."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        super().__init__(record_shapes=record_shapes, profile_memory=profile_memory,
                         with_stack=with_stack, with_flops=with_flops,
                         with_modules=with_modules, enabled=enabled)

    @property
    def function_events(self):
        return self.events()

    def self_cpu_time_total(self):
        return self.events().self_cpu_time_total


def emit_nvtx(enabled=True, record_shapes=False):
    return contextlib.nullcontext()


def emit_itt(enabled=True, record_shapes=False):
    return contextlib.nullcontext()

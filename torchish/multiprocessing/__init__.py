"""`torch.multiprocessing`: Python's multiprocessing with PyTorch's additions (`spawn`,
sharing strategies). Tensors hold JAX arrays, which pickle by value: a tensor sent to another
process is a copy there (PyTorch shares CPU tensors' memory); `Tensor.share_memory_()` is
accepted and changes nothing."""
import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403 - the same names as PyTorch re-exports

__all__ = ["spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
           "ProcessExitedException", "set_sharing_strategy", "get_sharing_strategy",
           "get_all_sharing_strategies"] + multiprocessing.__all__

_STRATEGIES = {"file_descriptor", "file_system"} if sys.platform != "darwin" else {"file_system"}
_strategy = ["file_descriptor" if sys.platform != "darwin" else "file_system"]


def set_sharing_strategy(new_strategy):
    if new_strategy not in _STRATEGIES:
        raise AssertionError()
    _strategy[0] = new_strategy


def get_sharing_strategy():
    return _strategy[0]


def get_all_sharing_strategies():
    return set(_STRATEGIES)


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised: `msg` carries its traceback."""


class ProcessExitedException(ProcessException):
    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:  # noqa: BLE001 - sent to the parent, which raises it
        import traceback
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """True once every process has finished; raises for the first that failed."""
        for i, process in enumerate(self.processes):
            process.join(timeout)
            if process.exitcode is None:
                return False
            if process.exitcode != 0:
                for other in self.processes:
                    if other.is_alive():
                        other.terminate()
                if not self.error_queues[i].empty():
                    trace = self.error_queues[i].get()
                    raise ProcessRaisedException(
                        f"\n\n-- Process {i} terminated with the following error:\n{trace}",
                        i, process.pid)
                raise ProcessExitedException(
                    f"process {i} terminated with exit code {process.exitcode}", i,
                    process.pid, process.exitcode)
        return True


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    ctx = multiprocessing.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        queue = ctx.SimpleQueue()
        process = ctx.Process(target=_wrap, args=(fn, i, args, queue), daemon=daemon)
        process.start()
        processes.append(process)
        queues.append(queue)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run `fn(i, *args)` in `nprocs` new processes (i = 0 .. nprocs - 1)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)

"""``DataLoader``: iterate a dataset in (shuffled, collated) batches, optionally with workers.

Same arguments, validation, sampler/batching rules and random-number use as PyTorch 2.13's
``torch.utils.data.DataLoader``: each ``iter(loader)`` draws the workers' base seed as
``torchish.empty((), dtype=int64).random_(generator=loader.generator)`` *before* the sampler
draws its own seed on the first ``next()``, exactly like PyTorch, so for the same
``torchish.manual_seed`` the shuffled batches are PyTorch's.

Workers (``num_workers > 0``) are **threads**, not processes: JAX is multithreaded, so forking
a process that holds JAX state is unsafe, and threads need no pickling of the dataset or of the
batches. The main thread keeps PyTorch's scheme -- one index queue per worker, tasks handed out
round-robin, at most ``prefetch_factor * num_workers`` in flight, results re-ordered -- so the
batches come out in the same order as with ``num_workers=0``. Consequences of threads:

* every worker sees the *same* dataset object (PyTorch gives each process a copy); an
  ``IterableDataset`` still gets one ``iter()`` per worker, so shard it with
  :func:`get_worker_info` as in PyTorch;
* torchish's default generator is per worker, as in a worker process: in a worker thread
  ``torchish.randn`` & co., ``manual_seed`` (in a ``worker_init_fn``) and ``initial_seed`` use
  the worker's own generator, seeded ``base_seed + id`` as PyTorch seeds a worker, so a
  dataset's random augmentations draw PyTorch's numbers and leave the main thread's stream
  alone. Python's ``random`` and NumPy's global state are shared and not re-seeded; their
  per-worker counterparts seeded as PyTorch seeds them (``random.Random(seed)`` and a NumPy
  ``RandomState`` with PyTorch's worker NumPy seed) are ``get_worker_info().rng``;
* ``get_worker_info().worker_method`` is ``"thread"``; ``multiprocessing_context`` is validated
  and otherwise ignored; ``pin_memory`` is accepted and a no-op (JAX does its own host-to-device
  transfers); the speed-up comes from work that releases the GIL (I/O, NumPy, JAX).
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import os
import queue
import random
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from . import _collate
from ...random import set_worker_generator
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "WorkerInfo", "default_collate", "default_convert", "get_worker_info"]

_T_co = TypeVar("_T_co", covariant=True)

default_collate = _collate.default_collate
default_convert = _collate.default_convert

# how often a blocked main thread checks that its workers are still alive (seconds)
MP_STATUS_CHECK_INTERVAL = 5.0


def _torch():
    import torchish

    return torchish


# --------------------------------------------------------------------------- worker side

@dataclass(frozen=True, slots=True)
class _RNG:
    """Per-worker generators (the global ones are shared between worker threads)."""

    random_generator: random.Random
    torch_generator: Any
    numpy_generator: Any = None


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What :func:`get_worker_info` returns inside a worker."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    rng: _RNG | None = None
    worker_method: str | None = "thread"


_worker_local = threading.local()


def get_worker_info() -> WorkerInfo | None:
    """The current worker's :class:`WorkerInfo`, or ``None`` outside DataLoader workers."""
    return getattr(_worker_local, "info", None)


def _generate_state(base_seed: int, worker_id: int) -> list[int]:
    """The 4 x uint32 NumPy seed PyTorch gives worker ``worker_id`` (NumPy's SeedSequence
    hashing applied to ``[worker_id, base_seed lo, base_seed hi, 0]``)."""
    mask32 = 0xFFFFFFFF
    mult_a, mult_b = 0x931E8875, 0x58F38DED
    mix_l, mix_r = 0xCA01F9DD, 0x4973F715
    shift = 16
    hash_const = [0x43B0D7E5]

    def hash32(value):
        value = (value ^ hash_const[0]) & mask32
        hash_const[0] = (hash_const[0] * mult_a) & mask32
        value = (value * hash_const[0]) & mask32
        return (value ^ (value >> shift)) & mask32

    def mix(x, y):
        result = (((mix_l * x) & mask32) - ((mix_r * y) & mask32)) & mask32
        return (result ^ (result >> shift)) & mask32

    entropy = [worker_id, base_seed & mask32, base_seed >> 32, 0]
    pool = [hash32(e) for e in entropy]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash32(pool[i_src]))

    const_b = 0x8B51F9DD
    state = []
    for value in pool:
        value = (value ^ const_b) & mask32
        const_b = (const_b * mult_b) & mask32
        value = (value * const_b) & mask32
        state.append((value ^ (value >> shift)) & mask32)
    return state


class _DatasetKind:
    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        cls = _MapDatasetFetcher if kind == _DatasetKind.Map else _IterableDatasetFetcher
        return cls(dataset, auto_collation, collate_fn, drop_last)


class _MapDatasetFetcher:
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset = dataset
        self.auto_collation = auto_collation
        self.collate_fn = collate_fn
        self.drop_last = drop_last

    def fetch(self, possibly_batched_index):
        if self.auto_collation:
            if hasattr(self.dataset, "__getitems__") and self.dataset.__getitems__:
                data = self.dataset.__getitems__(possibly_batched_index)
            else:
                data = [self.dataset[idx] for idx in possibly_batched_index]
        else:
            data = self.dataset[possibly_batched_index]
        return self.collate_fn(data)


class _IterableDatasetFetcher(_MapDatasetFetcher):
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, possibly_batched_index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in possibly_batched_index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(possibly_batched_index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


class _InfiniteConstantSampler(Sampler):
    """The index "sampler" of an IterableDataset: the dataset decides when to stop."""

    def __iter__(self):
        while True:
            yield None


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    seed: int | None = None


class _WorkerError:
    """An exception raised in a worker, re-raised in the main thread."""

    def __init__(self, exc: BaseException, worker_id: int):
        self.exc = exc
        self.worker_id = worker_id

    def reraise(self):
        note = f"(raised in DataLoader worker thread {self.worker_id})"
        if hasattr(self.exc, "add_note") and note not in getattr(self.exc, "__notes__", ()):
            self.exc.add_note(note)
        raise self.exc


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers):
    init_exception = None
    fetcher = None
    try:
        import numpy as np

        torch = _torch()
        seed = base_seed + worker_id
        torch_generator = torch.Generator()
        torch_generator.manual_seed(seed)
        set_worker_generator(torch_generator)
        rng = _RNG(random.Random(seed), torch_generator,
                   np.random.RandomState(_generate_state(base_seed, worker_id)))
        _worker_local.info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                        dataset=dataset, rng=rng, worker_method="thread")
        if init_fn is not None:
            init_fn(worker_id)
        fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                              collate_fn, drop_last)
    except Exception as e:  # reported with the first batch this worker is asked for
        init_exception = _WorkerError(e, worker_id)

    iteration_end = False
    while True:
        r = index_queue.get()
        if isinstance(r, _ResumeIteration):
            # persistent workers: a new epoch starts
            data_queue.put((r, None))
            iteration_end = False
            if init_exception is None:
                try:
                    fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation,
                                                          collate_fn, drop_last)
                except Exception as e:
                    init_exception = _WorkerError(e, worker_id)
            continue
        if r is None:
            break
        if done_event.is_set() or iteration_end:
            continue
        idx, index = r
        if init_exception is not None:
            data = init_exception  # every request fails the same way: there is no fetcher
        else:
            try:
                data = fetcher.fetch(index)
            except Exception as e:
                if isinstance(e, StopIteration) and dataset_kind == _DatasetKind.Iterable:
                    data = _IterableDatasetStopIteration(worker_id)
                    iteration_end = True
                else:
                    data = _WorkerError(e, worker_id)
        data_queue.put((idx, data))
        del data, idx, index, r  # don't keep the last batch alive while waiting


# --------------------------------------------------------------------------- DataLoader

def _accelerator_available() -> bool:
    try:
        import jax

        return jax.default_backend() != "cpu"
    except Exception:
        return False


class DataLoader(Generic[_T_co]):
    """Combines a dataset and a sampler into an iterable over (collated) batches.

    Arguments as in PyTorch: ``dataset, batch_size=1, shuffle=None, sampler=None,
    batch_sampler=None, num_workers=0, collate_fn=None, pin_memory=False, drop_last=False,
    timeout=0, worker_init_fn=None, multiprocessing_context=None, generator=None, *,
    prefetch_factor=None, persistent_workers=False, pin_memory_device='', in_order=True``.
    See the module docstring for how workers (threads) differ from PyTorch's processes.
    """

    __initialized = False

    def __init__(self, dataset: Dataset[_T_co], batch_size: int | None = 1,
                 shuffle: bool | None = None, sampler=None, batch_sampler=None,
                 num_workers: int = 0, collate_fn=None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *,
                 prefetch_factor: int | None = None, persistent_workers: bool = False,
                 pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; "
                "use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor "
                "to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            # the dataset itself decides the order of an IterableDataset
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler "
                    f"option, but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")

        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive "
                "with drop_last"
            )

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)

        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator

        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers

        self.__initialized = True
        self._IterableDataset_len_called = None  # len(loader) of an IterableDataset, if asked
        self._iterator = None

        self.check_worker_number_rationality()

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiWorkerDataLoaderIter(self)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context):
        # validated like PyTorch's, then unused: workers are threads
        if multiprocessing_context is not None:
            if self.num_workers > 0:
                if isinstance(multiprocessing_context, str):
                    valid_start_methods = multiprocessing.get_all_start_methods()
                    if multiprocessing_context not in valid_start_methods:
                        raise ValueError(
                            "multiprocessing_context option should specify a valid start "
                            f"method in {valid_start_methods!r}, but got "
                            f"multiprocessing_context={multiprocessing_context!r}"
                        )
                    multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
                if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
                    raise TypeError(
                        "multiprocessing_context option should be a valid context object or a "
                        "string specifying the start method, but got "
                        f"multiprocessing_context={multiprocessing_context}"
                    )
            else:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val):
        if self.__initialized and attr in ("batch_size", "batch_sampler", "sampler", "drop_last",
                                           "dataset", "persistent_workers"):
            raise ValueError(
                f"{attr} attribute should not be set after {self.__class__.__name__} is "
                "initialized"
            )
        super().__setattr__(attr, val)

    def __iter__(self):
        # persistent workers: one iterator (and its worker threads) reused across epochs
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        # what the fetcher is handed: index lists when auto-collating, single indices otherwise
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._dataset_kind == _DatasetKind.Iterable:
            # the dataset's own length; with several workers it may not match what is yielded
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def check_worker_number_rationality(self):
        if not self.num_workers:
            return
        cpuset_checked = hasattr(os, "sched_getaffinity")
        if cpuset_checked:
            try:
                max_num_worker_suggest = len(os.sched_getaffinity(0))
            except Exception:
                max_num_worker_suggest = None
        else:
            max_num_worker_suggest = os.cpu_count()
        if max_num_worker_suggest is None or self.num_workers > max_num_worker_suggest:
            if max_num_worker_suggest is not None:
                suggested = (
                    "Our suggested max number of worker in current system is "
                    f"{max_num_worker_suggest}"
                    f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}, "
                    "which is smaller than what this DataLoader is going to create."
                )
            else:
                suggested = ("DataLoader is not able to compute a suggested max number of "
                             "worker in current system.")
            warnings.warn(
                f"This DataLoader will create {self.num_workers} worker processes in total. "
                f"{suggested} Please be aware that excessive worker creation might get "
                "DataLoader running slow or even freeze, lower the worker number to avoid "
                "potential slowness/freeze if necessary.",
                stacklevel=2,
            )


# --------------------------------------------------------------------------- iterators

class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn(
                "pin_memory_device is deprecated, the current accelerator will be used as the "
                f"device,ignore pin_memory_device='{loader.pin_memory_device}'.",
                stacklevel=2,
            )
        if loader.pin_memory and not _accelerator_available():
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
                stacklevel=2,
            )
        self._pin_memory = False  # no-op under JAX, see the module docstring
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        torch = _torch()
        # after iter(sampler) and before its first draw, as in PyTorch (the order of draws on
        # the default generator decides the shuffle)
        self._base_seed = torch.empty((), dtype=torch.int64).random_(
            generator=loader.generator).item()
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)  # may raise StopIteration

    def _next_data(self):
        raise NotImplementedError

    def __next__(self):
        data = self._next_data()
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable
                and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (
                f"Length of IterableDataset {self._dataset} was reported to be "
                f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                f"{self._num_yielded} samples have been fetched. "
            )
            if self._num_workers > 0:
                msg += (
                    "For multiprocessing data-loading, this could be caused by not properly "
                    "configuring the IterableDataset replica at each worker. Please see "
                    "https://pytorch.org/docs/stable/data.html#torch.utils.data.IterableDataset "
                    "for examples."
                )
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self):
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{self.__class__.__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        assert self._timeout == 0
        assert self._num_workers == 0
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn,
            self._drop_last)

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration


class _MultiWorkerDataLoaderIter(_BaseDataLoaderIter):
    """Worker threads fed through per-worker index queues; results re-ordered by task id."""

    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        assert self._num_workers > 0
        assert self._prefetch_factor > 0
        self._worker_init_fn = loader.worker_init_fn
        self._data_queue = queue.Queue()
        self._shutdown = False
        self._workers_done_event = threading.Event()
        self._index_queues = []
        self._workers = []
        for i in range(self._num_workers):
            index_queue = queue.Queue()
            w = threading.Thread(
                target=_worker_loop,
                args=(self._dataset_kind, self._dataset, index_queue, self._data_queue,
                      self._workers_done_event, self._auto_collation, self._collate_fn,
                      self._drop_last, self._base_seed, self._worker_init_fn, i,
                      self._num_workers),
                name=f"pt_data_worker_{i}",
                daemon=True,  # never keeps the interpreter alive
            )
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # id of the next task to hand out
        self._rcvd_idx = 0  # id of the next task to return
        # task id -> (worker_id,) while pending, (worker_id, data) once arrived out of order
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # persistent workers: wait until every worker acknowledged the new epoch,
            # dropping results of the previous (possibly abandoned) one
            for q in self._index_queues:
                q.put(_ResumeIteration())
            resume_iteration_cnt = self._num_workers
            while resume_iteration_cnt > 0:
                return_idx, _ = self._get_data()
                if isinstance(return_idx, _ResumeIteration):
                    resume_iteration_cnt -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout):
        try:
            return True, self._data_queue.get(timeout=timeout)
        except queue.Empty:
            failed = [i for i, w in enumerate(self._workers)
                      if self._workers_status[i] and not w.is_alive()]
            if failed:
                raise RuntimeError(
                    f"DataLoader worker thread(s) {', '.join(map(str, failed))} exited "
                    "unexpectedly"
                ) from None
            return False, None

    def _get_data(self):
        if self._timeout > 0:
            success, data = self._try_get_data(self._timeout)
            if success:
                return data
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            success, data = self._try_get_data(MP_STATUS_CHECK_INTERVAL)
            if success:
                return data

    def _next_data(self):
        while True:
            # skip tasks of workers that ended (IterableDataset) and never will answer
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx, None)
                if info:
                    worker_id = info[0]
                    if len(info) == 2 or self._workers_status[worker_id]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:  # arrived earlier, out of order
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

            assert not self._shutdown and self._tasks_outstanding > 0
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == _DatasetKind.Iterable:
                if isinstance(data, _IterableDatasetStopIteration):
                    if self._persistent_workers:
                        self._workers_status[data.worker_id] = False
                    else:
                        self._mark_worker_as_unavailable(data.worker_id)
                    self._try_put_index()
                    continue

            if idx != self._rcvd_idx:
                if not self._in_order:
                    worker_id = self._task_info.pop(idx)[0]
                    return self._process_data(data, worker_id)
                self._task_info[idx] += (data,)
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        assert self._tasks_outstanding < max_tasks
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # find the next active worker, if any
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                if self._in_order:
                    break
                if self._workers_num_tasks[worker_queue_idx] < max_tasks // sum(
                        self._workers_status):
                    break
        else:
            return  # no active worker
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._workers_num_tasks[worker_queue_idx] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_idx):
        self._workers_num_tasks[worker_idx] -= 1
        self._try_put_index()
        if isinstance(data, _WorkerError):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        # the worker exits once it reads the None
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self, join=True):
        if self._shutdown:
            return
        self._shutdown = True
        self._workers_done_event.set()  # workers skip whatever is still queued
        for worker_id in range(len(self._workers)):
            if self._persistent_workers or self._workers_status[worker_id]:
                self._mark_worker_as_unavailable(worker_id, shutdown=True)
        if join:
            for w in self._workers:
                if w is not threading.current_thread():
                    w.join(timeout=MP_STATUS_CHECK_INTERVAL)

    def __del__(self):
        # from the garbage collector: signal the workers, don't wait for them
        if hasattr(self, "_workers"):
            self._shutdown_workers(join=False)


# PyTorch's name for the worker-based iterator
_MultiProcessingDataLoaderIter = _MultiWorkerDataLoaderIter

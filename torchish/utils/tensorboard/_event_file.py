"""Event files on disk: TFRecord framing and a buffered writer of serialized Events.

Each record is: little-endian uint64 length, masked CRC-32C of those 8 bytes, the payload,
masked CRC-32C of the payload. TensorBoard's own writer queues records for a background
thread; here records are buffered in memory and written when `max_queue` of them are pending,
on flush()/close(), and by a timer at most `flush_secs` after the oldest pending one.
"""
import atexit
import itertools
import os
import socket
import struct
import threading
import time
import weakref

from . import _proto
from ._crc32c import masked_crc32c

# one counter per process, shared by every writer, makes file names unique (as TensorBoard's)
_file_counter = itertools.count()
_open_writers = weakref.WeakSet()


class RecordWriter:
    """Frames byte strings as TFRecords onto a binary file object."""

    def __init__(self, writer):
        self._writer = writer

    def write(self, data):
        header = struct.pack("<Q", len(data))
        self._writer.write(header + struct.pack("<I", masked_crc32c(header)) + data
                           + struct.pack("<I", masked_crc32c(data)))

    def flush(self):
        self._writer.flush()

    def close(self):
        self._writer.close()

    @property
    def closed(self):
        return self._writer.closed


class EventFileWriter:
    """Creates `events.out.tfevents.<time>.<host>.<pid>.<counter><suffix>` in `logdir` and
    appends serialized Event protos to it."""

    def __init__(self, logdir, max_queue_size=10, flush_secs=120, filename_suffix=""):
        self._logdir = logdir
        os.makedirs(logdir, exist_ok=True)
        self._file_name = os.path.join(logdir, "events.out.tfevents.%010d.%s.%s.%s" % (
            time.time(), socket.gethostname(), os.getpid(), next(_file_counter))
        ) + filename_suffix
        self._writer = RecordWriter(open(self._file_name, "wb"))
        self._max_queue = max(int(max_queue_size), 1)
        self._flush_secs = flush_secs
        self._pending = []
        self._timer = None
        self._closed = False
        self._lock = threading.RLock()
        _open_writers.add(self)
        # the file_version record tells readers which Event format follows; the writer name is
        # the one TensorBoard's own writer records, so files match the ones torch writes
        self.add_event(_proto.Event(
            wall_time=time.time(), file_version="brain.Event:2",
            source_metadata=_proto.SourceMetadata(
                writer="tensorboard.summary.writer.event_file_writer")))
        self.flush()

    def get_logdir(self):
        return self._logdir

    def add_event(self, event):
        if not isinstance(event, _proto.Event):
            raise TypeError("Expected an event_pb2.Event proto,  but got %s" % type(event))
        data = event.SerializeToString()
        with self._lock:
            if self._closed:
                raise OSError("Writer is closed")
            self._pending.append(data)
            if len(self._pending) >= self._max_queue:
                self._write_pending()
                self._writer.flush()
            elif self._timer is None and self._flush_secs is not None:
                self._timer = threading.Timer(max(float(self._flush_secs), 0.0), self._on_timer)
                self._timer.daemon = True
                self._timer.start()

    def _on_timer(self):
        with self._lock:
            self._timer = None
            if not self._closed:
                self._write_pending()
                self._writer.flush()

    def _write_pending(self):
        for data in self._pending:
            self._writer.write(data)
        self._pending.clear()

    def flush(self):
        with self._lock:
            if self._closed:
                raise OSError("Writer is closed")
            self._write_pending()
            self._writer.flush()

    def close(self):
        with self._lock:
            if self._closed:
                return
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._write_pending()
            self._writer.flush()
            self._writer.close()
            self._closed = True


@atexit.register
def _flush_at_exit():
    # a program that forgets close() still leaves complete records behind
    for writer in list(_open_writers):
        try:
            with writer._lock:
                if not writer._closed:
                    writer._write_pending()
                    writer._writer.flush()
        except Exception:
            pass

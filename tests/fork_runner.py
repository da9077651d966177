"""Run PyTorch scripts as `python -m torchish SCRIPT` does, each in a child forked from one
server process that has already imported torchish and JAX: a program then skips the ~2.5 s
of imports that a fresh interpreter spends (a sixth to a third of a ported program's run).

Forking is safe here because importing torchish does not start JAX's backend (no XLA
threads or device state exist in the server); each child starts it afresh. The server runs
with PYTHONHASHSEED=0, which its children inherit, as the fresh processes had it.
"""
import json
import os
import select
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))


def share_mlir_context(modules=256):
    """Tests only: JAX lowers each kernel in one MLIR context per thread, renewed every `modules`
    lowerings, instead of a fresh one each (loading its dialects is ~6 ms of a small kernel's
    ~50-60 ms compile on the CPU; the suite compiles tens of thousands). The emitted modules are
    the same; the renewal bounds what a context keeps (it interns every type and attribute)."""
    try:
        from jax._src.interpreters import mlir
        make, local = mlir.make_ir_context, threading.local()
    except (ImportError, AttributeError):   # (a JAX without that hook: lower as it does)
        return

    def shared():
        if getattr(local, "left", 0) <= 0:
            local.context, local.left = make(), modules
        local.left -= 1
        return local.context
    mlir.make_ir_context = shared


_SERVER = r'''
import json, os, sys, traceback
import torchish, torchish.__main__
sys.path.insert(0, os.environ["FORK_RUNNER_DIR"])
from fork_runner import share_mlir_context
share_mlir_context()
from jax._src import xla_bridge
assert not xla_bridge._backends, "the server must not start JAX's backend before forking"
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            for fd, path in ((1, job["stdout"]), (2, job["stderr"])):
                os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
            sys.stdin = open(os.devnull)
            os.chdir(job["cwd"])
            code = torchish.__main__.main(job["argv"]) or 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (exc.code is not None)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(json.dumps(os.waitstatus_to_exitcode(status)), flush=True)
'''


class ForkRunner:
    def __init__(self):
        env = dict(os.environ, PYTHONHASHSEED="0", FORK_RUNNER_DIR=HERE)
        self._proc = subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True, env=env)

    def run(self, argv, cwd, tmp_path, timeout=600):
        """(returncode, stdout, stderr) of `python -m torchish *argv` run in `cwd`."""
        out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
        job = {"argv": list(argv), "cwd": str(cwd), "stdout": str(out), "stderr": str(err)}
        self._proc.stdin.write(json.dumps(job) + "\n")
        self._proc.stdin.flush()
        ready, _, _ = select.select([self._proc.stdout], [], [], timeout)
        if not ready:
            self.close()
            raise TimeoutError(f"{argv} ran for more than {timeout} s")
        line = self._proc.stdout.readline()
        if not line:
            raise RuntimeError("the fork server died")
        return json.loads(line), out.read_text(), err.read_text()

    def close(self):
        self._proc.kill()
        self._proc.wait()

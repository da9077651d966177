"""Running a warn-once program under both libraries cheaply: PyTorch in a fresh process (its
TORCH_WARN_ONCE flags cannot be reset), torchish in this one with its warn-once record
emptied, as a fresh process has it (a second JAX start-up costs seconds)."""
import subprocess
import sys

import torchish._warnings


def stdout_of_both(script, tmp_path, monkeypatch, capsys):
    """(torchish's, PyTorch's) stdout of `script`, a program file that imports the library
    named by its first argument."""
    path = tmp_path / "prog.py"
    path.write_text(script)
    theirs = subprocess.run([sys.executable, str(path), "torch"], capture_output=True,
                            text=True, timeout=300, check=True).stdout
    monkeypatch.setattr(torchish._warnings, "_WARNED", set())
    monkeypatch.setattr(sys, "argv", [str(path), "torchish"])
    capsys.readouterr()
    exec(compile(script, str(path), "exec"), {"__name__": "__main__", "__file__": str(path)})
    return capsys.readouterr().out, theirs

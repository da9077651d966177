"""`python -m torchish SCRIPT [ARGS...]`: run a PyTorch script with `torch` = torchish."""
import os
import runpy
import sys


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m torchish SCRIPT [ARGS...]   (or: -m MODULE [ARGS...])")
        return 0 if argv else 2
    from ._torch_alias import install
    install()
    if argv[0] == "-m":
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        script = os.path.abspath(argv[0])  # python gives __main__ an absolute __file__ (3.9+)
        sys.path.insert(0, os.path.dirname(script))
        runpy.run_path(script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())

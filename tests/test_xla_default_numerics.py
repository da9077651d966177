"""The tests marked `xla_default_numerics` assert bits that XLA's default CPU optimisation gives
(exact zeros of lgamma, fused multiply-adds in half-precision composites, eager kernels equal to
XLA's defaults). When the suite compiles at LLVM level 0 (tests/conftest.py) they are skipped in
place and run here, in one child pytest with the defaults."""
import os
import subprocess
import sys

import pytest

from conftest import LEVEL_0_FLAG, XLA_LEVEL_0

HERE = os.path.dirname(os.path.abspath(__file__))
MARK = "xla_default_numerics"


def _files_using_the_mark():
    own = os.path.basename(__file__)
    return sorted(os.path.join(HERE, f) for f in os.listdir(HERE)
                  if f.startswith("test_") and f.endswith(".py") and f != own
                  and f"mark.{MARK}" in open(os.path.join(HERE, f)).read())


@pytest.mark.skipif(not XLA_LEVEL_0, reason="the marked tests run in place with XLA's defaults")
def test_marked_tests_pass_with_xla_default_optimisation():
    files = _files_using_the_mark()
    assert files
    # a fresh pytest: none of the xdist worker's PYTEST_* variables
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["TORCHISH_TEST_XLA_OPTIMIZE"] = "1"
    flags = env.pop("XLA_FLAGS").replace(LEVEL_0_FLAG, "").strip()
    if flags:  # (XLA refuses a blank XLA_FLAGS)
        env["XLA_FLAGS"] = flags
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p",
                          "no:cacheprovider", "-m", MARK, *files], capture_output=True,
                         text=True, cwd=os.path.dirname(HERE), env=env, timeout=600)
    # exit 5 (nothing collected) is a failure too
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert " passed" in out.stdout.splitlines()[-1]

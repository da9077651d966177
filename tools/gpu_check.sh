#!/usr/bin/env bash
# The device check in one run, for a GPU machine (JAX with CUDA, PyTorch, pytest-xdist there):
# the benchmarks on the GPU, then the whole test suite with TORCHISH_TEST_DEVICE=cuda.
#
#     OUT=results_dir bash tools/gpu_check.sh [seconds for everything, default 540] [pytest args]
#
# Wheels in .whl/ (expecttest, for the OpInfo tests) are installed to a scratch folder first.
# The suite runs verbose, so the names of failures are in tests.txt even if time runs out.
# XLA's GPU autotuning is off throughout: it slows every first compile (and the suite compiles
# thousands of small programs); the benchmarks' contenders all run without it alike.
set -u
OUT=${OUT:-/tmp/gpu_check}
mkdir -p "$OUT"
budget=${1:-540}
shift
tests=("$@")
[ ${#tests[@]} -eq 0 ] && tests=(tests)
export PYTHONUNBUFFERED=1 XLA_PYTHON_CLIENT_PREALLOCATE=false PYTHONPATH=$PWD \
    XLA_FLAGS=--xla_gpu_autotune_level=0
if compgen -G ".whl/*.whl" >/dev/null; then
    python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl \
        && export PYTHONPATH=$PWD:/tmp/site
fi
{ nvidia-smi -L; python3 -c "import jax, torch; print('jax', jax.__version__, jax.devices(), \
'torch', torch.__version__, torch.cuda.is_available())"; } 2>&1 | tee "$OUT/env.txt"
timeout 110 python3 benchmarks/train_step.py --device cuda --repeat 3 --steps 10 2>&1 \
    | tee "$OUT/train_step.txt"
timeout 40 python3 benchmarks/autograd.py --device cuda --repeat 5 2>&1 | tee "$OUT/autograd.txt"
left=$((budget - SECONDS))
echo "tests: $left s left"
TORCHISH_TEST_DEVICE=cuda timeout "$left" python3 -m pytest -v -n "$(nproc)" -p no:cacheprovider \
    --tb=short -rfE --durations=15 "${tests[@]}" > "$OUT/tests.txt" 2>&1
echo "pytest exit $? after $SECONDS s"
grep -oE "(FAILED|ERROR) tests/[^ ]*" "$OUT/tests.txt" | sort -u | head -80
tail -5 "$OUT/tests.txt"

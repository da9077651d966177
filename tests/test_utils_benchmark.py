"""torchish.utils.benchmark against real PyTorch: Measurement's summaries and printout and
Compare's tables from fixed times (byte for byte), and Timer's timeit / blocked_autorange /
adaptive_autorange producing Measurements of the same shape (times differ run to run, so
only structure is compared there)."""
import importlib
import re

import pytest

import torchish

torch = pytest.importorskip("torch")

TIMES = [[1.2e-6, 1.3e-6, 1.25e-6, 1.9e-6, 1.1e-6], [3.3e-3], [2.0e-5, 2.1e-5, 2.05e-5, 2.2e-5],
         [5e-7, 5.1e-7], [1.0, 3.0, 2.0, 9.0, 1.5], [4e-8, 9e-8, 4.1e-8, 4.2e-8, 4.05e-8]]
SPECS = [dict(label="add", sub_label="small", description="float"),
         dict(label="add", sub_label="big", description="float"),
         dict(label="add", sub_label="small", description="double", num_threads=4),
         dict(label="mul", description="d1\nd2", stmt="a\nb"),
         dict(setup="a\nb", stmt="loop\n  body", sub_label="s", description="z"),
         dict(label="add", description="double", setup="pass")]


def _bench(T):
    return importlib.import_module(f"{T.__name__}.utils.benchmark")


def _norm(text):
    return re.sub(r"0x[0-9a-f]+", "0x", text).replace("torchish.", "torch.")


def _measurements(B):
    out = []
    for i, (times, kw) in enumerate(zip(TIMES, SPECS)):
        spec = B.TaskSpec(**{"stmt": "x + y", "setup": "x = torch.ones(3)", **kw})
        n = 10 * (i + 1)
        out.append(B.Measurement(number_per_run=n, raw_times=[t * n for t in times],
                                 task_spec=spec))
    return out


def test_measurement_summary_and_repr():
    got = []
    for T in (torchish, torch):
        rows = []
        for m in _measurements(_bench(T)):
            rows.append(_norm(repr(m)))
            rows.append((m.median, round(m.mean, 15), m.iqr, m.times, m.significant_figures,
                         m.has_warnings, m.meets_confidence(0.5), m.title, m.label,
                         m.sub_label, m.env, m.num_threads, m.as_row_name, m.stmt))
        got.append(rows)
    assert got[0] == got[1]


def test_compare_tables():
    got = []
    for T in (torchish, torch):
        B = _bench(T)
        compare = B.Compare(_measurements(B))
        rows = [str(compare)]
        compare.trim_significant_figures()
        compare.highlight_warnings()
        rows.append(str(compare))
        compare.colorize()
        rows.append(str(compare))
        compare.colorize(rowwise=True)
        rows.append(str(compare))
        rows.append([B.select_unit(x) for x in (3e-10, 1e-9, 5e-7, 2e-3, 0.5, 20.0)])
        rows.append([B.trim_sigfig(x, n) for x, n in ((123.456, 2), (0.0012345, 3),
                                                      (1.25, 2), (99.99, 1))])
        with pytest.raises(ValueError) as info:
            B.Compare([1])
        rows.append(str(info.value))
        got.append(rows)
    assert got[0] == got[1]


def test_compare_print(capsys):
    B = _bench(torchish)
    B.Compare(_measurements(B)[:3]).print()
    out = capsys.readouterr().out
    assert out.startswith("[------------- add -------------]\n")
    assert "Times are in microseconds (us)." in out


def _shape(m):
    """A Measurement's printout with the numbers taken out."""
    return re.sub(r"\d+(\.\d+)?", "N", _norm(repr(m))).splitlines()


def test_timer():
    got = []
    for T in (torchish, torch):
        B = _bench(T)
        x = T.ones(4)
        threads = T.get_num_threads()
        timer = B.Timer(stmt="\n    x + y\n", setup="y = torch.ones(4)", globals={"x": x},
                        label="add", sub_label="ones", description="4", num_threads=2)
        m = timer.timeit(20)
        rows = [type(m).__name__, m.number_per_run, len(m.times), m.stmt, m.setup,
                m.num_threads, m.median > 0, _shape(m), T.get_num_threads() == threads]
        blocked = timer.blocked_autorange(min_run_time=0.002)
        rows += [sum(blocked.raw_times) >= 0.002, blocked.task_spec == m.task_spec]
        calls = []
        adaptive = B.Timer("x * 2", globals={"x": x}).adaptive_autorange(
            min_run_time=0.001, max_run_time=0.02, callback=lambda n, t: calls.append(n))
        rows += [len(adaptive.times) >= 4 or sum(adaptive.raw_times) > 0.02,
                 len(calls) == len(adaptive.times), adaptive.title, adaptive.num_threads]
        for call in (lambda: timer.repeat(), lambda: timer.autorange(),
                     lambda: B.Timer(stmt=lambda: None),
                     lambda: B.Timer("pass", global_setup="int x;"),
                     lambda: B.Timer("pass", language="fortran")):
            with pytest.raises(Exception) as info:
                call()
            rows.append((type(info.value).__name__, str(info.value)))
        rows.append(B.Timer("torch.ones(1)").timeit(3).number_per_run)
        got.append(rows)
    assert got[0] == got[1]


def test_timer_cpp_unsupported():
    B = _bench(torchish)
    with pytest.raises(NotImplementedError, match="not supported by torchish"):
        B.Timer("x", language="c++")
    with pytest.raises(NotImplementedError, match="not supported by torchish"):
        B.Fuzzer


def test_benchmark_is_an_attribute_of_utils_before_any_import():
    import subprocess
    import sys
    code = "import torchish; print(torchish.utils.benchmark.Timer.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "Timer", out.stderr[-2000:]

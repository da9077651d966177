"""torch.profiler on torchish: ops and record_function ranges are recorded and nested, the
schedule steps through PyTorch's actions, results print and export as PyTorch's do."""
import json
import os

import pytest

import torchish
from torchish.profiler import ProfilerAction, profile, record_function, schedule


def _model_run():
    torchish.manual_seed(0)
    model = torchish.nn.Sequential(torchish.nn.Linear(8, 16), torchish.nn.ReLU(),
                                   torchish.nn.Linear(16, 2))
    return model, torchish.randn(4, 8)


def test_ops_nest_in_record_function_ranges():
    model, x = _model_run()
    with profile(record_shapes=True) as prof:
        with record_function("model_inference"):
            model(x)
    events = prof.events()
    outer = [e for e in events if e.name == "model_inference"]
    assert len(outer) == 1
    ops = [e.name for e in outer[0].cpu_children]
    assert ops == ["aten::addmm", "aten::relu", "aten::addmm"]
    assert outer[0].cpu_time_total >= sum(c.cpu_time_total for c in outer[0].cpu_children)
    avgs = {e.key: e for e in prof.key_averages()}
    assert avgs["aten::addmm"].count == 2
    shapes = {str(e.input_shapes) for e in prof.key_averages(group_by_input_shape=True)
              if e.key == "aten::addmm"}
    assert shapes == {"[[16], [4, 8], [8, 16]]", "[[2], [4, 16], [16, 2]]"}   # PyTorch's too


def test_nothing_recorded_outside_the_profile():
    model, x = _model_run()
    with profile() as prof:
        pass
    model(x)
    assert len(prof.events()) == 0


@pytest.mark.filterwarnings("ignore:Profiler won't be using warmup")
@pytest.mark.parametrize("kw", [dict(wait=1, warmup=1, active=2, repeat=1),
                                dict(wait=0, warmup=1, active=1, repeat=2, skip_first=2),
                                dict(wait=2, warmup=0, active=3)])
def test_schedule_is_pytorchs(kw):
    torch = pytest.importorskip("torch")
    ours = schedule(**kw)
    theirs = torch.profiler.schedule(**kw)
    assert [ours(i).name for i in range(12)] == [theirs(i).name for i in range(12)]


def test_schedule_saves_each_window(tmp_path):
    model, x = _model_run()
    saved = []
    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                 on_trace_ready=lambda p: saved.append(sorted({e.key for e in
                                                               p.key_averages()}))) as prof:
        for step in range(10):
            with record_function(f"step{step}"):
                model(x)
            prof.step()
    assert saved == [["aten::addmm", "aten::relu", "step2", "step3"],
                     ["aten::addmm", "aten::relu", "step6", "step7"]]
    assert prof.current_action is ProfilerAction.NONE


def test_table_and_exports(tmp_path):
    model, x = _model_run()
    with profile(on_trace_ready=torchish.profiler.tensorboard_trace_handler(
            str(tmp_path / "tb"))) as prof:
        with record_function("forward"):
            model(x)
    table = prof.key_averages().table(sort_by="cpu_time_total", row_limit=2)
    lines = table.splitlines()
    assert lines[1].split() == ["Name", "Self", "CPU", "%", "Self", "CPU", "CPU", "total", "%",
                                "CPU", "total", "CPU", "time", "avg", "#", "of", "Calls"]
    assert lines[3].split()[0] == "forward" and len(lines) == 7
    assert lines[-1].startswith("Self CPU time total: ")
    with pytest.raises(AttributeError):
        prof.key_averages().table(sort_by="no_such_column")
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    trace = json.load(open(tmp_path / "trace.json"))
    assert {e["name"] for e in trace["traceEvents"]} >= {"forward", "aten::addmm"}
    written = os.listdir(tmp_path / "tb")
    assert len(written) == 1 and written[0].endswith(".pt.trace.json")


def test_legacy_autograd_profiler():
    model, x = _model_run()
    with torchish.autograd.profiler.profile() as prof:
        with torchish.autograd.profiler.record_function("fwd"):
            model(x).sum().backward()
    names = {e.name for e in prof.function_events}
    assert {"fwd", "aten::addmm", "aten::sum"} <= names

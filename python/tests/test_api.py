"""doppler.place and doppler.run: devices per node, makespans, outputs."""

import os

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import doppler
from conftest import assert_close, needs_tools

pytestmark = needs_tools


class TwoLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 8)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        return self.fc2(h).transpose(0, 1), h.sum(-1)


def test_place_maps_nodes_to_devices_and_meta():
    torch.manual_seed(0)
    gm = torch.fx.symbolic_trace(TwoLayer())
    placement = doppler.place(gm, (torch.randn(8, 16),), devices=4, system="h100x4")
    assert placement.graph_module is gm
    assert placement.makespan > 0
    assert "doppler.device" in placement.mlir and "doppler.makespan" in placement.mlir
    for name in ("fc1", "relu", "fc2", "sum_1"):
        assert placement.devices[name] in range(4), name
        assert placement.devices[name] in placement.device_sets[name]
    # a view reports the device of the op that produced its value
    assert placement.devices["transpose"] == placement.devices["fc2"]
    assert placement.devices["x"] is None
    for node in gm.graph.nodes:
        assert node.meta["doppler_device"] == placement.devices[node.name]
    summary = placement.summary()
    assert "predicted makespan" in summary and "fc1" in summary and "Linear" in summary
    assert str(placement) == summary


def test_place_policies_and_options():
    x = torch.randn(8, 16)
    single = doppler.place(TwoLayer(), (x,), devices=2, system="cpu4", policy="single")
    assert {d for d in single.devices.values() if d is not None} == {0}
    parted = doppler.place(torch.fx.symbolic_trace(TwoLayer()), (x,), devices=2, system="cpu4",
                           policy="round-robin", parts=2)
    assert parted.devices["fc1"] in (0, 1)
    with pytest.raises(doppler.ToolError, match="doppler-opt"):
        doppler.place(TwoLayer(), (x,), devices=2, policy="no-such-policy")


def test_place_budget_line():
    """The budget line puts the learned greedy placement beside the heuristics;
    budget_evaluations=0 is the greedy pass alone, with no line; a removed or
    misspelt option is the pipeline's error."""
    x = torch.randn(8, 16)
    budgeted = doppler.place(TwoLayer(), (x,), devices=2, system="h100x4")
    assert budgeted.budget.startswith("budget: doppler greedy "), budgeted.budget
    assert "critical-path" in budgeted.budget and "join-aware" in budgeted.budget
    assert budgeted.budget in budgeted.summary()
    assert "simulator run" in budgeted.remark  # "1 simulator run" or "N ... runs"
    greedy = doppler.place(TwoLayer(), (x,), devices=2, system="h100x4", budget_evaluations=0)
    assert greedy.budget is None and "greedy" in greedy.remark
    assert greedy.makespan >= budgeted.makespan
    heuristic = doppler.place(TwoLayer(), (x,), devices=2, system="h100x4",
                              policy="critical-path")
    assert heuristic.budget is None
    with pytest.raises(doppler.ToolError, match="no such option refine-seconds"):
        doppler.place(TwoLayer(), (x,), devices=2, refine_seconds=1)


def test_gantt_and_trace(tmp_path):
    placement = doppler.place(TwoLayer(), (torch.randn(8, 16),), devices=2, system="cpu4",
                              policy="critical-path")
    svg = placement.gantt_svg(str(tmp_path / "g.svg"))
    assert open(svg).read().lstrip().startswith("<")
    trace = placement.chrome_trace(str(tmp_path / "t.json"))
    assert os.path.getsize(trace) > 0


def test_run_outputs_structure_and_makespans():
    torch.manual_seed(1)
    module = TwoLayer()
    x = torch.randn(8, 16)
    result = doppler.run(module, (x,), devices=4, system="cpu4", check=True)
    expected = module(x)
    assert isinstance(result.outputs, tuple) and len(result.outputs) == 2
    assert_close(result.outputs, tuple(e.detach() for e in expected), 1e-5)
    assert result.measured_makespan > 0 and result.predicted_makespan > 0
    assert abs(result.predicted_makespan - result.placement.makespan) < 1e-3 * \
        result.placement.makespan
    assert result.max_rel_error is not None and result.max_rel_error < 1e-5


def test_run_detects_wrong_numerics(monkeypatch):
    """The comparison can fail: a deliberately wrong emitter gives a wrong result."""
    from doppler import ops

    def wrong_relu(ctx, input, *args, **kwargs):
        return ctx.builder.unary(ctx.val(input), "abs")

    monkeypatch.setitem(ops.FUNCTIONS, F.relu, wrong_relu)
    monkeypatch.setitem(ops.ATEN, "aten.relu", wrong_relu)  # torch.export's graph
    module = TwoLayer()
    x = torch.randn(8, 16)
    result = doppler.run(module, (x,), devices=2, system="cpu4", policy="round-robin", repeat=1)
    with pytest.raises(AssertionError, match="relative error"):
        assert_close(result.outputs[0], module(x)[0].detach(), 1e-5)

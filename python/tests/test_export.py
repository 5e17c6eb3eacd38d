"""The exported text: argument order, locations, shapes; parsed by doppler-opt."""

import re
import subprocess

import torch
import torch.nn as nn

import doppler
from conftest import needs_tools


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 6)
        self.ln = nn.LayerNorm(6)
        self.register_buffer("shift", torch.linspace(0, 1, 6))
        self.register_buffer("table", torch.arange(8.0))
        self.extra = nn.Parameter(torch.randn(6))

    def forward(self, x, y):
        h = self.ln(self.fc(x)) * self.extra + self.shift
        return h + self.table[:6].exp() + y.sum()


def exported(traced=False):
    """The module as is (torch.export on torch 2.x, symbolic_trace on 1.x), or
    traced by torch.fx.symbolic_trace (node names are the module's)."""
    model = Model().eval()
    if traced:
        model = torch.fx.symbolic_trace(model)
    return doppler.exported(model, (torch.randn(3, 4), torch.randn(2)))


def test_argument_order_inputs_parameters_buffers_constants():
    program = exported()
    names = [a.name for a in program.arguments]
    kinds = [a.kind for a in program.arguments]
    # Model().named_parameters(): extra (its own first), fc.weight, fc.bias, ln.*
    assert names == ["x", "y", "extra", "fc.weight", "fc.bias", "ln.weight", "ln.bias", "shift",
                     "exp"]
    assert kinds == ["input"] * 2 + ["parameter"] * 5 + ["buffer", "constant"]
    # the folded value is torch's
    assert torch.equal(program.arguments[-1].tensor, torch.arange(6.0).exp())
    signature = program.mlir.split("->")[0]
    assert signature.index("%x:") < signature.index("%y:") < signature.index("%extra:") \
        < signature.index("%fc.weight:") < signature.index("%shift:") < signature.index("%exp:")


def test_every_op_has_its_node_location():
    text = exported(traced=True).mlir
    ops = [line for line in text.splitlines() if re.match(r"\s+%v\d+ = ", line)]
    assert ops
    nodes = {"fc", "ln", "mul", "add", "add_1", "add_2", "sum_1", "exp", "output"}
    for line in ops:
        found = re.search(r'loc\("([^"]+)"\)$', line)
        assert found, line
        assert found.group(1) in nodes, line
    assert 'loc("fc")' in text and 'loc("ln")' in text


def test_static_shapes_from_example_inputs():
    text = doppler.export(nn.Linear(4, 6), (torch.randn(7, 4),))
    assert "tensor<7x6xf32>" in text and "?" not in text


@needs_tools
def test_doppler_opt_parses_and_verifies():
    text = exported().mlir
    opt = doppler.find_tool("doppler-opt")
    done = subprocess.run([opt, "-", "--verify-roundtrip"], input=text, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


@needs_tools
def test_locations_survive_the_pipeline():
    placement = doppler.place(torch.fx.symbolic_trace(Model().eval()),
                              (torch.randn(3, 4), torch.randn(2)), devices=2, system="cpu4",
                              policy="round-robin")
    assert 'loc("fc")' in placement.mlir and 'loc("ln")' in placement.mlir
    assert placement.devices["fc"] in (0, 1)

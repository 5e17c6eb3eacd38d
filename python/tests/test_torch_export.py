"""torch.export (torch 2.6+): placeholders mapped by the graph signature,
export bookkeeping dropped in one place, ExportedPrograms as they are."""

import pytest
import torch
import torch.nn as nn

import doppler
from conftest import assert_close, needs_tools
from doppler.sources import has_export

pytestmark = pytest.mark.skipif(not has_export(),
                                reason="torch.export (torch 2.6+) is not available")


class Kinds(nn.Module):
    """A parameter, a persistent and a non-persistent buffer, a tensor
    constant (lifted by export) and a dtype conversion (export writes an
    aten._assert_tensor_metadata beside it)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.register_buffer("transient", torch.ones(3), persistent=False)
        self.register_buffer("kept", torch.arange(3.0))
        self.table = torch.tensor([0.5, 1.0, 2.0])

    def forward(self, x):
        y = self.fc(x.to(torch.float32)) * self.table
        return y + self.transient + self.kept


def inputs():
    torch.manual_seed(0)
    return (torch.randn(2, 4),)


def kinds(program):
    return [(a.name, a.kind) for a in program.arguments]


EXPECTED = [("x", "input"), ("fc.weight", "parameter"), ("fc.bias", "parameter"),
            ("transient", "buffer"), ("kept", "buffer"), ("table", "constant")]


def test_signature_kinds_in_module_order():
    program = doppler.exported(Kinds().eval(), inputs())
    assert kinds(program) == EXPECTED
    assert program.origin == "torch.export"


def test_exported_program_and_its_unlifted_module():
    """ep.module() holds the _guards_fn call_module every torch 2.15 export
    has; it is bookkeeping, dropped like the metadata asserts."""
    module = Kinds().eval()
    ep = torch.export.export(module, inputs(), strict=False)
    assert kinds(doppler.exported(ep, inputs())) == EXPECTED
    unlifted = ep.module()
    if any(n.op == "call_module" for n in unlifted.graph.nodes):
        assert any("_guards_fn" in str(n.target) for n in unlifted.graph.nodes)
    assert kinds(doppler.exported(unlifted, inputs())) == EXPECTED


def test_bookkeeping_is_dropped():
    ep = torch.export.export(Kinds().eval(), inputs(), strict=False)
    targets = {str(n.target) for n in ep.run_decompositions().graph.nodes}
    assert "aten._assert_tensor_metadata.default" in targets  # x.to(float32)'s
    program = doppler.exported(ep, inputs())
    assert "assert" not in program.mlir
    assert "_assert_tensor_metadata" in program.node_owner  # walked, emitted nothing
    assert program.node_owner["_assert_tensor_metadata"] is None


def test_exported_program_with_other_inputs_is_an_error():
    ep = torch.export.export(Kinds().eval(), inputs(), strict=False)
    with pytest.raises(doppler.DopplerError, match="structure"):
        doppler.export(ep, (torch.randn(2, 4), torch.randn(2)))


def test_exported_program_with_different_inputs_shape_is_an_error():
    ep = torch.export.export(Kinds().eval(), inputs(), strict=False)
    with pytest.raises(doppler.DopplerError, match="constraints"):
        doppler.export(ep, (torch.randn(5, 4),))


@needs_tools
def test_exported_program_runs():
    module = Kinds().eval()
    ep = torch.export.export(module, inputs(), strict=False)
    result = doppler.run(ep, inputs(), devices=2, system="cpu4", policy="round-robin",
                         repeat=1)
    with torch.no_grad():
        assert_close(result.outputs, module(*inputs()), 1e-5)

"""What the frontend refuses: one clear exception naming the op and the node,
never a wrong program. These need no tools."""

import pytest
import torch
import torch.nn as nn

import doppler
from conftest import Fn
from doppler.sources import has_export

# torch 2.x: modules come in through torch.export (aten node names); torch
# 1.x: through torch.fx.symbolic_trace (module and method names).
EXPORT = has_export()


def export_error(fn, *inputs):
    module = fn if isinstance(fn, nn.Module) else Fn(fn, len(inputs))
    with pytest.raises(doppler.DopplerError) as info:
        doppler.export(module, inputs)
    return info.value


class Sine(nn.Module):
    def forward(self, x):
        return torch.sin(x) + 1.0  # the line the error shows


def test_unsupported_function_names_op_node_and_line():
    error = export_error(Sine(), torch.randn(3, 4))
    assert isinstance(error, doppler.UnsupportedError)
    message = str(error)
    assert "sin" in message
    assert "FX node 'sin'" in message
    assert "the line the error shows" in message and "test_errors.py" in message
    assert error.node is not None and error.node.name == "sin"


def test_unsupported_method():
    error = export_error(lambda x: x.cumprod(1), torch.randn(3, 4))
    if EXPORT:
        assert "function 'aten.cumprod.default' is not supported" in str(error)
    else:
        assert "tensor method 'cumprod' is not supported" in str(error)


def test_unsupported_module():
    error = export_error(nn.Sequential(nn.Hardshrink(0.5)), torch.randn(3, 4))
    if EXPORT:  # decomposed: |x| compared with 0.5, a bool tensor from data
        assert "comparison of computed tensors" in str(error)
        assert "FX node 'le'" in str(error)
    else:
        assert "module Hardshrink is not supported" in str(error)
        assert "FX node '_0'" in str(error)


def test_data_dependent_value():
    error = export_error(lambda x: x * x.sum().item(), torch.randn(3, 4))
    assert "data-dependent" in str(error)


def test_dropout_in_training_mode():
    module = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.1)).train()
    error = export_error(module, torch.randn(2, 4))
    assert "dropout in training mode" in str(error) and "eval()" in str(error)
    doppler.export(module.eval(), (torch.randn(2, 4),))  # fine in eval mode


def test_integer_input_in_arithmetic_is_a_derived_input():
    """An integer input read as a float tensor is converted by torch on the
    host and passed as an input argument of the program's type."""
    program = doppler.exported(Fn(lambda x, i: x + i, 2), (torch.randn(3), torch.arange(3)))
    inputs = [a for a in program.arguments if a.kind == "input"]
    assert len(inputs) == 2 and inputs[1].tensor.dtype == torch.float32
    assert torch.equal(inputs[1].tensor, torch.arange(3.0))


def test_integer_result_from_float_data():
    error = export_error(lambda x: x.long() * 2, torch.randn(3))
    assert "int64" in str(error)


def test_indexing_with_an_index_input_is_a_gather():
    """x[idx] at an integer input: a doppler.gather at the indices, a
    derived input (no longer an error)."""
    class M(nn.Module):
        def forward(self, x, idx):
            return x[idx] * 2.0

    x, idx = torch.randn(4, 3), torch.tensor([0, 2, 2])
    program = doppler.exported(M(), (x, idx))
    assert "doppler.gather" in program.mlir


def test_mask_computed_from_inputs():
    error = export_error(lambda x: x.masked_fill(x > 0, 0.0), torch.randn(3, 4))
    assert "comparison of computed tensors" in str(error) and "FX node 'gt'" in str(error)


def test_mixed_dtypes():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(4, dtype=torch.float64))

        def forward(self, x):
            return x.double() * self.w

    error = export_error(M(), torch.randn(2, 4))
    assert "float64" in str(error)


def test_mask_from_a_bool_input_is_a_derived_input():
    """A mask computed from a bool input alone is computed by torch on the
    host: its float forms are input arguments."""
    class M(nn.Module):
        def forward(self, x, keep):
            return x.masked_fill(~keep, 0.0)

    keep = torch.tensor([[True, False, True, True], [False, True, True, False]])
    program = doppler.exported(M(), (torch.randn(2, 4), keep))
    derived = [a for a in program.arguments if a.kind == "input"][1:]
    assert derived and all("from input 1" in a.source for a in derived)
    assert any(torch.equal(a.tensor, keep.float()) for a in derived)


def test_mask_from_a_float_input():
    error = export_error(lambda x: x.masked_fill(x > 0, 0.0), torch.randn(2, 4))
    assert "comparison of computed tensors" in str(error)


def test_strided_slice():
    """x[:, ::2]: the dim viewed as (blocks, step) and sliced (no gather,
    no slice per element; no longer an error)."""
    x = torch.randn(3, 5)
    program = doppler.exported(Fn(lambda a: a[:, 1::2] + 1.0, 1), (x,))
    assert "doppler.gather" not in program.mlir and program.mlir.count("doppler.slice") <= 2


def test_max_with_dim_indices():
    """torch.max(x, dim) gives the values; its indices are not computed."""
    x = torch.randn(3, 4)
    program = doppler.exported(Fn(lambda a: torch.max(a, dim=1)[0], 1), (x,))
    assert "agg(max)" in program.mlir
    error = export_error(lambda a: a + torch.max(a, dim=1, keepdim=True)[1], x)
    assert "indices of max" in str(error) and "amax" in str(error)


def test_wrong_input_count():
    with pytest.raises(doppler.DopplerError, match="takes 2 input"):
        doppler.export(Fn(lambda a, b: a + b, 2), (torch.randn(3),))


def test_untraceable_module_says_how():
    """symbolic_trace cannot unpack a shape; make_fx's aten-level graph
    stands in, with a warning that says why. A module neither can trace
    (data-dependent control flow) is an error that says how to write it."""

    class Unpacks(nn.Module):
        def forward(self, x):
            b, t = x.shape
            return x * t

    class Branches(nn.Module):
        def forward(self, x):
            return x + 1.0 if x.max() > 0 else x

    if EXPORT:  # torch.export unpacks shapes; data-dependent branches are its error
        assert "doppler.einsum" in doppler.export(Unpacks(), (torch.randn(2, 3),))
        with pytest.raises(doppler.DopplerError, match="torch.export.export failed on Branches"):
            doppler.export(Branches(), (torch.randn(2, 3),))
        return
    with pytest.warns(UserWarning, match="cannot trace Unpacks"):
        text = doppler.export(Unpacks(), (torch.randn(2, 3),))
    assert "doppler.einsum" in text
    with pytest.raises(doppler.DopplerError, match="indexing.*make_fx failed as well"):
        doppler.export(Branches(), (torch.randn(2, 3),))


def test_embedding_with_computed_indices():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.e = nn.Embedding(5, 3)

        def forward(self, x, ids):
            return self.e((x[:, 0] * 2).long()) + x

    error = export_error(M(), torch.rand(2, 3), torch.tensor([0, 1]))
    assert "int64" in str(error) or "embedding indices" in str(error)


def test_embedding_with_indices_computed_from_an_input():
    """ids + 1 is computed by torch on the host: an i64 derived input."""
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.e = nn.Embedding(5, 3)

        def forward(self, x, ids):
            return self.e(ids + 1) + x

    ids = torch.tensor([0, 3])
    program = doppler.exported(M(), (torch.randn(2, 3), ids))
    indices = [a for a in program.arguments if a.name.endswith(".ids")]
    assert len(indices) == 1 and indices[0].kind == "input"
    assert torch.equal(indices[0].tensor, ids + 1)
    assert "doppler.gather" in program.mlir and "xi64>" in program.mlir


def test_inplace_with_a_later_reader():
    """A graph with operator.iadd whose input is read again afterwards
    (symbolic_trace itself records `y += 1` as an add; other producers may not)."""
    import operator

    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    y = graph.call_function(operator.mul, (x, 2.0))
    graph.call_function(operator.iadd, (y, 1.0))
    graph.output(graph.call_function(operator.mul, (y, 3.0)))
    gm = torch.fx.GraphModule(nn.Module(), graph)
    error = export_error(gm, torch.randn(3))
    assert "in-place op whose input 'mul' is read again" in str(error)


def test_inplace_rebinding_is_fine():
    def f(x):
        y = x * 2.0
        y += 1.0
        return torch.relu(y)

    doppler.export(Fn(f, 1), (torch.randn(3),))
    module = nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True))
    doppler.export(module, (torch.randn(2, 3),))

"""The Core ATen coverage (doppler.core_aten, docs/CoreAten.md): every Core
ATen overload of the installed torch is in exactly one of its lists; every
covered one has an emitter and a case here whose exported, decomposed graph
holds that overload; the cases run through Doppler like torch. torch 2.x
only (torch 1.13 has no Core ATen tags)."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import doppler
from conftest import _tools_available, needs_tools
from doppler import core_aten
from doppler.sources import has_export

pytestmark = pytest.mark.skipif(not has_export() or not core_aten.core_overloads(),
                                reason="torch.export and Core ATen tags (torch 2.6+) needed")

aten = torch.ops.aten
TOOLS = _tools_available()
g = torch.Generator().manual_seed(0)


def r(*shape):
    return torch.randn(*shape, generator=g)


def pos(*shape):
    return torch.rand(*shape, generator=g) + 0.5


def _bn(track=True):
    bn = nn.BatchNorm2d(3, track_running_stats=track)
    with torch.no_grad():
        bn.weight.uniform_(0.5, 1.5, generator=g)
        bn.bias.uniform_(-0.5, 0.5, generator=g)
        if track:
            bn.running_mean.uniform_(-1, 1, generator=g)
            bn.running_var.uniform_(0.5, 2, generator=g)
    return bn.eval()


def _call_graph(overload, *args):
    """A GraphModule calling `overload` on its input (for an overload that
    neither export nor make_fx writes: make_fx records var.dim as
    var.correction)."""
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(overload, (x,) + args))
    return torch.fx.GraphModule(nn.Module(), graph)


# overload -> (function or module, inputs): the smallest use that exports to it.
CASES = {
    "_adaptive_avg_pool2d.default": (lambda x: F.adaptive_avg_pool2d(x, (3, 2)), (r(1, 2, 5, 4),)),
    "_adaptive_avg_pool3d.default": (lambda x: F.adaptive_avg_pool3d(x, 2), (r(1, 2, 4, 4, 3),)),
    # torch writes both as their 2-d forms (export and make_fx alike).
    "adaptive_avg_pool1d.default": (
        _call_graph(torch.ops.aten.adaptive_avg_pool1d.default, [3]), (r(1, 2, 7),)),
    "avg_pool1d.default": (
        _call_graph(torch.ops.aten.avg_pool1d.default, [3], [2], [1]), (r(1, 2, 8),)),
    "_cdist_forward.default": (lambda a, b: torch.cdist(a, b, p=3), (r(2, 4, 3), r(2, 5, 3))),
    "_embedding_bag.default": (nn.EmbeddingBag(10, 4, mode="mean"),
                               (torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]), torch.tensor([0, 4, 4]))),
    "_log_softmax.default": (lambda x: F.log_softmax(x, -1), (r(3, 5),)),
    "_pdist_forward.default": (F.pdist, (r(5, 3),)),
    "_native_batch_norm_legit.no_stats": (_bn(track=False), (r(2, 3, 4, 4),)),
    "_native_batch_norm_legit_no_training.default": (_bn(), (r(2, 3, 4, 4),)),
    "_softmax.default": (lambda x: F.softmax(x, 0), (r(3, 5),)),
    "_to_copy.default": (lambda x: aten._to_copy.default(x, dtype=torch.float32) * 2, (r(3),)),
    "abs.default": (torch.abs, (r(3, 4),)),
    "add.Scalar": (lambda x: aten.add.Scalar(x, 2.5), (r(3, 4),)),
    "add.Tensor": (lambda x, y: torch.add(x, y, alpha=2), (r(3, 4), r(4))),
    "addmm.default": (lambda b, x, w: torch.addmm(b, x, w, beta=0.5), (r(5), r(3, 4), r(4, 5))),
    "alias.default": (lambda x: aten.alias.default(x) * 2, (r(3),)),
    "amax.default": (lambda x: torch.amax(x, 1), (r(3, 4),)),
    "amin.default": (lambda x: torch.amin(x, 0), (r(3, 4),)),
    "as_strided.default": (lambda x: (x * 1).as_strided((3, 3), (2, 1)), (r(8),)),
    "avg_pool2d.default": (lambda x: F.avg_pool2d(x, 3, 2, 1), (r(1, 2, 6, 6),)),
    "avg_pool3d.default": (lambda x: F.avg_pool3d(x, 2), (r(1, 2, 4, 4, 4),)),
    "bmm.default": (torch.bmm, (r(2, 3, 4), r(2, 4, 5))),
    "cat.default": (lambda x, y: torch.cat([x, y], 1), (r(2, 3), r(2, 2))),
    "clamp.default": (lambda x: x.clamp(-0.5, 0.5), (r(3, 4),)),
    "clamp.Tensor": (lambda x, lo: torch.clamp(x, min=lo), (r(3, 4), r(4))),
    "clone.default": (lambda x: aten.clone.default(x) + 1, (r(3),)),
    "constant_pad_nd.default": (lambda x: F.pad(x, (1, 2), value=0.5), (r(2, 3),)),
    "convolution.default": (nn.Conv2d(2, 4, 3, padding=1, groups=2), (r(1, 2, 5, 5),)),
    "copy.default": (lambda x, y: aten.copy.default(x, y) * x, (r(2, 3), r(3))),
    "cumsum.default": (lambda x: torch.cumsum(x, 1), (r(2, 5),)),
    "diagonal.default": (lambda x: torch.diagonal(x * 1, 1) * 2, (r(4, 5),)),
    "div.Scalar": (lambda x: aten.div.Scalar(x, 4.0), (r(3),)),
    "div.Tensor": (torch.div, (r(3, 4), pos(4))),
    "elu.default": (F.elu, (r(3, 4),)),
    "embedding.default": (nn.Embedding(10, 4), (torch.tensor([[1, 3, 3, 9]]),)),
    "erf.default": (torch.erf, (r(3, 4),)),
    "exp.default": (torch.exp, (r(3, 4),)),
    "expand.default": (lambda x: x.expand(3, 4) * 1, (r(1, 4),)),
    "expm1.default": (torch.expm1, (r(3, 4),)),
    "fill.Scalar": (lambda x: aten.fill.Scalar(x, 1.5) * x, (r(3),)),
    "flip.default": (lambda x: x.flip(1), (r(2, 5),)),
    "full_like.default": (lambda x: x + torch.full_like(x, 2.0), (r(3),)),
    "gather.default": (lambda x: torch.gather(x, 1, torch.tensor([[0, 0, 2], [1, 2, 0]])),
                       (r(2, 3),)),
    "gelu.default": (F.gelu, (r(3, 4),)),
    "hardtanh.default": (F.hardtanh, (2 * r(3, 4),)),
    "index.Tensor": (lambda x: x[:, torch.tensor([2, 0, 2, 1, 3])], (r(2, 4),)),
    "index_put.default": (lambda x, v: torch.index_put(x, (torch.tensor([0, 2]),), v),
                          (r(3, 4), r(4))),
    "index_select.default": (lambda x: torch.index_select(x, 0, torch.tensor([2, 0, 2, 1])),
                             (r(3, 4),)),
    "leaky_relu.default": (lambda x: F.leaky_relu(x, 0.1), (r(3, 4),)),
    "log.default": (torch.log, (pos(3, 4),)),
    "log10.default": (torch.log10, (pos(3, 4),)),
    "log1p.default": (torch.log1p, (pos(3, 4),)),
    "log2.default": (torch.log2, (pos(3, 4),)),
    "masked_scatter.default": (lambda x, s: x.masked_scatter(
        torch.tensor([[True, False, True], [False, False, True]]), s), (r(2, 3), r(5))),
    "max.dim": (lambda x: torch.max(x, 1).values, (r(3, 4),)),
    "max_pool2d_with_indices.default": (lambda x: F.max_pool2d(x, 2), (r(1, 2, 4, 4),)),
    "max_pool3d_with_indices.default": (lambda x: F.max_pool3d(x, 2), (r(1, 2, 4, 4, 4),)),
    "maximum.default": (torch.maximum, (r(3, 4), r(3, 4))),
    "mean.default": (lambda x: x * x.mean(), (r(3, 4),)),
    "mean.dim": (lambda x: x.mean(1), (r(3, 4),)),
    "min.dim": (lambda x: torch.min(x, 0).values, (r(3, 4),)),
    "minimum.default": (torch.minimum, (r(3, 4), r(4))),
    "mm.default": (torch.mm, (r(3, 4), r(4, 2))),
    "mul.Scalar": (lambda x: aten.mul.Scalar(x, 3.0), (r(3),)),
    "mul.Tensor": (torch.mul, (r(3, 4), r(3, 1))),
    "native_dropout.default": (lambda x: aten.native_dropout.default(x, 0.5, False)[0],
                               (r(3, 4),)),
    "native_group_norm.default": (nn.GroupNorm(2, 4), (r(2, 4, 3, 3),)),
    "native_layer_norm.default": (nn.LayerNorm(4), (r(3, 4),)),
    "neg.default": (torch.neg, (r(3, 4),)),
    "permute.default": (lambda x: x.permute(2, 0, 1) * 1, (r(2, 3, 4),)),
    "pow.Scalar": (lambda x: 2.0 ** x, (r(3, 4),)),
    "pow.Tensor_Scalar": (lambda x: x ** 1.7, (pos(3, 4),)),
    "pow.Tensor_Tensor": (torch.pow, (pos(3, 4), r(4))),
    "prod.default": (lambda x: x * torch.prod(x), (pos(2, 3),)),
    "prod.dim_int": (lambda x: torch.prod(x, 1), (pos(2, 3),)),
    "reciprocal.default": (torch.reciprocal, (pos(3, 4),)),
    "reflection_pad1d.default": (lambda x: F.pad(x, (2, 1), mode="reflect"), (r(1, 2, 5),)),
    "reflection_pad2d.default": (lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"),
                                 (r(1, 2, 4, 5),)),
    "reflection_pad3d.default": (lambda x: F.pad(x, (1, 1, 1, 0, 0, 1), mode="reflect"),
                                 (r(1, 2, 3, 3, 3),)),
    "relu.default": (torch.relu, (r(3, 4),)),
    "repeat.default": (lambda x: x.repeat(2, 1), (r(2, 3),)),
    "replication_pad2d.default": (lambda x: F.pad(x, (1, 2, 2, 1), mode="replicate"),
                                  (r(1, 2, 4, 5),)),
    "replication_pad3d.default": (lambda x: F.pad(x, (1, 1, 1, 0, 0, 1), mode="replicate"),
                                  (r(1, 2, 3, 3, 3),)),
    "rsqrt.default": (torch.rsqrt, (pos(3, 4),)),
    "scatter.src": (lambda x, s: torch.scatter(x, 1, torch.tensor([[2, 0], [1, 3]]), s),
                    (r(2, 4), r(2, 2))),
    "scatter.value": (lambda x: torch.scatter(x, 1, torch.tensor([[2, 0], [1, 3]]), 1.5),
                      (r(2, 4),)),
    "scatter_add.default": (lambda x, s: torch.scatter_add(
        x, 1, torch.tensor([[2, 0, 2], [1, 3, 1]]), s), (r(2, 4), r(2, 5))),
    "scatter_reduce.two": (lambda x, s: torch.scatter_reduce(
        x, 0, torch.tensor([[1, 0], [1, 1]]), s, "sum"), (r(2, 4), r(2, 2))),
    "select.int": (lambda x: x[:, 1] * 2, (r(3, 4),)),
    "select_scatter.default": (lambda x, y: torch.select_scatter(x, y, 0, 1), (r(3, 4), r(4))),
    "sigmoid.default": (torch.sigmoid, (r(3, 4),)),
    "slice.Tensor": (lambda x: x[:, 1::2] * 2, (r(3, 7),)),
    "slice_scatter.default": (lambda x, y: torch.slice_scatter(x, y, 1, 0, 6, 2),
                              (r(2, 6), r(2, 3))),
    "split_with_sizes.default": (lambda x: torch.split(x, [1, 3], 1)[1] * 2, (r(2, 4),)),
    "sqrt.default": (torch.sqrt, (pos(3, 4),)),
    "squeeze.dim": (lambda x: x.squeeze(1) * 2, (r(3, 1, 4),)),
    "squeeze.dims": (lambda x: x.squeeze((1, 3)) * 2, (r(3, 1, 4, 1),)),
    "sub.Scalar": (lambda x: aten.sub.Scalar(x, 1.5), (r(3),)),
    "sub.Tensor": (torch.sub, (r(3, 4), r(4))),
    "sum.dim_IntList": (lambda x: x.sum((0, 2)), (r(2, 3, 4),)),
    "tanh.default": (torch.tanh, (r(3, 4),)),
    "unsqueeze.default": (lambda x: x.unsqueeze(1) * 2, (r(3, 4),)),
    "upsample_bilinear2d.vec": (lambda x: F.interpolate(x, size=(5, 7), mode="bilinear"),
                                (r(1, 2, 3, 4),)),
    "upsample_nearest2d.vec": (lambda x: F.interpolate(x, scale_factor=2, mode="nearest"),
                               (r(1, 2, 3, 4),)),
    "var.correction": (lambda x: torch.var(x, 1, correction=0), (r(3, 5),)),
    "var.dim": (_call_graph(aten.var.dim, [1], True), (r(3, 5),)),
    "view.default": (lambda x: x.view(4, 3) * 2, (r(3, 4),)),
    "where.self": (lambda x: torch.where(torch.tensor([True, False, True]), x, 0.5),
                   (r(2, 3),)),
}


class Case(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _module(name):
    fn, inputs = CASES[name]
    module = fn if isinstance(fn, nn.Module) else Case(fn)
    torch.manual_seed(0)
    return module.eval(), inputs


def test_lists_are_those_of_this_torch():
    ops = set(core_aten.core_overloads())
    listed = [set(core_aten.COVERED), set(core_aten.HOST), set(core_aten.NOT_COVERED)]
    assert not (listed[0] & listed[1] or listed[0] & listed[2] or listed[1] & listed[2])
    everything = listed[0] | listed[1] | listed[2]
    assert not ops - everything, f"Core ATen ops in no list (new in this torch?): " \
                                 f"{sorted(ops - everything)}"
    assert not everything - ops, f"listed ops this torch does not tag core (stale): " \
                                 f"{sorted(everything - ops)}"


def test_covered_ops_have_emitters_and_cases():
    covered = set(core_aten.COVERED)
    assert set(CASES) == covered, (f"without a case: {sorted(covered - set(CASES))}; "
                                   f"cases of ops not listed covered: "
                                   f"{sorted(set(CASES) - covered)}")
    assert [op for op in covered if not core_aten.has_emitter(op)] == []
    # An op listed as not covered has no emitter, unless its packet's emitter
    # serves a covered overload and refuses this one (div's rounding modes).
    stale = [op for op in core_aten.NOT_COVERED if core_aten.has_emitter(op) and not any(
        c.split(".")[0] == op.split(".")[0] for c in covered)]
    assert stale == [], f"listed as not covered but the table has an emitter: {stale}"


def _targets(program):
    return {str(n.target) for n in program.graph_module.graph.nodes if n.op == "call_function"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_case_holds_its_op_and_imports(name):
    """The case's decomposed export holds the op; where torch's own
    decompositions rewrite it (reflection pads become an index, fill a
    full_like), make_fx's aten graph of the case does, as graphs handed
    over as GraphModules have them; it is run here (the decomposed form
    runs in test_cases_run_like_torch)."""
    module, inputs = _module(name)
    program = doppler.exported(module, inputs)
    if f"aten.{name}" in _targets(program):
        assert "doppler." in program.mlir
        return
    from torch.fx.experimental.proxy_tensor import make_fx
    graph = make_fx(module)(*inputs)
    program = doppler.exported(graph, inputs)
    assert f"aten.{name}" in _targets(program), f"the case holds {sorted(_targets(program))}"
    if TOOLS:
        result = doppler.run(graph, inputs, devices=2, system="cpu4")
        with torch.no_grad():
            want = module(*inputs)
        error = float((result.outputs - want).abs().max() / want.abs().max())
        assert error <= 1e-5, f"{name}: relative error {error:.3g}"


@needs_tools
def test_cases_run_like_torch():
    """Every case in one program (one placement and run on 2 devices)."""
    names = sorted(CASES)
    parts = [_module(n) for n in names]

    class All(nn.Module):
        def __init__(self):
            super().__init__()
            self.parts = nn.ModuleList(m for m, _ in parts)

        def forward(self, *flat):
            out, k = [], 0
            for m, (_, inputs) in zip(self.parts, parts):
                out.append(m(*flat[k:k + len(inputs)]))
                k += len(inputs)
            return tuple(out)

    flat = tuple(t for _, inputs in parts for t in inputs)
    model = All().eval()
    with torch.no_grad():
        expected = model(*flat)
    result = doppler.run(model, flat, devices=2, system="cpu4")
    for name, got, want in zip(names, result.outputs, expected):
        scale = float(want.abs().max()) or 1.0
        error = float((got - want).abs().max()) / scale
        assert error <= 1e-5, f"{name}: relative error {error:.3g}"


def test_uncovered_op_names_itself():
    """An op of the not-covered list keeps its error naming the op."""
    with pytest.raises(doppler.UnsupportedError, match="aten.sin"):
        doppler.export(Case(lambda x: torch.sin(x) * 2), (r(3),))

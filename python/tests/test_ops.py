"""Every supported op family, run through Doppler (round-robin on 2 CPU
devices, so every program also crosses devices) and compared with torch."""


import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import doppler
from conftest import check_run, needs_tools
from doppler.sources import has_export

# torch 2.x: modules come in through torch.export; torch 1.x: symbolic_trace.
EXPORT = has_export()

pytestmark = needs_tools

torch.manual_seed(0)


def r(*shape):
    return torch.randn(*shape)


def pos(*shape):
    return torch.rand(*shape) + 0.5


def batch_norm(cls, channels, **kwargs):
    """A batch norm in inference with running statistics and affine
    parameters away from their initial 0 / 1."""
    bn = cls(channels, **kwargs)
    with torch.no_grad():
        for p in bn.parameters():
            p.uniform_(0.5, 1.5)
        if bn.running_mean is not None:
            bn.running_mean.uniform_(-1.0, 1.0)
            bn.running_var.uniform_(0.5, 2.0)
    return bn.eval()


CASES = {
    # matrix products
    "linear": (nn.Linear(8, 6), (r(4, 8),)),
    "linear_nobias_3d": (nn.Linear(8, 6, bias=False), (r(2, 3, 8),)),
    "F.linear": (lambda x, w, b: F.linear(x, w, b), (r(4, 8), r(6, 8), r(6))),
    "addmm": (lambda b, x, w: torch.addmm(b, x, w, beta=0.5, alpha=2.0), (r(6), r(4, 8), r(8, 6))),
    "matmul_broadcast": (lambda a, b: a @ b, (r(2, 3, 4, 5), r(5, 6))),
    "matmul_batch_broadcast": (lambda a, b: torch.matmul(a, b), (r(2, 1, 4, 5), r(3, 5, 6))),
    "matmul_vector": (lambda a, v: a @ v, (r(3, 4, 5), r(5))),
    "vector_matmul": (lambda v, a: v @ a, (r(4), r(4, 5))),
    "bmm_transposed": (lambda a, b: torch.bmm(a, b.transpose(1, 2)), (r(2, 4, 5), r(2, 6, 5))),
    "einsum": (lambda a, b: torch.einsum("bij,bkj->bik", a, b), (r(2, 3, 4), r(2, 5, 4))),
    # arithmetic with broadcasting and scalars
    "add_broadcast_unit": (lambda a, b: a + b, (r(4, 1, 6), r(5, 6))),
    "sub_scalar_both_sides": (lambda x: (x - 2.0) * (3.0 - x), (r(3, 4),)),
    "mul_div": (lambda a, b: a * b / 3.0 + a / 4.0, (r(3, 4), r(4))),
    "rdiv": (lambda x: 1.5 / x, (pos(3, 4),)),
    "add_alpha": (lambda a, b: torch.add(a, b, alpha=0.5), (r(3, 4), r(3, 4))),
    "pow": (lambda x: x ** 2 + x ** 3 + torch.pow(x, 0.5) + x.pow(-1.0) + x ** 1.7, (pos(3, 4),)),
    "rpow": (lambda x: 2.0 ** x, (r(3, 4),)),
    "tensor_pow": (lambda x, y: torch.pow(x, y), (pos(3, 4), r(4))),
    "neg_abs": (lambda x: -x + x.abs(), (r(3, 4),)),
    "max_min": (lambda a, b: torch.maximum(a, b) - torch.minimum(a, 0.1 * b), (r(3, 4), r(3, 4))),
    "clamp": (lambda x: x.clamp(-0.5, 0.7) + torch.clamp(x, min=0.1), (r(3, 4),)),
    # activations
    "relu": (nn.ReLU(), (r(3, 4),)),
    "gelu_erf": (lambda x: F.gelu(x), (3 * r(5, 7),)),
    "gelu_tanh": (nn.GELU(approximate="tanh"), (3 * r(5, 7),)),
    "erf": (lambda x: torch.erf(x), (2 * r(5, 7),)),
    "silu_tanh_sigmoid": (lambda x: F.silu(x) + torch.tanh(x) * torch.sigmoid(x), (r(3, 4),)),
    "exp_log_sqrt_rsqrt": (lambda x: x.exp() + x.log() + x.sqrt() + torch.rsqrt(x), (pos(3, 4),)),
    # reductions
    "mean_sum_keepdim": (lambda x: x.mean(-1, keepdim=True) + x.sum(dim=1, keepdim=True),
                         (r(2, 3, 4),)),
    "amax_multi": (lambda x: torch.amax(x, dim=(0, 2)), (r(2, 3, 4),)),
    "sum_all": (lambda x: x.sum(), (r(3, 4),)),
    "mean_all_times": (lambda x: x * x.mean(), (r(3, 4),)),
    "var_std": (lambda x: x.var(-1, keepdim=True) + x.std(dim=0), (r(4, 4),)),
    "var_biased": (lambda x: torch.var(x, dim=-1, unbiased=False), (r(3, 5),)),
    # normalisations
    "softmax": (lambda x: F.softmax(x, dim=-1) + torch.softmax(x, 0), (r(3, 5),)),
    "log_softmax": (lambda x: F.log_softmax(x, dim=1), (r(3, 5),)),
    "layer_norm": (nn.LayerNorm(8), (r(2, 3, 8),)),
    "layer_norm_2d": (nn.LayerNorm([3, 8]), (r(2, 3, 8),)),
    "batch_norm_1d": (nn.Sequential(nn.Linear(8, 6), batch_norm(nn.BatchNorm1d, 6)), (r(4, 8),)),
    "batch_norm_1d_sequence": (nn.Sequential(batch_norm(nn.BatchNorm1d, 3), nn.ReLU()),
                               (r(2, 3, 5),)),
    "batch_norm_2d_no_affine": (nn.Sequential(batch_norm(nn.BatchNorm2d, 3, affine=False)),
                                (r(2, 3, 4, 5),)),
    "F.batch_norm": (lambda x, w: F.batch_norm(x, w[0], w[1] + 1.0, w[2], w[3], eps=1e-3),
                     (r(4, 3, 2), pos(4, 3))),
    "rms_norm_by_hand": (lambda x, w: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w,
                         (r(2, 3, 8), r(8))),
    "group_norm": (nn.GroupNorm(2, 4), (r(2, 4, 3, 5),)),
    "F.group_norm": (lambda x, w, b: F.group_norm(x, 3, w, b), (r(2, 6, 4), r(6), r(6))),
    "F.pad": (lambda x: F.pad(x, (1, 2, 0, 1), value=0.5) + F.pad(x, (-1, 1, 0, 0)).sum(),
              (r(2, 3, 4),)),
    # convolutions (stride 1: per-offset contractions and adds)
    "conv1d": (nn.Conv1d(4, 6, 3), (r(2, 4, 9),)),
    # transposed: the adjoint convolution over the zero-filled input, kernel flipped
    "conv_transpose2d": (nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1),
                         (r(1, 4, 5, 5),)),
    "conv_transpose1d_groups": (lambda x, w: F.conv_transpose1d(x, w, stride=3, padding=1,
                                                                groups=2, dilation=2),
                                (r(2, 4, 6), r(4, 3, 3))),
    "cdist": (lambda a, b: torch.cdist(a, b), (r(2, 4, 3), r(2, 5, 3))),
    # upsampling: a gather (nearest) or an einsum with the interpolation matrix per dim
    "interpolate": (lambda x: F.interpolate(x, size=(5, 7), mode="bilinear") +
                    F.interpolate(x, size=(5, 7), mode="nearest"), (r(1, 2, 3, 4),)),
    "conv1d_padding_dilation": (nn.Conv1d(4, 6, 3, padding=2, dilation=2), (r(2, 4, 9),)),
    "conv1d_same_groups": (nn.Conv1d(4, 8, 3, padding="same", groups=2), (r(2, 4, 9),)),
    "conv2d_padding": (nn.Sequential(nn.Conv2d(3, 5, 3, padding=1), nn.ReLU()), (r(2, 3, 5, 6),)),
    "conv2d_depthwise_no_bias": (nn.Conv2d(4, 4, (3, 2), groups=4, bias=False), (r(1, 4, 5, 5),)),
    "conv2d_unbatched": (nn.Conv2d(3, 2, 2), (r(3, 4, 4),)),
    "F.conv2d": (lambda x, w: F.conv2d(x, w, padding=(1, 0)), (r(2, 3, 4, 5), r(2, 3, 3, 3))),
    "conv2d_stride_padding": (nn.Conv2d(3, 4, 3, stride=2, padding=1), (r(2, 3, 8, 9),)),
    "conv1d_stride_dilation": (nn.Conv1d(3, 4, 3, stride=3, dilation=2), (r(2, 3, 17),)),
    # pooling (the same windows; strides take a slice per element)
    "max_pool2d": (nn.MaxPool2d(2), (r(2, 3, 8, 8),)),
    "max_pool2d_padding": (nn.MaxPool2d(3, stride=2, padding=1), (r(2, 3, 9, 8),)),
    "max_pool1d_stride1": (nn.MaxPool1d(3, stride=1), (r(2, 3, 9),)),
    "avg_pool2d_padding": (nn.AvgPool2d(3, stride=2, padding=1), (r(2, 3, 8, 8),)),
    "F.pools": (lambda x: F.max_pool2d(x, 2) + F.avg_pool2d(x, 2), (r(2, 3, 8, 8),)),
    "adaptive_avg_pool": (lambda x: F.adaptive_avg_pool2d(x, 1).flatten(1)
                          + F.adaptive_avg_pool2d(x, (2, 4)).sum((2, 3)), (r(2, 3, 8, 8),)),
    "resnet_stem": (nn.Sequential(nn.Conv2d(3, 8, 7, stride=2, padding=3, bias=False),
                                  batch_norm(nn.BatchNorm2d, 8), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                  nn.Linear(8, 10)), (r(2, 3, 32, 32),)),
    "small_cnn": (nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), batch_norm(nn.BatchNorm2d, 8),
                                nn.ReLU(), nn.Conv2d(8, 4, 3), nn.Flatten(), nn.Linear(64, 10)),
                  (r(2, 3, 6, 6),)),
    # views and layout
    "transpose_out": (lambda x: x.transpose(0, 1), (r(3, 4),)),
    "permute_reshape": (lambda x: x.permute(2, 0, 1).reshape(4, 6), (r(2, 3, 4),)),
    "view_split_heads": (lambda x: x.view(2, 3, 4, 2).transpose(1, 2) * 2.0, (r(2, 3, 8),)),
    "view_merge": (lambda x: x.transpose(1, 2).contiguous().view(2, 12), (r(2, 3, 4),)),
    "view_general": (lambda x: x.view(4, 6) + 0.0, (r(6, 4),)),
    "flatten": (lambda x: torch.flatten(x, 1) * 1.5, (r(2, 3, 4),)),
    "unsqueeze_expand": (lambda x: x.unsqueeze(1).expand(3, 5, 4), (r(3, 4),)),
    "expand_out": (lambda x: x.expand(2, 3, 4), (r(3, 1),)),
    "squeeze": (lambda x: x.squeeze(1) + 1.0, (r(3, 1, 4),)),
    "cat": (lambda a, b: torch.cat([a, b * 2.0], dim=1), (r(3, 2), r(3, 5))),
    "cat_transposed": (lambda a, b: torch.cat([a.t(), b], dim=0), (r(4, 3), r(2, 4))),
    "stack": (lambda a, b: torch.stack([a, b], dim=1), (r(3, 4), r(3, 4))),
    "chunk_split": (lambda x: x.chunk(2, dim=-1)[0] * x.split([1, 3], dim=-1)[1][..., :2],
                    (r(3, 4),)),
    "getitem": (lambda x: x[:, 1:3, None, -1] + x[0, :2, 2], (r(2, 4, 3),)),
    "select_narrow": (lambda x: x.select(1, 2) + x.narrow(1, 0, 1).squeeze(1), (r(3, 4),)),
    "repeat": (lambda x: x.repeat(2, 3) + 0.0, (r(2, 2),)),
    "input_unit_batch": (lambda x, w: (x @ w).view(1, 4, 2, 3).sum(-1), (r(1, 4, 5), r(5, 6))),
    # outputs
    "tuple_dict_outputs": (lambda x: (x * 2.0, {"a": x + 1.0, "b": [x.t()]}), (r(3, 4),)),
    "identity_output": (lambda x: x, (r(3, 4),)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_op(name):
    module, inputs = CASES[name]
    check_run(module, inputs)


class Masked(nn.Module):
    """masked_fill / where with a bool buffer: folded by torch, passed as arguments."""

    def __init__(self, t=5):
        super().__init__()
        self.register_buffer("keep", torch.tril(torch.ones(8, 8, dtype=torch.bool)))

    def forward(self, x):
        t = x.size(-1)
        a = x.masked_fill(~self.keep[:t, :t], float("-inf")).softmax(-1)
        b = torch.where(self.keep[:t, :t], x, 0.5)
        c = torch.where(self.keep[:t, :t], x, x * 2.0)
        return a + b + c


def test_masks_from_buffers():
    result = check_run(Masked(), (r(2, 5, 5),))
    kinds = [a.kind for a in result.placement.program.arguments]
    assert kinds[0] == "input" and set(kinds[1:]) == {"constant"}


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(11, 8)
        self.pos = nn.Embedding(16, 8)
        self.register_buffer("position_ids", torch.arange(16))

    def forward(self, ids):
        positions = self.position_ids[:ids.size(1)]  # folded: an i64 argument
        return self.tok(ids) + self.pos(positions)


def test_embedding_as_gather():
    ids = torch.tensor([[1, 5, 10, 0], [3, 3, 2, 7]])
    result = check_run(Embed(), (ids,))
    program = result.placement.program
    args = program.arguments
    assert args[0].name == "ids.ids" and torch.equal(args[0].tensor, ids)
    assert program.mlir.count("doppler.gather") == 2 and "one" not in args[0].name


def test_buffer_scalar_and_rank0():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", torch.tensor(0.25))

        def forward(self, x):
            return x * self.scale + x.sum()

    check_run(M(), (r(3, 4),))


def test_wrapped_sdpa_reference():
    """The scaled_dot_product_attention emitter, through a torch.fx.wrap'd stand-in
    (torch 1.13 has no F.scaled_dot_product_attention)."""
    import sdpa_reference

    doppler_ops = __import__("doppler.ops", fromlist=["_sdpa"])
    doppler_ops.register(sdpa_reference.sdpa)(doppler_ops._sdpa)
    q, k, v = r(2, 3, 5, 4), r(2, 3, 6, 4), r(2, 3, 6, 4)
    check_run(sdpa_reference.Attention(causal=False), (q, k, v))
    check_run(sdpa_reference.Attention(causal=True), (q, k[:, :, :5], v[:, :, :5]))
    check_run(sdpa_reference.Attention(causal=False, scale=0.3), (q, k, v))


@pytest.mark.skipif(not hasattr(F, "scaled_dot_product_attention"),
                    reason="this torch has no F.scaled_dot_product_attention")
def test_torch_sdpa():
    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    check_run(f, (r(2, 3, 5, 4), r(2, 3, 5, 4), r(2, 3, 5, 4)))


def test_graph_module_from_symbolic_trace():
    module = torch.fx.symbolic_trace(nn.Sequential(nn.Linear(6, 5), nn.Tanh(), nn.Linear(5, 2)))
    check_run(module, (r(3, 6),))


def test_batch_norm_needs_running_statistics():
    """Training mode is refused; without running statistics (and instance
    norm, aten's same form) the batch's statistics normalise."""
    x = r(4, 3)
    with pytest.raises(doppler.UnsupportedError, match="batch statistics"):
        doppler.export(nn.Sequential(nn.BatchNorm1d(3)).train(), (x,))
    if EXPORT:  # symbolic_trace's module emitter refuses both
        check_run(nn.Sequential(nn.BatchNorm1d(3, track_running_stats=False)).eval(), (x,))
        check_run(nn.Sequential(nn.InstanceNorm2d(3, affine=True)).eval(), (r(2, 3, 4, 5),))
    from torch.fx.experimental.proxy_tensor import make_fx
    block = nn.Sequential(nn.Linear(4, 3), batch_norm(nn.BatchNorm1d, 3))
    gm = make_fx(block)(r(5, 4))
    assert any("native_batch_norm" in str(n.target) for n in gm.graph.nodes)
    check_run(gm, (r(5, 4),))


def test_convolution_and_pooling_limits():
    """make_fx's aten ops (convolution, max_pool2d_with_indices, avg_pool2d,
    mean, _reshape_alias) take the same emitters; ceil_mode is extra high
    padding; adaptive average pooling to sizes that do not divide the
    input's is an einsum per dim, adaptive max pooling to them an error."""
    from torch.fx.experimental.proxy_tensor import make_fx
    cnn = nn.Sequential(nn.Conv2d(3, 4, 3, stride=2, padding=1), batch_norm(nn.BatchNorm2d, 4),
                        nn.ReLU(), nn.MaxPool2d(3, 2, 1), nn.AvgPool2d(2),
                        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))
    x = r(2, 3, 16, 16)
    gm = make_fx(cnn)(x)
    targets = {str(n.target) for n in gm.graph.nodes}
    assert {"aten.convolution.default", "aten.max_pool2d_with_indices.default"} <= targets
    check_run(gm, (x,))
    check_run(nn.Sequential(nn.MaxPool2d(2, ceil_mode=True)), (r(1, 3, 7, 7),))
    check_run(nn.Sequential(nn.AdaptiveAvgPool2d(3)), (r(1, 3, 8, 8),))  # averaging matrices
    with pytest.raises(doppler.UnsupportedError, match="divide"):
        doppler.export(nn.Sequential(nn.AdaptiveMaxPool2d(3)), (r(1, 3, 8, 8),))
    reflect = nn.Sequential(nn.Conv1d(3, 2, 3, padding=1, padding_mode="reflect"))
    if EXPORT:  # torch.export writes the padding as an index with constant indices
        check_run(reflect, (r(1, 3, 8),))
    else:
        with pytest.raises(doppler.UnsupportedError, match="padding_mode 'reflect'"):
            doppler.export(reflect, (r(1, 3, 8),))


def test_torch_modules_symbolic_trace_cannot_trace():
    """torch's nn.TransformerEncoderLayer, nn.MultiheadAttention, nn.LSTM and
    nn.GRU branch on flags and shapes: symbolic_trace fails and make_fx's
    aten-level graph is used, with a warning (under no_grad too: grad mode is kept on for make_fx,
    or torch would take its fused inference kernels)."""
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32,
                                       batch_first=True, dropout=0.0).eval()
    x = r(2, 5, 16)
    if EXPORT:  # torch.export traces them all
        with torch.no_grad():
            check_run(layer, (x,))
        check_run(nn.MultiheadAttention(16, 2, batch_first=True).eval(), (x, x, x))
        for recurrent in (nn.LSTM(16, 8, num_layers=2, batch_first=True), nn.GRU(16, 8)):
            check_run(recurrent.eval(), (x,))
        return
    with pytest.warns(UserWarning, match="make_fx's aten-level graph"):
        with torch.no_grad():
            check_run(layer, (x,))
    attention = nn.MultiheadAttention(16, 2, batch_first=True).eval()
    with pytest.warns(UserWarning, match="MultiheadAttention"):
        check_run(attention, (x, x, x))
    # Recurrent layers: functionalized, their in-place updates are
    # out-of-place ops (the output, and the final (h, c) states).
    for recurrent in (nn.LSTM(16, 8, num_layers=2, batch_first=True), nn.GRU(16, 8)):
        with pytest.warns(UserWarning, match="make_fx"):
            check_run(recurrent.eval(), (x,))


def test_data_dependent_control_flow_is_an_error():
    """make_fx refuses it as well, so no graph depends on the example values."""

    class Branch(nn.Module):
        def forward(self, x):
            return x * 2.0 if x.sum() > 0 else x - 1.0

    match = "torch.export.export failed on Branch" if EXPORT else \
        "symbolic_trace failed.*make_fx failed"
    with pytest.raises(doppler.DopplerError, match=match):
        doppler.export(Branch(), (r(3, 4),))


def test_make_fx_aten_graph():
    """An aten-level graph (make_fx; torch.export gives the same ops)."""
    from torch.fx.experimental.proxy_tensor import make_fx

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(8)
            self.fc = nn.Linear(8, 8)

        def forward(self, x):
            h = self.fc(self.ln(x))
            return F.softmax(h.view(2, 3, 2, 4).transpose(1, 2), dim=-1) * F.gelu(h).mean()

    block = Block().eval()
    x = r(2, 3, 8)
    gm = make_fx(block)(x)
    assert any("aten" in str(n.target) for n in gm.graph.nodes if n.op == "call_function")
    check_run(gm, (x,))


@pytest.mark.skipif(not hasattr(torch, "export"), reason="torch.export needs torch 2.x")
def test_torch_export_program():
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "examples", "torch"))
    import gpt_block

    block, inputs = gpt_block.make()
    exported = torch.export.export(block, inputs)
    import doppler

    result = doppler.run(exported, inputs, devices=2, system="cpu4", policy="round-robin",
                         repeat=1)
    from conftest import assert_close

    with torch.no_grad():
        assert_close(result.outputs, block(*inputs), 1e-4)


class Heads(nn.Module):
    """Head split after a linear, merge before one: both free (weights viewed)."""

    def __init__(self, bias=True):
        super().__init__()
        self.q = nn.Linear(16, 16, bias=bias)
        self.o = nn.Linear(16, 16, bias=bias)

    def forward(self, x):
        b = x.size(0)
        t = x.size(1)
        q = self.q(x).view(b, t, 4, 4).transpose(1, 2)
        s = torch.softmax(q @ q.transpose(-2, -1), dim=-1)
        y = (s @ q).transpose(1, 2).contiguous().view(b, t, 16)
        return self.o(y)


@pytest.mark.parametrize("bias", [True, False])
def test_head_split_and_merge_are_free(bias):
    import doppler

    module = Heads(bias)
    x = r(2, 5, 16)
    text = doppler.export(module, (x,))
    assert "doppler.slice" not in text and "doppler.assemble" not in text
    assert "%q.weight.4x4x16" in text and "%o.weight.16x4x4" in text
    assert "%q.weight:" not in text  # the unviewed weight is not an argument
    check_run(module, (x,))


def test_factored_value_used_elsewhere():
    """A merged (factored) value read by an elementwise op and returned: merged by ops."""
    def f(x):
        y = x.transpose(1, 2).contiguous().view(2, 3, 8)
        return y * 2.0, y.sum(-1)

    check_run(f, (r(2, 4, 3, 2),))


def stochastic_depth(input, p, mode, training=True):
    """Stands in for torchvision.ops.stochastic_depth (the table finds it by
    its qualified name, without importing torchvision; torch.fx.wrap'd
    there as here)."""
    if not training or p == 0.0:
        return input
    noise = torch.empty([input.shape[0]] + [1] * (input.dim() - 1)).bernoulli_(1.0 - p)
    return input * noise / (1.0 - p)


stochastic_depth.__module__ = "torchvision.ops.stochastic_depth"
torch.fx.wrap("stochastic_depth")


class StochasticDepth(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        return stochastic_depth(x, self.p, "row", self.training)


class Activations(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu6 = nn.ReLU6()
        self.hardswish = nn.Hardswish()
        self.hardsigmoid = nn.Hardsigmoid()
        self.leaky = nn.LeakyReLU(0.2)
        self.depth = StochasticDepth(0.2)

    def forward(self, x):
        y = self.relu6(x) + self.hardswish(x) + self.hardsigmoid(x) + self.leaky(x)
        return self.depth(y) + F.elu(x) + F.softplus(x) + torch.log1p(x.abs()) + F.relu6(x)


def test_piecewise_activations_and_stochastic_depth():
    check_run(Activations().eval(), (5 * r(4, 8),))
    match = "random numbers" if EXPORT else "stochastic depth in training"  # export: its body
    with pytest.raises(doppler.UnsupportedError, match=match):
        doppler.export(Activations().train(), (r(4, 8),))


class IdsView(nn.Module):
    """input_ids viewed, and a float mask made from them: computed by torch."""

    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(10, 6)

    def forward(self, ids, x):
        flat = ids.view(-1, ids.size(-1))
        mask = (flat > 0).float().unsqueeze(-1)
        return self.tok(flat) * mask + x


def test_integer_input_views_and_masks():
    ids = torch.tensor([[0, 3, 9, 2], [5, 0, 1, 1]])
    result = check_run(IdsView(), (ids, r(2, 4, 6)))
    inputs = [a for a in result.placement.program.arguments if a.kind == "input"]
    assert any(a.tensor.dtype == torch.int64 and tuple(a.tensor.shape) == (2, 4)
               for a in inputs)  # the ids, gathered
    assert any(tuple(a.tensor.shape) == (2, 4, 1) for a in inputs)  # the mask


def test_reshape_of_a_transposed_tensor_from_make_fx():
    """make_fx writes a reshape that is a view of a transposed tensor as
    _reshape_alias with non-contiguous strides: a reshape all the same."""
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(x):
        return x.t().reshape(6, 2, 2) * 2.0

    x = r(4, 6)
    gm = make_fx(f)(x)
    check_run(gm, (x,))


class AttentionBlock(nn.Module):
    """nn.MultiheadAttention as a submodule: a leaf of symbolic_trace."""

    def __init__(self, batch_first):
        super().__init__()
        self.attention = nn.MultiheadAttention(16, 4, batch_first=batch_first)
        self.register_buffer("causal", torch.triu(torch.ones(5, 5, dtype=torch.bool), 1))

    def forward(self, x):
        y = self.attention(x, x, x, need_weights=False)[0]
        z = self.attention(x, x, x, attn_mask=self.causal, need_weights=False)[0]
        return y + z


@pytest.mark.parametrize("batch_first", [True, False])
def test_multihead_attention_submodule(batch_first):
    x = r(2, 5, 16) if batch_first else r(5, 2, 16)  # (N, L, E) or (L, N, E)
    check_run(AttentionBlock(batch_first).eval(), (x,), tol=1e-5)

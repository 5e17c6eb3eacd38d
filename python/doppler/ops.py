"""The table from torch call targets to emitters.

An emitter gets the importer (`ctx`) and the node's arguments with FX nodes
replaced by their values: `Val` (a tensor of the program), `Const` (a value
computed by torch on the host: folded, or from integer inputs; `ctx.val`
turns it into an argument), `IntInput` (a Const: an integer user input), or plain
Python values. It returns a `Val` (or a list of them for tuple results).

Keys: Python callables (`torch.matmul`, `F.linear`, `operator.add`), tensor
method names (`"view"`), aten op packets (`"aten.mm"`, for graphs from
`torch.export` or `make_fx`) and leaf module types (`nn.Linear`).
`register()` adds entries (for user functions wrapped with torch.fx.wrap).

The table and its lookups are in `ops_table`; the emitters, which fill it on
import, by family: `ops_linalg` (matmul, linear, einsum), `ops_elementwise`
(arithmetic, activations), `ops_activations` (piecewise and composite
activations, safe softmax, full_like, stochastic depth), `ops_reduce`
(reductions, softmax, norms), `ops_pad_norm` (constant padding, group norm),
`ops_layout` (no-ops, views, reshapes, joining, slicing), `ops_index`
(indexing, gathers, reflection padding, upsampling, cumsum at positions
torch computes), `ops_attention`
(masks, embedding, scaled_dot_product_attention) and `ops_conv`
(convolutions, pooling); `ops_common` has the
argument helpers they share. This module imports them all and re-exports
the table.
"""

from . import (ops_activations, ops_attention, ops_conv, ops_elementwise,  # fill the table
               ops_index, ops_layout, ops_linalg, ops_pad_norm, ops_reduce)
from .ops_attention import _sdpa
from .ops_table import (ATEN, FUNCTIONS, METHODS, MODULES, NAMED, function_emitter,
                        module_emitter, register, register_module, target_name)

__all__ = ["FUNCTIONS", "ATEN", "METHODS", "MODULES", "NAMED", "register", "register_module",
           "function_emitter", "module_emitter", "target_name", "_sdpa",
           "ops_activations", "ops_attention", "ops_conv", "ops_elementwise", "ops_index",
           "ops_layout", "ops_linalg", "ops_pad_norm", "ops_reduce"]

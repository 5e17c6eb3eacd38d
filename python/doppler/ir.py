"""Writing doppler-dialect MLIR text: values with lazy views, and the ops.

A torch tensor is held as a `Val`: an SSA tensor of the program (its
*physical* shape) and a *view* of it: for every logical dimension of the
torch tensor, either the physical dimension that holds it, a tuple of
physical dimensions that hold it merged in row-major order (a *factored*
dimension: `x.view(B, T, H * E)` of a `[B, T, H, E]` value), or `Bcast(n)`,
a dimension the physical tensor does not have, along which the value is
constant (a broadcast or an inserted unit dimension). Transposes, permutes,
unsqueezes and expands are therefore free: they change the view, not the
program, and the einsums that consume the value index it accordingly (a
matmul with `k.transpose(-2, -1)` is one einsum "hqe,hke->hqk").

`Builder` emits the ops (`doppler.einsum`, `doppler.slice`,
`doppler.assemble`, `doppler.fill`, `doppler.reshape`, `doppler.conv`,
`doppler.pool`), each with a `loc("NAME")` naming the FX node it comes
from. A reshape that is not free as a view (a head split, a flatten of a
physical tensor, a squeeze of a physical unit dim) is one `doppler.reshape`
of the physical tensor, preceded by one einsum only where the value is a
permuted view (its physical dims out of logical order) or merges a
broadcast dim with physical ones.
"""

import math
import re

from .errors import DopplerError

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SSA = re.compile(r"%[\w.$-]+")


from .ir_values import (  # noqa: F401  (re-exported: the builder's value model)
    Bcast, Val, _between, _ordered, _refine, _regroup, _suffix_products, extent_of,
    is_factored, is_phys, members, mlir_float)


class Builder:
    """Accumulates the body of one func.func."""

    def __init__(self, dtype):
        self.dtype = dtype  # "f32", "f64" or "f16"
        self.lines = []
        self.counter = 0
        self.loc = "input"
        self._fills = {}
        self._reshapes = {}
        self._reshaped_from = {}  # SSA of a reshape's result -> its input (plain)
        # SSA of a constant padding's result -> (its input Val, the result's
        # view, [(before, after)] per logical dim, the value): a convolution
        # of it reads the input with the padding as its own.
        self.pads = {}
        # Set by the importer: split_argument(val, phys_dim, extents) -> the
        # argument `val` views with physical dim `phys_dim` split into
        # `extents` (a new argument, same view), or None when `val` is not
        # an argument. Lets contractions read factored dims without merges.
        self.split_argument = None

    # -- text ------------------------------------------------------------

    def type(self, shape, dtype=None):
        """The tensor type of `shape` (the program's float type, or `dtype`:
        "i32"/"i64" for gather indices)."""
        return "tensor<" + "".join(f"{int(d)}x" for d in shape) + (dtype or self.dtype) + ">"

    def _new(self, op_text, phys, dims=None):
        ssa = f"%v{self.counter}"
        self.counter += 1
        self.lines.append(f"  {ssa} = {op_text} loc(\"{self.loc}\")")
        if dims is None:
            dims = list(range(len(phys)))
        return Val(ssa, phys, dims, self.loc)

    def prune(self, results):
        """Drops the ops whose values neither `results` (Vals) nor a kept op
        reads (every op is pure): e.g. an intermediate reshape folded into
        the next one."""
        used = {r.ssa for r in results}
        kept = []
        for line in reversed(self.lines):
            ssa = line.split("=", 1)[0].strip()
            if ssa in used:
                kept.append(line)
                used.update(_SSA.findall(line.split("=", 1)[1]))
        self.lines = kept[::-1]

    # -- leaf ops -----------------------------------------------------------

    def fill(self, value, shape):
        """A constant tensor (shared by every use with the same value and shape)."""
        key = (float(value), tuple(shape))
        if key not in self._fills:
            self._fills[key] = self._new(
                f"doppler.fill {mlir_float(value)} : {self.type(shape)}", shape)
        return self._fills[key]

    def scalar(self, value):
        return self.fill(value, ())

    def gather(self, table, indices, index_type, axis=0):
        """doppler.gather of `table` (made plain) along `axis` at the plain
        integer tensor `indices` (element type `index_type`, "i32"/"i64"):
        shape table[:axis] + indices + table[axis + 1:]."""
        table = self.materialize(table)
        out = table.phys[:axis] + indices.phys + table.phys[axis + 1:]
        return self._new(
            f"doppler.gather {table.ssa}[{indices.ssa}] axis {int(axis)} : "
            f"{self.type(table.phys)}, {self.type(indices.phys, index_type)} -> "
            f"{self.type(out)}", out)

    def slice_phys(self, val, offsets, sizes):
        """doppler.slice of the physical tensor (same view)."""
        if list(offsets) == [0] * len(offsets) and tuple(sizes) == val.phys:
            return val
        out = self._new(
            f"doppler.slice {val.ssa} [{', '.join(str(int(o)) for o in offsets)}] : "
            f"{self.type(val.phys)} to {self.type(sizes)}", sizes, val.dims)
        return out

    def assemble_phys(self, blocks, grid, phys):
        types = ", ".join(self.type(b.phys) for b in blocks)
        return self._new(
            f"doppler.assemble [{', '.join(str(g) for g in grid)}] "
            f"({', '.join(b.ssa for b in blocks)}) : {types} -> {self.type(phys)}",
            phys, blocks[0].dims)

    # -- einsum -------------------------------------------------------------

    def einsum(self, operands, out_letters, out_shape, join, agg=None, scalar=None):
        """An einsum over logical letters.

        `operands`: (Val, letters) pairs, one letter per logical dimension.
        Broadcast dimensions of an operand take no part (the value is
        constant along them). Output letters that no operand holds
        physically become broadcast dimensions of the result. Letters that
        are contracted but held by no operand physically scale the result
        by their extent (for agg add). The result's physical layout is the
        logical order of its physical letters.

        Factored dims are read member by member (no merge) when every
        operand holding the letter holds it factored the same way, broadcast,
        or is an argument that can be viewed so; the result keeps them
        factored. Where operands hold a letter factored in different ways,
        the finer ones are first merged to the finest factoring all share
        (one reshape each), if that has two members or more. Other factored
        dims are merged first.
        """
        operands = self._common_factoring(operands)
        operands, out_letters, out_shape, groups = self._expand_factored(
            operands, list(out_letters), [int(e) for e in out_shape])
        result = self._einsum(operands, out_letters, out_shape, join, agg, scalar)
        return _regroup(result, groups) if groups else result

    def _common_factoring(self, operands):
        """Operands whose factored dims are merged to the factoring of each
        letter that every operand holding it factored shares (see einsum)."""
        seen = {}
        for val, letters in operands:
            for letter, d in zip(letters, val.dims):
                if isinstance(d, tuple):
                    seen.setdefault(letter, set()).add(tuple(val.phys[p] for p in d))
        common = {}
        for letter, factorings in seen.items():
            if len(factorings) < 2:
                continue
            cuts = set.intersection(*(_suffix_products(f) for f in factorings))
            extents = _between(sorted(cuts, reverse=True))
            if len(extents) >= 2:
                common[letter] = extents
        if not common:
            return operands
        out = []
        for val, letters in operands:
            for j, letter in enumerate(letters):
                d = val.dims[j]
                if letter in common and isinstance(d, tuple) and \
                        [val.phys[p] for p in d] != common[letter]:
                    val = self._coarsen(val, j, common[letter])
            out.append((val, letters))
        return out

    def _coarsen(self, val, j, extents):
        """`val` with the members of its factored dim j merged into runs of
        the given extents (a reshape), where its members are adjacent
        physical dims in order; `val` otherwise."""
        d = val.dims[j]
        if list(d) != list(range(d[0], d[0] + len(d))):
            return val
        runs, k = [], 0
        for e in extents:
            run, product = [], 1
            while product < e:
                run.append(d[k])
                product *= val.phys[d[k]]
                k += 1
            runs.append(run)
        starts = {run[0]: run for run in runs}
        new_index, shape, p = {}, [], 0
        while p < len(val.phys):
            run = starts.get(p, [p])
            for q in run:
                new_index[q] = len(shape)
            shape.append(math.prod(val.phys[q] for q in run))
            p += len(run)
        dims = []
        for e in val.dims:
            if isinstance(e, tuple):
                merged = []
                for q in e:
                    if new_index[q] not in merged:
                        merged.append(new_index[q])
                dims.append(tuple(merged) if len(merged) > 1 else merged[0])
            else:
                dims.append(e if isinstance(e, Bcast) else new_index[e])
        return self.reshape_phys(val, shape, dims)

    def _expand_factored(self, operands, out_letters, out_shape):
        """Letters of factored dims as one letter per member (see einsum)."""
        factoring = {}
        for val, letters in operands:
            for letter, d in zip(letters, val.dims):
                if isinstance(d, tuple):
                    members = tuple(val.phys[p] for p in d)
                    if factoring.setdefault(letter, members) != members:
                        factoring[letter] = None
        factoring = {k: v for k, v in factoring.items() if v}
        if not factoring:
            return operands, out_letters, out_shape, None
        ready = []
        for val, letters in operands:
            for j, (letter, d) in enumerate(zip(letters, val.dims)):
                if isinstance(d, int) and factoring.get(letter):
                    split = self.split_argument(val, d, factoring[letter]) \
                        if self.split_argument else None
                    if split is None:
                        factoring[letter] = None
                    else:
                        val = split
            ready.append((val, letters))
        factoring = {k: v for k, v in factoring.items() if v}
        if not factoring:
            return operands, out_letters, out_shape, None
        used = set("".join(letters for _, letters in operands)) | set(out_letters)
        spare = iter(c for c in LETTERS if c not in used)
        try:
            subs = {k: [next(spare) for _ in v] for k, v in factoring.items()}
        except StopIteration:
            return operands, out_letters, out_shape, None
        expanded = []
        for val, letters in ready:
            dims, names = [], []
            for letter, d in zip(letters, val.dims):
                if letter not in subs:
                    dims.append(d)
                    names.append(letter)
                    continue
                dims.extend(d if isinstance(d, tuple) else [Bcast(e) for e in factoring[letter]])
                names.extend(subs[letter])
            expanded.append((val.with_dims(dims), "".join(names)))
        new_out, new_shape, groups = [], [], []
        for letter, e in zip(out_letters, out_shape):
            if letter in subs:
                groups.append((len(new_out), len(subs[letter])))
                new_out.extend(subs[letter])
                new_shape.extend(factoring[letter])
            else:
                new_out.append(letter)
                new_shape.append(e)
        return expanded, new_out, new_shape, groups

    def _einsum(self, operands, out_letters, out_shape, join, agg=None, scalar=None):
        operands = [(self.defactor(val), letters) for val, letters in operands]
        extents = {}
        terms = []
        for val, letters in operands:
            if len(letters) != val.rank:
                raise DopplerError(f"internal error: letters {letters} for rank {val.rank}")
            term = [None] * len(val.phys)
            for letter, d in zip(letters, val.dims):
                if isinstance(d, int):
                    term[d] = letter
                    extent = val.phys[d]
                    if extents.setdefault(letter, extent) != extent:
                        raise DopplerError(
                            f"internal error: index {letter} has extents "
                            f"{extents[letter]} and {extent}")
            terms.append("".join(term))
        logical = {}
        for val, letters in operands:
            for letter, e in zip(letters, val.shape):
                logical.setdefault(letter, e)
        out_letters = list(out_letters)
        out_shape = [int(e) for e in out_shape]
        phys_out = [l for l in out_letters if l in extents]
        for l, e in zip(out_letters, out_shape):
            if l in extents and extents[l] != e:
                raise DopplerError(f"internal error: output index {l}: {extents[l]} vs {e}")
        contracted = [l for l in extents if l not in out_letters]
        factor = 1
        for l in logical:
            if l not in out_letters and l not in extents:
                factor *= logical[l]
        if factor != 1 and agg not in ("add", "max", "min"):
            raise DopplerError(f"internal error: a broadcast dimension contracted by {agg}")
        requested = agg
        if not contracted:
            agg = None
        elif agg is None:
            raise DopplerError(f"internal error: einsum contracts {contracted} without agg")
        dims = [phys_out.index(l) if l in extents else Bcast(e)
                for l, e in zip(out_letters, out_shape)]
        phys_shape = [extents[l] for l in phys_out]
        spec = ",".join(terms) + "->" + "".join(phys_out)
        if (len(operands) == 1 and join == "identity" and agg is None
                and terms[0] == "".join(phys_out)):
            result = operands[0][0].with_dims(dims)
        else:
            join_text = f"join({join}" + (f", {mlir_float(scalar)})" if scalar is not None else ")")
            agg_text = f" agg({agg})" if agg else ""
            in_types = ", ".join(self.type(v.phys) for v, _ in operands)
            result = self._new(
                f'doppler.einsum "{spec}" {join_text}{agg_text} '
                f"({', '.join(v.ssa for v, _ in operands)}) : ({in_types}) -> "
                f"{self.type(phys_shape)}", phys_shape, dims)
        if factor != 1 and requested == "add":
            result = self.unary(result, "scale", float(factor))
        return result

    # -- common shapes of einsums --------------------------------------------

    def unary(self, val, join, scalar=None):
        letters = LETTERS[:val.rank]
        if val.rank > len(LETTERS):
            raise DopplerError("tensors of rank above 52 are not supported")
        return self.einsum([(val, letters)], letters, val.shape, join, scalar=scalar)

    def unitize(self, val, js):
        """Logical dims `js` (an index or a list; extent 1) become broadcast
        dimensions: one doppler.reshape dropping the physical ones."""
        js = sorted({js} if isinstance(js, int) else set(js))
        js = [j for j in js if is_phys(val.dims[j])]
        if not js:
            return val
        dropped = self.drop_dims(val, js)
        dims = list(dropped.dims)
        for j in js:
            dims.insert(j, Bcast(1))
        return dropped.with_dims(dims)

    def drop_dim(self, val, j):
        """Removes logical dim j, of extent 1."""
        return self.drop_dims(val, [j])

    def broadcast(self, vals, out_shape):
        """(val, letters) pairs for an elementwise op broadcasting `vals` to `out_shape`."""
        rank = len(out_shape)
        if rank > len(LETTERS):
            raise DopplerError("tensors of rank above 52 are not supported")
        letters = LETTERS[:rank]
        operands = []
        for val in vals:
            offset = rank - val.rank
            val = self.unitize(val, [j for j in range(val.rank)
                                     if val.shape[j] == 1 and out_shape[offset + j] != 1])
            operands.append((val, letters[offset:]))
        return operands, letters

    def elementwise(self, join, vals, out_shape, scalar=None):
        operands, letters = self.broadcast(vals, out_shape)
        return self.einsum(operands, letters, out_shape, join, scalar=scalar)

    def reduce(self, val, axes, keepdim, agg, join="identity", scalar=None):
        """Reduction over logical `axes` (agg add or max/min) of `join`
        (with its `scalar`) of each element."""
        letters = LETTERS[:val.rank]
        axes = sorted(set(axes))
        out_letters, out_shape = [], []
        spare = iter(LETTERS[val.rank:])
        for j, (l, e) in enumerate(zip(letters, val.shape)):
            if j in axes:
                if keepdim:
                    out_letters.append(next(spare))
                    out_shape.append(1)
            else:
                out_letters.append(l)
                out_shape.append(e)
        return self.einsum([(val, letters)], out_letters, out_shape, join, agg=agg,
                           scalar=scalar)

    def mean(self, val, axes, keepdim):
        """The mean over logical `axes`: one einsum scaling each element by
        1 / count and adding them."""
        count = math.prod(val.shape[j] for j in set(axes))
        if count == 1:
            return self.reduce(val, axes, keepdim, "add")
        return self.reduce(val, axes, keepdim, "add", join="scale", scalar=1.0 / count)

    def materialize(self, val):
        """The value as a plain physical tensor in logical order: a
        doppler.reshape where it only lacks unit dims, else one einsum."""
        val = self.defactor(val)
        if val.is_plain():
            return val
        virtual = [j for j, d in enumerate(val.dims) if not is_phys(d)]
        if all(val.shape[j] == 1 for j in virtual) and _ordered(val):
            return self.reshape_phys(val, val.shape)
        letters = LETTERS[:val.rank]
        operands = [(val, letters)]
        if virtual:
            ones = self.fill(1.0, [val.shape[j] for j in virtual])
            operands.append((ones, "".join(letters[j] for j in virtual)))
            return self.einsum(operands, letters, val.shape, "mul")
        return self.einsum(operands, letters, val.shape, "identity")

    def make_physical(self, val, js):
        """Broadcast dims `js` become physical (a mul with ones)."""
        js = [j for j in js if not is_phys(val.dims[j])]
        if not js:
            return val
        val = self.defactor(val)
        letters = LETTERS[:val.rank]
        ones = self.fill(1.0, [val.shape[j] for j in js])
        return self.einsum([(val, letters), (ones, "".join(letters[j] for j in js))],
                           letters, val.shape, "mul")

    # -- slicing, concatenation, reshapes -------------------------------------

    def slice(self, val, j, start, length):
        """Elements [start, start + length) of logical dim j."""
        d = val.dims[j]
        if not is_phys(d):
            dims = list(val.dims)
            dims[j] = Bcast(length)
            return val.with_dims(dims)
        if start == 0 and length == val.shape[j]:
            return val
        val = self.defactor(val)
        d = val.dims[j]
        offsets = [0] * len(val.phys)
        sizes = list(val.phys)
        offsets[d] = start
        sizes[d] = length
        return self.slice_phys(val, offsets, sizes)

    def concat(self, vals, j):
        """torch.cat along logical dim j."""
        if len(vals) == 1:
            return vals[0]
        vals = [self.defactor(v) for v in vals]
        layout = vals[0].dims
        same = all(isinstance(d, int) for d in layout) and all(v.dims == layout for v in vals)
        if not same:
            vals = [self.materialize(v) for v in vals]
        d = vals[0].dims[j]
        grid = [1] * len(vals[0].phys)
        grid[d] = len(vals)
        phys = list(vals[0].phys)
        phys[d] = sum(v.phys[d] for v in vals)
        return self.assemble_phys(vals, grid, phys)

    def tile(self, val, j, count):
        """`count` copies of `val` along logical dim j (a physical dim)."""
        val = self.defactor(val)
        d = val.dims[j]
        grid = [1] * len(val.phys)
        grid[d] = count
        phys = list(val.phys)
        phys[d] *= count
        return self.assemble_phys([val] * count, grid, phys)

    # -- sliding windows -------------------------------------------------------

    @staticmethod
    def window_shape(spatial, kernel, strides, dilations, padding):
        """The output's spatial extents (include/Doppler/Support/Window.h):
        O = (S + low + high - dilation * (K - 1) - 1) // stride + 1; `padding`
        lists the low padding of every spatial dim, then the high."""
        k = len(kernel)
        out = []
        for j in range(k):
            reach = dilations[j] * (kernel[j] - 1) + 1
            padded = spatial[j] + padding[j] + padding[k + j]
            if padded < reach:
                raise DopplerError(f"kernel {tuple(kernel)} (dilation {tuple(dilations)}) "
                                   f"larger than its padded input")
            out.append((padded - reach) // strides[j] + 1)
        return out

    @staticmethod
    def _ints(values):
        return "[" + ", ".join(str(int(v)) for v in values) + "]"

    def conv(self, x, w, strides, dilations, padding, groups):
        """doppler.conv: x [N, C, S...] (channels first), w [F, C / groups, K...],
        `padding` the low paddings then the high (zeros); no bias."""
        x, w = self.materialize(x), self.materialize(w)
        out = [x.phys[0], w.phys[0]] + self.window_shape(
            x.phys[2:], w.phys[2:], strides, dilations, padding)
        return self._new(
            f"doppler.conv {x.ssa}, {w.ssa} strides {self._ints(strides)} dilations "
            f"{self._ints(dilations)} padding {self._ints(padding)} groups {int(groups)} : "
            f"({self.type(x.phys)}, {self.type(w.phys)}) -> {self.type(out)}", out)

    def pool(self, kind, x, kernel, strides, dilations, padding):
        """doppler.pool `kind` (max: padding is minus infinity; avg: the window
        sum over the kernel volume, zero padding included) of x [N, C, S...]."""
        if kind not in ("max", "avg"):
            raise DopplerError(f"internal error: pool kind {kind}")
        x = self.materialize(x)
        out = list(x.phys[:2]) + self.window_shape(x.phys[2:], kernel, strides, dilations,
                                                   padding)
        return self._new(
            f"doppler.pool {kind} {x.ssa} kernel {self._ints(kernel)} strides "
            f"{self._ints(strides)} dilations {self._ints(dilations)} padding "
            f"{self._ints(padding)} : {self.type(x.phys)} -> {self.type(out)}", out)

    def _free_reshape(self, val, new_shape):
        """The reshape as a view, or None: free when it only regroups dims into
        merges of physical dims (factored dims) or of broadcast ones, splits
        factored dims back along their members, and moves unit dims. A
        physical unit dim that the new shape has no unit dim for joins the
        factored dim of its neighbour (`[1, T, C] -> [T, C]`: T as (1, T))."""
        exp_dims, exp_shape = [], []
        for d in val.dims:
            for p in (d if isinstance(d, tuple) else (d,)):
                exp_dims.append(p)
                exp_shape.append(extent_of(p, val.phys))
        new_units = sum(1 for e in new_shape if e == 1)
        phys_units = [d for d, e in zip(exp_dims, exp_shape) if e == 1 and is_phys(d)]
        bcast_units = [d for d, e in zip(exp_dims, exp_shape) if e == 1 and not is_phys(d)]
        extra = set(phys_units[new_units:])  # physical unit dims to absorb
        units = iter((phys_units + bcast_units)[:new_units] +
                     [Bcast(1)] * max(new_units - len(phys_units) - len(bcast_units), 0))
        core, pending = [], []  # core: ([dims], extent), absorbed unit dims first
        for d, e in zip(exp_dims, exp_shape):
            if e != 1:
                core.append((pending + [d], e))
                pending = []
            elif is_phys(d) and d in extra:
                pending.append(d)
        if pending:
            if not core:
                return None
            core[-1] = (core[-1][0] + pending, core[-1][1])
        out, i = [], 0
        for t in (e for e in new_shape if e != 1):
            group, extent = [], 1
            while extent < t and i < len(core):
                group.extend(core[i][0])
                extent *= core[i][1]
                i += 1
            if extent != t:
                return None  # splits a dim that is not factored that way
            if len(group) == 1:
                out.append(group[0])
            elif all(is_phys(d) for d in group):
                out.append(tuple(group))
            elif not any(is_phys(d) for d in group):
                out.append(Bcast(t))
            else:
                return None
        if i != len(core):
            return None
        kept = iter(out)
        return val.with_dims([next(units) if e == 1 else next(kept) for e in new_shape])

    def reshape_phys(self, val, shape, dims=None):
        """doppler.reshape of the physical tensor to `shape` (the same elements
        in row-major order), seen through `dims` (default: plain)."""
        shape = tuple(int(e) for e in shape)
        if dims is None:
            dims = list(range(len(shape)))
        # A reshape of a reshape is one reshape of the first one's input (the
        # intermediate goes if nothing else reads it: `prune`).
        val = self._reshaped_from.get(val.ssa, val)
        if shape == val.phys:
            return val.with_dims(dims)
        key = (val.ssa, shape)
        if key not in self._reshapes:  # one op for every reshape of a value to a shape
            self._reshapes[key] = self._new(f"doppler.reshape {val.ssa} : "
                                            f"{self.type(val.phys)} -> {self.type(shape)}", shape)
            self._reshaped_from[self._reshapes[key].ssa] = val.with_dims(range(len(val.phys)))
        return self._reshapes[key].with_dims(dims)

    def _in_logical_order(self, val):
        """`val` (no factored dims) with its physical dims in logical order:
        itself when the physical dims of extent above 1 already are (unit
        dims do not move data), else one identity einsum."""
        if _ordered(val):
            return val
        if val.rank > len(LETTERS):
            raise DopplerError("tensors of rank above 52 are not supported")
        letters = LETTERS[:val.rank]
        return self._einsum([(val, letters)], letters, val.shape, "identity")

    def defactor(self, val):
        """Factored dims become single physical dims: one doppler.reshape
        merging their members where each factored dim's members are adjacent
        physical dims in order, else an einsum putting the members in logical
        order first."""
        if not is_factored(val):
            return val
        tuples = [d for d in val.dims if isinstance(d, tuple)]
        if not all(list(d) == list(range(d[0], d[0] + len(d))) for d in tuples):
            dims, groups = [], []
            for d in val.dims:
                if isinstance(d, tuple):
                    groups.append((len(dims), len(d)))
                    dims.extend(d)
                else:
                    dims.append(d)
            flat = val.with_dims(dims)
            if flat.rank > len(LETTERS):
                raise DopplerError("tensors of rank above 52 are not supported")
            letters = LETTERS[:flat.rank]
            flat = self._einsum([(flat, letters)], letters, flat.shape, "identity")
            val = _regroup(flat, groups)
            tuples = [d for d in val.dims if isinstance(d, tuple)]
        starts = {d[0]: d for d in tuples}
        new_index, shape, p = {}, [], 0
        while p < len(val.phys):
            group = starts.get(p, (p,))
            for q in group:
                new_index[q] = len(shape)
            shape.append(math.prod(val.phys[q] for q in group))
            p += len(group)
        dims = [d if isinstance(d, Bcast) else new_index[members(d)[0]] for d in val.dims]
        return self.reshape_phys(val, shape, dims)

    def drop_dims(self, val, js):
        """Removes logical dims `js`, each of extent 1: broadcast ones for
        free, physical ones with one doppler.reshape."""
        js = sorted(set(js))
        for j in js:
            if val.shape[j] != 1:
                raise DopplerError(f"internal error: dropping dim {j} of extent {val.shape[j]}")
        if any(isinstance(val.dims[j], tuple) for j in js):
            val = self.defactor(val)
        gone = {val.dims[j] for j in js if isinstance(val.dims[j], int)}
        kept = [d for j, d in enumerate(val.dims) if j not in js]
        if not gone:
            return val.with_dims(kept)
        remap = {}
        for p in range(len(val.phys)):
            if p not in gone:
                remap[p] = len(remap)
        shape = [e for p, e in enumerate(val.phys) if p not in gone]
        dims = [d if isinstance(d, Bcast) else
                tuple(remap[q] for q in d) if isinstance(d, tuple) else remap[d] for d in kept]
        return self.reshape_phys(val, shape, dims)

    def reshape(self, val, new_shape):
        """torch's view/reshape (row-major) of `val` to `new_shape`.

        Free (a new view, no op) where it only regroups dims into factored
        dims, splits factored dims along their members or moves unit dims.
        Otherwise one doppler.reshape of the physical tensor, preceded by one
        einsum only where the physical dims are not in logical order (a
        permuted value) or a broadcast dim is merged with physical ones (it
        becomes physical). Groups of broadcast dims stay broadcast."""
        new_shape = [int(e) for e in new_shape]
        if math.prod(val.shape) != math.prod(new_shape):
            raise DopplerError(f"internal error: reshape {val.shape} -> {new_shape}")
        if list(val.shape) == new_shape:
            return val
        free = self._free_reshape(val, new_shape)
        if free is not None:
            return free
        if 0 in new_shape:
            raise DopplerError(f"reshape of an empty tensor {val.shape} -> {new_shape} "
                               "is not supported")
        # Factored dims as their members: the row-major order is the same.
        dims = [q for d in val.dims for q in (d if isinstance(d, tuple) else (d,))]
        val = val.with_dims(dims)
        shape = list(val.shape)
        # Groups of non-unit dims whose products agree.
        src = [j for j, e in enumerate(shape) if e != 1]
        tgt = [k for k, e in enumerate(new_shape) if e != 1]
        groups, i, k = [], 0, 0
        while i < len(src):
            a, c = [src[i]], [tgt[k]]
            left, right = shape[src[i]], new_shape[tgt[k]]
            i, k = i + 1, k + 1
            while left != right:
                if left < right:
                    a.append(src[i])
                    left *= shape[src[i]]
                    i += 1
                else:
                    c.append(tgt[k])
                    right *= new_shape[tgt[k]]
                    k += 1
            groups.append((a, c))
        broadcast_out, mixed = set(), []
        for a, c in groups:
            held = [j for j in a if is_phys(dims[j])]
            if not held:
                broadcast_out.update(c)
            elif len(held) != len(a):
                mixed.extend(j for j in a if not is_phys(dims[j]))
        if mixed:
            # Broadcast dims merged with physical ones become physical (a mul
            # with ones, which also puts the physical dims in logical order).
            if val.rank > len(LETTERS):
                raise DopplerError("tensors of rank above 52 are not supported")
            letters = LETTERS[:val.rank]
            ones = self.fill(1.0, [shape[j] for j in mixed])
            val = self._einsum([(val, letters), (ones, "".join(letters[j] for j in mixed))],
                               letters, shape, "mul")
        else:
            val = self._in_logical_order(val)
        free = self._free_reshape(val, new_shape)  # merges only, now in order
        if free is not None:
            return free
        # Each physical group is reshaped to the finest shape both sides are
        # merges of, where one exists (a split and a merge at once, such as
        # [T, 4, 768] -> [T, 48, 64] as [T, 4, 12, 64]): the result's dims are
        # factored over it, so that a later view splitting them back is free.
        refined = {}  # target dim -> its extents in the physical result
        for a, c in groups:
            if c[0] not in broadcast_out:
                fine = _refine([shape[j] for j in a], [new_shape[k] for k in c])
                refined.update(zip(c, fine))
        out_dims, phys = [], []
        for k, e in enumerate(new_shape):
            if e == 1 or k in broadcast_out:
                out_dims.append(Bcast(e))
                continue
            ids = tuple(range(len(phys), len(phys) + len(refined[k])))
            phys.extend(refined[k])
            out_dims.append(ids[0] if len(ids) == 1 else ids)
        return self.reshape_phys(val, phys, out_dims)

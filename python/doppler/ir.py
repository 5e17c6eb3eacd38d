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
`doppler.assemble`, `doppler.fill`), each with a `loc("NAME")` naming the FX
node it comes from, and implements on top of them what the dialect has no
op for: a reshape that splits or merges dimensions is a slice per block of
the outer extent, an einsum that drops (merge) or adds (split) a unit
dimension, and an assemble of the blocks.
"""

import math

from .errors import DopplerError

LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


class Bcast:
    """A logical dimension of extent `extent` that the physical tensor lacks."""

    __slots__ = ("extent",)

    def __init__(self, extent):
        self.extent = int(extent)

    def __repr__(self):
        return f"Bcast({self.extent})"


class Val:
    """A tensor: SSA value `ssa` of shape `phys`, seen through `dims`."""

    __slots__ = ("ssa", "phys", "dims", "owner")

    def __init__(self, ssa, phys, dims, owner):
        self.ssa = ssa
        self.phys = tuple(int(e) for e in phys)
        self.dims = list(dims)
        self.owner = owner  # FX node name of the op that produced `ssa` (None: an argument)
        seen = sorted(p for d in self.dims for p in members(d))
        if seen != list(range(len(self.phys))):
            raise DopplerError(f"internal error: bad view {self.dims} of {self.phys}")

    @property
    def shape(self):
        return tuple(extent_of(d, self.phys) for d in self.dims)

    @property
    def rank(self):
        return len(self.dims)

    def is_plain(self):
        """Physical tensor in logical order, no broadcast dimensions."""
        return self.dims == list(range(len(self.phys)))

    def with_dims(self, dims):
        return Val(self.ssa, self.phys, dims, self.owner)

    def __repr__(self):
        return f"Val({self.ssa}, {self.phys}, {self.dims})"


def members(d):
    """The physical dims of logical dim entry `d`."""
    if isinstance(d, Bcast):
        return ()
    if isinstance(d, tuple):
        return d
    return (d,)


def is_phys(d):
    """Held by the physical tensor (a dim or a factored dim), not broadcast."""
    return not isinstance(d, Bcast)


def extent_of(d, phys):
    if isinstance(d, Bcast):
        return d.extent
    if isinstance(d, tuple):
        return math.prod(phys[p] for p in d)
    return phys[d]


def is_factored(val):
    return any(isinstance(d, tuple) for d in val.dims)


def _regroup(val, groups):
    """`val` with the logical dims of each (start, count) group merged back
    into one factored dim (broadcast when every member is)."""
    dims = list(val.dims)
    for start, count in reversed(groups):
        members = dims[start:start + count]
        if all(isinstance(d, int) for d in members):
            merged = tuple(members)
        elif all(isinstance(d, Bcast) for d in members):
            merged = Bcast(math.prod(d.extent for d in members))
        else:
            raise DopplerError(f"internal error: a factored dim half broadcast: {members}")
        dims[start:start + count] = [merged]
    return val.with_dims(dims)


def mlir_float(value):
    """Shortest exact decimal, with the '.' MLIR float literals need."""
    value = float(value)
    if not math.isfinite(value):
        raise DopplerError(f"internal error: {value} cannot be an MLIR float literal here")
    text = repr(value)
    if "." not in text and "e" not in text and "n" not in text:
        text += ".0"
    elif "." not in text and "e" in text:
        mantissa, _, exponent = text.partition("e")
        text = mantissa + ".0e" + exponent
    return text


class Builder:
    """Accumulates the body of one func.func."""

    def __init__(self, dtype):
        self.dtype = dtype  # "f32", "f64" or "f16"
        self.lines = []
        self.counter = 0
        self.loc = "input"
        self._fills = {}
        # Set by the importer: split_argument(val, phys_dim, extents) -> the
        # argument `val` views with physical dim `phys_dim` split into
        # `extents` (a new argument, same view), or None when `val` is not
        # an argument. Lets contractions read factored dims without merges.
        self.split_argument = None

    # -- text ------------------------------------------------------------

    def type(self, shape):
        return "tensor<" + "".join(f"{int(d)}x" for d in shape) + self.dtype + ">"

    def _new(self, op_text, phys, dims=None):
        ssa = f"%v{self.counter}"
        self.counter += 1
        self.lines.append(f"  {ssa} = {op_text} loc(\"{self.loc}\")")
        if dims is None:
            dims = list(range(len(phys)))
        return Val(ssa, phys, dims, self.loc)

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
        factored. Other factored dims are merged first.
        """
        operands, out_letters, out_shape, groups = self._expand_factored(
            operands, list(out_letters), [int(e) for e in out_shape])
        result = self._einsum(operands, out_letters, out_shape, join, agg, scalar)
        return _regroup(result, groups) if groups else result

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

    def unitize(self, val, j):
        """Logical dim j (extent 1, physical) becomes a broadcast dimension."""
        if not is_phys(val.dims[j]):
            return val
        val = self.defactor(val)
        letters = LETTERS[:val.rank]
        out = letters[:j] + LETTERS[val.rank] + letters[j + 1:]  # a letter no operand has
        return self.einsum([(val, letters)], out, val.shape, "identity", agg="add")

    def drop_dim(self, val, j):
        """Removes logical dim j, of extent 1."""
        if val.shape[j] != 1:
            raise DopplerError(f"internal error: dropping dim {j} of extent {val.shape[j]}")
        if not is_phys(val.dims[j]):
            return val.with_dims(val.dims[:j] + val.dims[j + 1:])
        val = self.defactor(val)
        letters = LETTERS[:val.rank]
        out = letters[:j] + letters[j + 1:]
        shape = val.shape[:j] + val.shape[j + 1:]
        return self.einsum([(val, letters)], out, shape, "identity", agg="add")

    def broadcast(self, vals, out_shape):
        """(val, letters) pairs for an elementwise op broadcasting `vals` to `out_shape`."""
        rank = len(out_shape)
        if rank > len(LETTERS):
            raise DopplerError("tensors of rank above 52 are not supported")
        letters = LETTERS[:rank]
        operands = []
        for val in vals:
            offset = rank - val.rank
            for j in range(val.rank):
                if val.shape[j] == 1 and out_shape[offset + j] != 1:
                    val = self.unitize(val, j)
            operands.append((val, letters[offset:]))
        return operands, letters

    def elementwise(self, join, vals, out_shape, scalar=None):
        operands, letters = self.broadcast(vals, out_shape)
        return self.einsum(operands, letters, out_shape, join, scalar=scalar)

    def reduce(self, val, axes, keepdim, agg, join="identity"):
        """Reduction over logical `axes` (agg add or max/min)."""
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
        return self.einsum([(val, letters)], out_letters, out_shape, join, agg=agg)

    def materialize(self, val):
        """The value as a plain physical tensor in logical order."""
        val = self.defactor(val)
        if val.is_plain():
            return val
        letters = LETTERS[:val.rank]
        operands = [(val, letters)]
        virtual = [j for j, d in enumerate(val.dims) if not is_phys(d)]
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

    def _free_reshape(self, val, new_shape):
        """The reshape as a view, or None: free when it only regroups dims into
        merges of physical dims (factored dims) or of broadcast ones, splits
        factored dims back along their members, and moves unit dims."""
        exp_dims, exp_shape = [], []
        for d in val.dims:
            for p in (d if isinstance(d, tuple) else (d,)):
                exp_dims.append(p)
                exp_shape.append(extent_of(p, val.phys))
        old_units = [d for d, e in zip(exp_dims, exp_shape) if e == 1]
        new_units = sum(1 for e in new_shape if e == 1)
        if any(is_phys(d) for d in old_units[new_units:]):
            return None  # a physical unit dim to drop: an einsum
        units = iter(old_units[:new_units] + [Bcast(1)] * max(new_units - len(old_units), 0))
        core = [(d, e) for d, e in zip(exp_dims, exp_shape) if e != 1]
        out, i = [], 0
        for t in (e for e in new_shape if e != 1):
            group, extent = [], 1
            while extent < t and i < len(core):
                group.append(core[i][0])
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

    def defactor(self, val):
        """Factored dims become single physical dims (a merge of their members)."""
        if not is_factored(val):
            return val
        groups = []
        dims = []
        for d in val.dims:
            if isinstance(d, tuple):
                groups.append((len(dims), len(d)))
                dims.extend(d)
            else:
                dims.append(d)
        val = val.with_dims(dims)
        for start, count in reversed(groups):
            for k in reversed(range(count - 1)):
                val = self.merge2(val, start + k)
        return val

    def merge2(self, val, j):
        """Merges logical dims j (outer) and j + 1 (inner), both physical."""
        outer = val.shape[j]
        letters = LETTERS[:val.rank]
        out_letters = letters[:j] + letters[j + 1:]
        out_shape = val.shape[:j] + val.shape[j + 1:]
        blocks = []
        for i in range(outer):
            block = self.slice(val, j, i, 1)
            blocks.append(self.einsum([(block, letters)], out_letters, out_shape, "identity",
                                      agg="add"))
        return self.tile_blocks(blocks, j)

    def split2(self, val, j, outer, inner):
        """Splits logical dim j (physical, extent outer * inner) into (outer, inner)."""
        letters = LETTERS[:val.rank]
        new = LETTERS[val.rank]
        out_letters = letters[:j] + new + letters[j:]
        ones = self.fill(1.0, [1])
        blocks = []
        for i in range(outer):
            block = self.slice(val, j, i * inner, inner)
            shape = block.shape
            blocks.append(self.einsum([(block, letters), (ones, new)], out_letters,
                                      shape[:j] + (1,) + shape[j:], "mul"))
        return self.tile_blocks(blocks, j)

    def tile_blocks(self, blocks, j):
        """Assembles same-layout blocks along logical dim j."""
        if len(blocks) == 1:
            return blocks[0]
        d = blocks[0].dims[j]
        grid = [1] * len(blocks[0].phys)
        grid[d] = len(blocks)
        phys = list(blocks[0].phys)
        phys[d] = sum(b.phys[d] for b in blocks)
        return self.assemble_phys(blocks, grid, phys)

    def reshape(self, val, new_shape):
        """torch's view/reshape of a contiguous tensor to `new_shape`."""
        new_shape = [int(e) for e in new_shape]
        if math.prod(val.shape) != math.prod(new_shape):
            raise DopplerError(f"internal error: reshape {val.shape} -> {new_shape}")
        if list(val.shape) == new_shape:
            return val
        free = self._free_reshape(val, new_shape)
        if free is not None:
            return free
        val = self.defactor(val)
        # 1. Unit dimensions carry no data: drop them (a physical one costs
        #    an einsum), reinsert the new ones as broadcast dims at the end.
        for j in reversed(range(val.rank)):
            if val.shape[j] == 1:
                val = self.drop_dim(val, j)
        target = [e for e in new_shape if e != 1]
        # 2. Groups of dims whose products agree.
        groups = []
        a = c = 0
        while a < val.rank:
            b, d = a + 1, c + 1
            left, right = val.shape[a], target[c]
            while left != right:
                if left < right:
                    left *= val.shape[b]
                    b += 1
                else:
                    right *= target[d]
                    d += 1
            groups.append((a, b, c, d))
            a, c = b, d
        # 3. Right to left, so that earlier groups keep their positions.
        for a, b, c, d in reversed(groups):
            outs = target[c:d]
            if b - a == 1 and d - c == 1:
                continue
            if all(not is_phys(x) for x in val.dims[a:b]):
                val = val.with_dims(val.dims[:a] + [Bcast(e) for e in outs] + val.dims[b:])
                continue
            val = self.make_physical(val, range(a, b))
            while b - a > 1:
                val = self.merge2(val, b - 2)
                b -= 1
            for k in range(len(outs) - 1):
                val = self.split2(val, a + k, outs[k], math.prod(outs[k + 1:]))
        dims = iter(val.dims)
        return val.with_dims([Bcast(1) if e == 1 else next(dims) for e in new_shape])


"""Values of the IR builder (ir.py): `Val`, a physical SSA tensor and the
view of it a torch tensor is, `Bcast`, and the helpers that read and
regroup views (which physical dims a logical dim holds, their extents, how
a reshape's dims refine another's). Split from ir.py, which re-exports
them; see its docstring for the view model.
"""

import math

from .errors import DopplerError

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


def _ordered(val):
    """Whether the physical dims of extent above 1 of `val` (no factored
    dims) appear in its view in physical order: the row-major orders of the
    physical tensor and of the view, broadcast dims aside, then agree."""
    order = [d for d in val.dims if isinstance(d, int) and val.phys[d] != 1]
    return order == sorted(order)


def _suffix_products(extents):
    """{1, e_n, e_(n-1) e_n, ...}: where a row-major shape's dims cut the
    flat index."""
    out, product = {1}, 1
    for e in reversed(extents):
        product *= e
        out.add(product)
    return out


def _between(cuts):
    """The extents between descending cut points (each dividing the one before)."""
    return [big // small for big, small in zip(cuts, cuts[1:])]


def _refine(source, target):
    """The members of each `target` extent in the finest extents that both
    `source` and `target` (row-major shapes of one size) are merges of; one
    member per target extent (itself) where no such extents exist."""
    cuts = sorted(_suffix_products(source) | _suffix_products(target), reverse=True)
    if any(big % small for big, small in zip(cuts, cuts[1:])):
        return [[e] for e in target]
    fine = _between(cuts)
    members, i = [], 0
    for e in target:
        group, product = [], 1
        while product < e:
            group.append(fine[i])
            product *= fine[i]
            i += 1
        members.append(group)
    return members


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

"""The op table: torch call targets -> emitters, and the lookups the importer uses.

Keys: Python callables (`torch.matmul`, `F.linear`, `operator.add`), tensor
method names (`"view"`), aten op packets (`"aten.mm"`, for graphs from
`torch.export` or `make_fx`) and leaf module types (`nn.Linear`). The
`ops_*` modules fill the table on import (`ops.py` imports them all);
`register()` adds entries (for user functions wrapped with torch.fx.wrap).
"""

FUNCTIONS = {}  # callable -> emitter
ATEN = {}  # "aten.name" -> emitter
METHODS = {}  # method name -> emitter
MODULES = {}  # module type -> emitter(ctx, module, qualname, *args)
NAMED = {}  # "package.module.name" of a function or module class -> emitter (optional
#             libraries such as torchvision, matched without importing them)


def register(*targets):
    """Decorator: `fn(ctx, *args, **kwargs)` emits the given targets.

    A target is a callable, "aten.NAME", ".NAME" for a tensor method, or
    the qualified name of a function ("torchvision.ops.stochastic_depth.stochastic_depth").
    """

    def wrap(fn):
        for t in targets:
            if t is None:
                continue
            if isinstance(t, str) and t.startswith("aten."):
                ATEN[t] = fn
            elif isinstance(t, str) and t.startswith("."):
                METHODS[t[1:]] = fn
            elif isinstance(t, str):
                NAMED[t] = fn
            else:
                FUNCTIONS[t] = fn
        return fn

    return wrap


def register_module(*types):
    def wrap(fn):
        for t in types:
            if isinstance(t, str):
                NAMED[t] = fn
            elif t is not None:
                MODULES[t] = fn
        return fn

    return wrap


def _aten_name(target):
    """'aten.add' for torch.ops.aten.add.Tensor or its packet; None otherwise."""
    packet = getattr(target, "overloadpacket", None)
    if packet is not None:
        target = packet
    text = str(target)
    if text.startswith("aten."):
        return "aten." + text.split(".")[1]
    qualified = getattr(target, "_qualified_op_name", None)
    if qualified and qualified.startswith("aten::"):
        return "aten." + qualified.split("::")[1]
    return None


def target_name(target):
    aten = _aten_name(target)
    if aten:
        return str(target)
    module = getattr(target, "__module__", None) or ""
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", None) \
        or str(target)
    return f"{module}.{name}" if module and module != "builtins" else name


def function_emitter(target):
    emitter = FUNCTIONS.get(target) if _hashable(target) else None
    if emitter is None:
        aten = _aten_name(target)
        if aten:
            emitter = ATEN.get(aten)
    name = target_name(target)
    if emitter is None:
        emitter = NAMED.get(name)
    return emitter, name


def module_emitter(module):
    for cls in type(module).__mro__:
        if cls in MODULES:
            return MODULES[cls]
        named = NAMED.get(f"{cls.__module__}.{cls.__qualname__}")
        if named is not None:
            return named
    return None


def _hashable(x):
    try:
        hash(x)
        return True
    except TypeError:
        return False

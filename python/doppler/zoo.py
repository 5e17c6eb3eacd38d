"""A model zoo: models as their users have them (torchvision, Hugging Face
transformers), built with random weights at small configurations, run
through Doppler and compared with PyTorch eager.

    python -m doppler.zoo                       # every model, a table on stdout
    python -m doppler.zoo --table docs/zoo.md   # ... and written as Markdown
    python -m doppler.zoo --exported --table docs/zoo.md --append
    python -m doppler.zoo gpt2 resnet18 --exported
    python -m doppler.zoo --interpret            # the reference interpreter, not run
    python -m doppler.zoo --expand-windows       # convolutions and pooling as slices+einsums

Nothing is downloaded: configurations are built in code, weights are
random (torch.manual_seed(0)), transformers models have use_cache=False.
A model whose library is not installed is reported as skipped.
"""

import argparse
import collections
import os
import re
import sys
import time

import torch

from .errors import DopplerError

# -- the models ----------------------------------------------------------------------

_SEQ = 8
_VOCAB = 64


def _ids(batch=1, seq=_SEQ, vocab=_VOCAB):
    return torch.randint(0, vocab, (batch, seq))


def _padded_mask(batch=1, seq=_SEQ, pad=2, left=False):
    """An attention mask with `pad` padding positions (right, or left)."""
    mask = torch.ones(batch, seq, dtype=torch.long)
    if left:
        mask[:, :pad] = 0
    else:
        mask[:, seq - pad:] = 0
    return mask


def _image(size=32):
    return torch.randn(1, 3, size, size)


def _tv():
    import torchvision
    return torchvision


def _tf():
    import transformers
    return transformers


def resnet18():
    return _tv().models.resnet18(num_classes=10), (_image(),)


def mobilenet_v2():
    return _tv().models.mobilenet_v2(num_classes=10, width_mult=0.25), (_image(),)


def efficientnet_b0():
    return _tv().models.efficientnet_b0(num_classes=10), (_image(),)


def vit():
    tv = _tv()
    model = tv.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                        hidden_dim=32, mlp_dim=64, num_classes=10)
    torch.nn.init.normal_(model.heads.head.weight, std=0.2)  # torchvision zeroes it
    return model, (_image(),)


def convnext():
    from torchvision.models.convnext import CNBlockConfig, ConvNeXt
    setting = [CNBlockConfig(16, 32, 1), CNBlockConfig(32, None, 1)]
    return ConvNeXt(setting, stochastic_depth_prob=0.1, num_classes=10), (_image(),)


_DECODER = dict(vocab_size=_VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                use_cache=False)
_ENCODER = dict(vocab_size=_VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                num_attention_heads=2, max_position_embeddings=64)


def gpt2():
    tf = _tf()
    config = tf.GPT2Config(vocab_size=_VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=2,
                           use_cache=False, bos_token_id=0, eos_token_id=0)
    return tf.GPT2LMHeadModel(config), (_ids(),)


def llama():
    tf = _tf()
    model = tf.LlamaForCausalLM(tf.LlamaConfig(**_DECODER))
    return model, (_ids(), torch.ones(1, _SEQ, dtype=torch.long))


def mistral():
    """Mistral with a left-padded batch (rows of the padding attend to nothing)."""
    tf = _tf()
    model = tf.MistralForCausalLM(tf.MistralConfig(**_DECODER))
    return model, (_ids(batch=2), _padded_mask(batch=2, left=True))


def qwen2():
    tf = _tf()
    return tf.Qwen2ForCausalLM(tf.Qwen2Config(**_DECODER)), (_ids(),)


def bert():
    tf = _tf()
    return tf.BertModel(tf.BertConfig(**_ENCODER)), (_ids(), _padded_mask())


def roberta():
    tf = _tf()
    config = tf.RobertaConfig(**dict(_ENCODER, pad_token_id=1))
    return tf.RobertaForSequenceClassification(config), (_ids(), _padded_mask())


def distilbert():
    tf = _tf()
    config = tf.DistilBertConfig(vocab_size=_VOCAB, dim=32, hidden_dim=64, n_layers=2,
                                 n_heads=2, max_position_embeddings=64)
    return tf.DistilBertModel(config), (_ids(), _padded_mask())


def hf_vit():
    tf = _tf()
    config = tf.ViTConfig(image_size=32, patch_size=8, hidden_size=32, intermediate_size=64,
                          num_hidden_layers=2, num_attention_heads=2, num_labels=10)
    return tf.ViTForImageClassification(config), (_image(),)


def hf_convnext():
    tf = _tf()
    config = tf.ConvNextConfig(num_channels=3, num_stages=2, hidden_sizes=[16, 32], depths=[1, 1],
                               num_labels=10, image_size=32)
    return tf.ConvNextForImageClassification(config), (_image(),)


# name -> (library, builder)
MODELS = collections.OrderedDict([
    ("resnet18", ("torchvision", resnet18)),
    ("mobilenet_v2", ("torchvision", mobilenet_v2)),
    ("efficientnet_b0", ("torchvision", efficientnet_b0)),
    ("vit", ("torchvision", vit)),
    ("convnext", ("torchvision", convnext)),
    ("gpt2", ("transformers", gpt2)),
    ("bert", ("transformers", bert)),
    ("llama", ("transformers", llama)),
    ("mistral", ("transformers", mistral)),
    ("qwen2", ("transformers", qwen2)),
    ("roberta", ("transformers", roberta)),
    ("distilbert", ("transformers", distilbert)),
    ("hf_vit", ("transformers", hf_vit)),
    ("hf_convnext", ("transformers", hf_convnext)),
])


def _entry(name):
    """(library, builder) of a zoo model: one of MODELS, or of the
    benchmarks' models at their real sizes (doppler.zoo_large.LARGE), or of
    the models the zoo does not list (doppler.zoo_unseen.MODELS)."""
    if name in MODELS:
        return MODELS[name]
    from .zoo_large import LARGE
    if name in LARGE:
        return LARGE[name]
    from .zoo_unseen import MODELS as UNSEEN
    if name in UNSEEN:
        return UNSEEN[name]
    raise KeyError(f"unknown zoo model {name!r}")


def available(name):
    """Whether the library of model `name` is installed."""
    library = _entry(name)[0]
    try:
        __import__(library)
        return True
    except ImportError:
        return False


def build(name):
    """(model in eval mode, example inputs) of zoo model `name` (of MODELS
    or of doppler.zoo_large.LARGE), seeded."""
    torch.manual_seed(0)
    model, inputs = _entry(name)[1]()
    return model.eval(), inputs


# -- checking one model -----------------------------------------------------------------


def leaves(value):
    """The tensors of a (possibly nested, possibly ModelOutput) result, in order."""
    import torch.utils._pytree as pytree
    if hasattr(value, "to_tuple"):  # transformers' ModelOutput
        value = value.to_tuple()
    return [v for v in pytree.tree_flatten(value)[0] if isinstance(v, torch.Tensor)]


def relative_error(actual, expected):
    """max |actual - expected| / max |expected| over every output tensor."""
    a, e = leaves(actual), leaves(expected)
    if len(a) != len(e):
        raise DopplerError(f"{len(a)} outputs, torch has {len(e)}")
    for x, y in zip(a, e):
        if tuple(x.shape) != tuple(y.shape):
            raise DopplerError(f"an output of shape {tuple(x.shape)}, torch's is "
                               f"{tuple(y.shape)}")
    diff = max(float((x.double() - y.double()).abs().max()) for x, y in zip(a, e))
    scale = max(float(y.double().abs().max()) for y in e)
    if scale == 0:
        raise DopplerError("torch's outputs are all zero: no meaningful comparison")
    return diff / scale


_OP = re.compile(r'=\s*"?(doppler\.\w+)')


def op_counts(mlir):
    """doppler op name -> count in an MLIR text."""
    return collections.Counter(_OP.findall(mlir))


class Row:
    """One model's result: counts, error, times (s), or the error text."""

    def __init__(self, name, library):
        self.name = name
        self.library = library
        self.ops = collections.Counter()
        self.error = None
        self.rel_error = None
        self.import_s = None
        self.run_s = None
        self.skipped = None
        self.program = None  # the imported Program, when the import succeeded


def interpret(program, expected):
    """The reference interpreter's outputs of `program` on its arguments
    against torch's `expected` (doppler-run --compare-outputs, no placement
    and no runtime): the largest ||out - ref|| / ||ref|| over the outputs."""
    import json
    import tempfile
    from . import api
    from .tools import run_tool
    with tempfile.TemporaryDirectory(prefix="doppler-zoo-") as tmp:
        source = os.path.join(tmp, "program.mlir")
        arguments = os.path.join(tmp, "arguments.json")
        outputs = os.path.join(tmp, "expected.json")
        with open(source, "w") as f:
            f.write(program.mlir)
        api.write_arguments(program, arguments)
        with open(outputs, "w") as f:
            f.write('{"format": "doppler-outputs", "version": 1, "outputs": [')
            for i, tensor in enumerate(leaves(expected)):
                if i:
                    f.write(", ")
                api._write_tensor(f, tensor)
            f.write("]}")
        report = json.loads(run_tool("doppler-run", [
            source, "--arguments", arguments, "--compare-outputs", outputs, "--json",
            "--tolerance", "1e300"]))
    return float(report["max_rel_error"])


def check(name, exported=False, traced=False, devices=4, system="cpu4", interpreted=False,
          **run_options):
    """Imports and runs zoo model `name` (as an ExportedProgram with
    exported=True, as torch.fx.symbolic_trace's GraphModule with
    traced=True); returns (Row, expected, RunResult or None). With
    interpreted=True the program is not placed or run: the reference
    interpreter runs it (`interpret`; rel_error is then the L2 relative error)."""
    from . import api, sources
    library = _entry(name)[0]
    row = Row(name, library)
    if not available(name):
        row.skipped = f"{library} is not installed"
        return row, None, None
    try:
        model, inputs = build(name)
    except AttributeError as e:
        # The library is older than the model (Qwen2 is not in
        # transformers 4.36): what it lacks, not a failure of Doppler's.
        module = __import__(library)
        if getattr(e, "obj", None) is not module and library not in str(e):
            raise
        version = getattr(module, "__version__", "?")
        row.skipped = f"{library} {version} has no {getattr(e, 'name', None) or e}"
        return row, None, None
    with torch.no_grad():
        expected = model(*inputs)
    start = time.perf_counter()
    try:
        subject = model
        if exported:
            subject = torch.export.export(model, inputs, strict=False)
        elif traced:
            subject = sources.trace(model, inputs)
        program = api.exported(subject, inputs)
    except DopplerError as e:
        row.error = _short(e)
        return row, expected, None
    row.import_s = time.perf_counter() - start
    row.program = program
    row.ops = op_counts(program.mlir)
    start = time.perf_counter()
    if interpreted:
        row.rel_error = interpret(program, expected)
        row.run_s = time.perf_counter() - start
        return row, expected, None
    result = api.run_program(program, devices=devices, system=system, repeat=1, **run_options)
    row.run_s = time.perf_counter() - start
    row.rel_error = relative_error(result.outputs, expected)
    return row, expected, result


def _short(error):
    lines = str(error).splitlines()
    return " / ".join(line.strip() for line in lines[:3])


# -- the table ----------------------------------------------------------------------------


def _ops_text(ops):
    total = sum(ops.values())
    parts = ", ".join(f"{k.split('.', 1)[1]} {v}" for k, v in sorted(ops.items()))
    return f"{total} ({parts})" if total else "-"


def replace_section(path, title, body):
    """Writes `body` (a Markdown section starting with its heading `title`)
    into `path` in place of the section with that heading, up to the next
    '## ' heading, or appended; the rest of the file is kept."""
    body = body.rstrip("\n") + "\n"
    old = open(path).read() if os.path.exists(path) else ""
    start = old.find(title)
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + body if old.strip() else body
    else:
        end = old.find("\n## ", start + len(title))
        new = old[:start] + body + (old[end:] if end >= 0 else "")
    with open(path + ".tmp", "w") as f:
        f.write(new)
    os.replace(path + ".tmp", path)


def figure(value, spec=".1f"):
    """A table cell: `value` formatted, or "-" for None."""
    return "-" if value is None else format(value, spec)


def table(rows):
    version = torch.__version__.split("+")[0]
    libs = {}
    for lib in ("torchvision", "transformers"):
        try:
            libs[lib] = __import__(lib).__version__.split("+")[0]
        except ImportError:
            libs[lib] = None
    lines = ["| model | library | torch | doppler ops | rel. error | import s | run s | "
             "result |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lib = f"{r.library} {libs.get(r.library) or ''}".strip()
        if r.skipped:
            result = f"skipped: {r.skipped}"
        elif r.error:
            result = "error: " + r.error.replace("|", "\\|")
        else:
            result = "ok" if r.rel_error <= 1e-4 else "WRONG (above 1e-4)"
        err, imp, run = figure(r.rel_error, ".1e"), figure(r.import_s), figure(r.run_s)
        lines.append(f"| {r.name} | {lib} | {version} | {_ops_text(r.ops)} | {err} | {imp} | "
                     f"{run} | {result} |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m doppler.zoo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", help=f"default: all ({', '.join(MODELS)})")
    parser.add_argument("--table", help="write the Markdown table to this file")
    parser.add_argument("--exported", action="store_true",
                        help="hand each model over as a torch.export ExportedProgram")
    parser.add_argument("--traced", action="store_true",
                        help="hand each model over as torch.fx.symbolic_trace's GraphModule "
                        "(torch 1.x's path)")
    parser.add_argument("--append", action="store_true",
                        help="add the table to the --table file as a further section")
    parser.add_argument("--interpret", action="store_true",
                        help="check with the reference interpreter instead of placing and "
                        "running (rel. error: ||out - ref|| / ||ref||)")
    parser.add_argument("--expand-windows", action="store_true",
                        help="convolutions and pooling as slices and einsums instead of "
                        "doppler.conv / doppler.pool (sets DOPPLER_WINDOW_OPS=0)")
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--system", default="cpu4")
    args = parser.parse_args(argv)
    if args.expand_windows:
        os.environ["DOPPLER_WINDOW_OPS"] = "0"
    names = args.models or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}")
    rows = []
    start = time.perf_counter()
    for name in names:
        try:
            row = check(name, exported=args.exported, traced=args.traced,
                        devices=args.devices, system=args.system,
                        interpreted=args.interpret)[0]
        except DopplerError as e:  # a tool failed
            row = Row(name, MODELS[name][0])
            row.error = _short(e)
        rows.append(row)
        print(table([row]).splitlines()[-1], flush=True)
    total = time.perf_counter() - start
    text = table(rows)
    print(f"\n{text}\n\n{len(names)} models in {total:.0f} s")
    if args.table:
        _write_table(args.table, text, total, args)
    failed = [r for r in rows if r.error or (r.rel_error is not None and r.rel_error > 1e-4)]
    return 1 if failed else 0


def _write_table(path, text, total, args):
    """Writes the table to `path` as its "## Handed over ..." section: without
    --append the file's header and these sections are rewritten, with
    --append this section is replaced or added after the others. The file's
    other sections (the linalg route's, the unseen models', ...) are kept."""
    how = "as ExportedPrograms" if args.exported else \
        "as symbolic_trace GraphModules" if args.traced else "as nn.Modules"
    section = (f"## Handed over {how}\n\n{text}\n\n{sys.platform}, {os.cpu_count()} CPUs "
               f"(shared); these {text.count(chr(10)) - 1} models: {total:.0f} s.\n")
    header = ("# Model zoo\n\n"
              "Written by `python -m doppler.zoo --table docs/zoo.md` "
              "(python/doppler/zoo.py; `--exported --append` and `--traced --append` "
              "add the other sections): each model built from its library with random "
              "weights at a small configuration (seed 0), handed to `doppler.run` on "
              f"{args.devices} devices (system {args.system}), compared with PyTorch "
              "eager. *doppler ops*: the imported program's ops before decomposition and "
              "placement, by kind. *rel. error*: max abs difference / max abs reference "
              "over every output. *import*: export, decompositions and import; *run*: "
              "doppler-opt's pipeline and doppler-run.\n")
    old = open(path).read() if os.path.exists(path) else ""
    parts = old.split("\n## ")
    sections = ["## " + part.rstrip("\n") + "\n" for part in parts[1:]]
    ours = [x for x in sections if x.startswith("## Handed over ")]
    others = [x for x in sections if not x.startswith("## Handed over ")]
    if args.append:
        header = parts[0].rstrip("\n") + "\n" if old else header
        title = f"## Handed over {how}\n"
        ours = [section if x.startswith(title) else x for x in ours]
        if section not in ours:
            ours.append(section)
    else:
        ours = [section]
    with open(path + ".tmp", "w") as f:
        f.write("\n".join([header] + ours + others))
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    sys.exit(main())

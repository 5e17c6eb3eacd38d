#!/usr/bin/env python3
"""The real-program placement sets of issue 32: zoo models at realistic
shapes, exported by the frontend, decomposed and costed by the default
pipeline, written as the graphs doppler-place and doppler-train read.

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=python \\
        build/torch-venv/bin/python scripts/real_programs.py
    ... scripts/real_programs.py --models bert_base_128 --targets h100x8:8
    ... scripts/real_programs.py --list          # the split, no work

Every model is built with random weights (torch.manual_seed(0) before each;
nothing is downloaded) and exported once by doppler.export to
CACHE/programs/MODEL.mlir. For each target SYSTEM:D, the graph placement
consumes is what doppler-pipeline (system=SYSTEM devices=D, its defaults:
parts=auto with the decomposition search, fuse) has in hand when its place
pass starts:

    doppler-opt MODEL.mlir --doppler-verify-unplaced \\
        --doppler-annotate-costs=system=S \\
        --doppler-decompose-search="system=S devices=D" --canonicalize \\
        --doppler-fuse-elementwise --doppler-annotate-costs=system=S

written to CACHE/graphs/MODEL.SYSTEM.dD.mlir (every op costed; no device
attributes). With --uniform, CACHE/graphs/MODEL.SYSTEM.dD.uniform.mlir
holds the pipeline's parts=D decomposition as well (every einsum split in
D blocks: the 10^4-10^5-op graphs). CACHE/manifest.json lists every graph
with its split, node and edge counts (doppler-place's), the candidate the
search chose and the seconds taken; the script prints the same as a table.

The split is fixed: models in HELD_OUT are never trained on (no script of
this repository passes them to doppler-train); TRAIN may be. The scale
split (BERT-large) is never trained on either, and made only when named
(--models, or --split scale): its uniform parts=64 graph on h100x8-8n is
the >= 10^5-op graph of issue 32. All are listed by --list and in
docs/Method.md ("Learning at scale").
"""

import argparse
import collections
import json
import os
import re
import sys
import time

from decompose_table import run  # a command, its output; an error with its stderr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_CACHE = os.path.join(ROOT, "build", "real-programs")
DEFAULT_TARGETS = ["h100x8:8", "h100x8-2n:16"]
CHOSEN = re.compile(r"decomposition search .*?([^,:]+?) [0-9.e+-]+ \(chosen\)")


def _torch():
    import torch
    return torch


def _tf():
    import transformers
    return transformers


def _ids(vocab, batch, seq):
    return _torch().randint(0, vocab, (batch, seq))


def _decoder(cls, config_cls, batch, seq, **config):
    config = config_cls(use_cache=False, **config)
    return cls(config), (_ids(config.vocab_size, batch, seq),)


# Models beyond doppler.zoo_large's (or at other shapes), at common
# inference shapes.
def gpt2_512():
    # Batch 1 (chosen when torch's run_decompositions failed on GPT-2's
    # attention at batch > 1, before the frontend kept attention whole;
    # kept so that the sets stay what they were).
    tf = _tf()
    config = tf.GPT2Config(use_cache=False)  # GPT-2 small: 12 layers, width 768
    return tf.GPT2LMHeadModel(config), (_ids(config.vocab_size, 1, 512),)


def distilbert_256():
    tf = _tf()
    config = tf.DistilBertConfig()  # 6 layers, width 768
    ids = _ids(config.vocab_size, 8, 256)
    return tf.DistilBertModel(config), (ids, _torch().ones(8, 256, dtype=_torch().long))


def bert_base_512():
    tf = _tf()
    config = tf.BertConfig()
    ids = _ids(config.vocab_size, 2, 512)
    return tf.BertModel(config), (ids, _torch().ones(2, 512, dtype=_torch().long))


def bert_large_512():
    tf = _tf()
    config = tf.BertConfig(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                           intermediate_size=4096)  # BERT-large
    ids = _ids(config.vocab_size, 2, 512)
    return tf.BertModel(config), (ids, _torch().ones(2, 512, dtype=_torch().long))


def qwen2_1536():
    tf = _tf()
    return _decoder(tf.Qwen2ForCausalLM, tf.Qwen2Config, 2, 256, vocab_size=32000,
                    hidden_size=1536, intermediate_size=8960, num_hidden_layers=4,
                    num_attention_heads=12, num_key_value_heads=2,
                    max_position_embeddings=512)


def mistral_2048():
    tf = _tf()
    return _decoder(tf.MistralForCausalLM, tf.MistralConfig, 2, 256, vocab_size=32000,
                    hidden_size=2048, intermediate_size=5632, num_hidden_layers=4,
                    num_attention_heads=16, num_key_value_heads=8,
                    max_position_embeddings=512)


def llama_4096():
    tf = _tf()
    return _decoder(tf.LlamaForCausalLM, tf.LlamaConfig, 1, 512, vocab_size=32000,
                    hidden_size=4096, intermediate_size=11008, num_hidden_layers=2,
                    num_attention_heads=32, num_key_value_heads=32,
                    max_position_embeddings=1024)


def _large(name):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from doppler import zoo_large
    return zoo_large.LARGE[name][1]


# name -> (split, what it is, builder or a doppler.zoo_large name)
MODELS = collections.OrderedDict([
    ("resnet18_224", ("train", "torchvision ResNet-18, 8 x 3 x 224 x 224", "resnet18_224")),
    ("mobilenet_v2_224", ("train", "torchvision MobileNetV2, 8 x 3 x 224 x 224",
                          "mobilenet_v2_224")),
    ("efficientnet_b0_224", ("train", "torchvision EfficientNet-B0, 8 x 3 x 224 x 224",
                             "efficientnet_b0_224")),
    ("gpt2_512", ("train", "HF GPT-2 small (12 layers, 768), 1 x 512 tokens", gpt2_512)),
    ("distilbert_256", ("train", "HF DistilBERT (6 layers, 768), 8 x 256 tokens",
                        distilbert_256)),
    ("qwen2_1536", ("train", "HF Qwen2, 4 layers, width 1536, GQA 12/2, 2 x 256 tokens",
                    qwen2_1536)),
    ("mistral_2048", ("train", "HF Mistral, 4 layers, width 2048, GQA 16/8, 2 x 256 tokens",
                      mistral_2048)),
    ("resnet50_224", ("held-out", "torchvision ResNet-50, 8 x 3 x 224 x 224", "resnet50_224")),
    ("vit_b16_224", ("held-out", "torchvision ViT-B/16, 4 x 3 x 224 x 224", "vit_b16_224")),
    ("convnext_tiny_224", ("held-out", "torchvision ConvNeXt-T, 8 x 3 x 224 x 224",
                           "convnext_tiny_224")),
    ("bert_base_128", ("held-out", "HF BERT-base (12 layers, 768), 8 x 128 tokens",
                       "bert_base_128")),
    ("bert_base_512", ("held-out", "HF BERT-base (12 layers, 768), 2 x 512 tokens",
                       bert_base_512)),
    ("llama_2048", ("held-out", "HF LLaMA, 4 layers, width 2048, 2 x 256 tokens",
                    "llama_2048")),
    ("llama_4096", ("held-out", "HF LLaMA, 2 layers, width 4096, 1 x 512 tokens",
                    llama_4096)),
    # The scale model: never trained on, and not in the held-out set's
    # tables either (made only when named, by --models or --split scale):
    # the >= 10^5-op graph of issue 32 (h100x8-8n:64 with --uniform).
    ("bert_large_512", ("scale", "HF BERT-large (24 layers, 1024), 2 x 512 tokens",
                        bert_large_512)),
])


def split_of(name):
    return MODELS[name][0]


def graph_path(cache, model, system, devices, uniform=False):
    suffix = ".uniform" if uniform else ""
    return os.path.join(cache, "graphs", f"{model}.{system}.d{devices}{suffix}.mlir")


def export(name, cache):
    path = os.path.join(cache, "programs", f"{name}.mlir")
    if os.path.exists(path):
        return path, 0.0
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import doppler
    torch = _torch()
    torch.manual_seed(0)
    builder = MODELS[name][2]
    builder = _large(builder) if isinstance(builder, str) else builder
    start = time.perf_counter()
    model, args = builder()
    model.eval()
    text = doppler.export(model, args)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    return path, time.perf_counter() - start


def decompose(opt, program, system, devices, uniform, output, timeout):
    """The default pipeline's passes up to placement; returns the candidate
    the decomposition search chose (or 'parts=D' with --uniform)."""
    split = (f"--doppler-decompose=system={system} devices={devices} parts={devices}"
             if uniform else f"--doppler-decompose-search=system={system} devices={devices}")
    done = run([opt, program, "--doppler-verify-unplaced",
                f"--doppler-annotate-costs=system={system}", split, "--canonicalize",
                "--doppler-fuse-elementwise", f"--doppler-annotate-costs=system={system}",
                "-o", output + ".tmp"], timeout)
    os.replace(output + ".tmp", output)
    if uniform:
        return f"parts={devices}"
    match = CHOSEN.search(done.stderr)
    return match.group(1).strip() if match else "?"


def count(place, graph, devices, timeout):
    done = run([place, graph, "--devices", str(devices), "--policy", "critical-path",
                "--json"], timeout)
    report = json.loads(done.stdout)
    return report["nodes"], report["edges"]


def load_manifest(cache):
    path = os.path.join(cache, "manifest.json")
    if not os.path.exists(path):
        return {"graphs": []}
    with open(path) as f:
        return json.load(f)


def save_manifest(cache, manifest):
    path = os.path.join(cache, "manifest.json")
    with open(path + ".tmp", "w") as f:
        json.dump(manifest, f, indent=1)
    os.replace(path + ".tmp", path)


def parse_target(text):
    system, _, devices = text.partition(":")
    if not system or not devices.isdigit() or int(devices) < 1:
        raise argparse.ArgumentTypeError(f"target '{text}' is not SYSTEM:D (e.g. h100x8:8)")
    return system, int(devices)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--cache", default=DEFAULT_CACHE)
    parser.add_argument("--models", nargs="*", default=None,
                        help="default: every model but the scale split's")
    parser.add_argument("--split", choices=["train", "held-out", "scale", "all"],
                        default="all")
    parser.add_argument("--targets", nargs="*", type=parse_target,
                        default=[parse_target(t) for t in DEFAULT_TARGETS],
                        help="SYSTEM:D pairs (default: h100x8:8 h100x8-2n:16)")
    parser.add_argument("--uniform", action="store_true",
                        help="also write the parts=D decomposition of each")
    parser.add_argument("--force", action="store_true", help="redo graphs already cached")
    parser.add_argument("--timeout", type=float, default=1800)
    parser.add_argument("--list", action="store_true", help="print the split and exit")
    args = parser.parse_args(argv)
    if args.models is None:
        args.models = [m for m in MODELS if split_of(m) != "scale" or args.split == "scale"]
    unknown = [m for m in args.models if m not in MODELS]
    if unknown:
        parser.error(f"unknown model {unknown[0]} (known: {', '.join(MODELS)})")
    models = [m for m in args.models if args.split == "all" or split_of(m) == args.split]
    if args.list:
        for name in models:
            print(f"{name}\t{split_of(name)}\t{MODELS[name][1]}")
        return 0
    opt = os.path.join(args.build, "bin", "doppler-opt")
    place = os.path.join(args.build, "bin", "doppler-place")
    os.makedirs(os.path.join(args.cache, "graphs"), exist_ok=True)
    manifest = load_manifest(args.cache)
    entries = {e["path"]: e for e in manifest["graphs"]}
    print("| model | split | system | D | decomposition | nodes | edges | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    failures = 0
    for name in models:
        try:
            program, export_seconds = export(name, args.cache)
        except Exception as error:  # a model the frontend cannot export: reported, next
            failures += 1
            print(f"| {name} | {split_of(name)} | export failed: "
                  f"{str(error).splitlines()[0][:200]} |||||", flush=True)
            continue
        for system, devices in args.targets:
            for uniform in ([False, True] if args.uniform else [False]):
                path = graph_path(args.cache, name, system, devices, uniform)
                relative = os.path.relpath(path, args.cache)
                entry = entries.get(relative)
                if entry is None or args.force or not os.path.exists(path):
                    start = time.perf_counter()
                    try:
                        chosen = decompose(opt, program, system, devices, uniform, path,
                                           args.timeout)
                        nodes, edges = count(place, path, devices, args.timeout)
                    except Exception as error:
                        failures += 1
                        print(f"| {name} | {split_of(name)} | {system} | {devices} | "
                              f"failed: {str(error).splitlines()[0][:200]} ||||", flush=True)
                        continue
                    entry = {"path": relative, "model": name, "split": split_of(name),
                             "description": MODELS[name][1], "system": system,
                             "devices": devices, "uniform": uniform,
                             "decomposition": chosen, "nodes": nodes, "edges": edges,
                             "seconds": round(time.perf_counter() - start, 2),
                             "export_seconds": round(export_seconds, 2)}
                    entries[relative] = entry
                    manifest["graphs"] = sorted(entries.values(), key=lambda e: e["path"])
                    save_manifest(args.cache, manifest)
                print(f"| {name} | {entry['split']} | {system} | {devices} | "
                      f"{entry['decomposition']} | {entry['nodes']} | {entry['edges']} | "
                      f"{entry['seconds']} |", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

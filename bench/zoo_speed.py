#!/usr/bin/env python3
"""Real models on Doppler's CPU runtime against PyTorch eager and torch.compile.

For each model (the zoo of python/doppler/zoo.py at its test configuration,
and the models of issue 35's table at their sizes: `--set issue`) the
module is imported by Doppler's frontend, placed by the default pipeline for
D devices on this host's calibrated description (doppler.host: what
`doppler.run` uses by default) and run by doppler-run on the same weights
and inputs. Interleaved round by round, so that machine noise hits every
configuration alike:

  - PyTorch eager with T threads (T = 1, 2): a worker process whose
    OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS are T before
    torch is imported, plus torch.set_num_threads(T);
  - torch.compile (inductor, CPU) in the same worker, when the torch has it
    (2.x; not Debian's 1.13): the stronger anchor;
  - Doppler on D = T devices: doppler-run --repeat R --json, its median
    measured makespan and its predicted makespan.

Prints one table of medians: Doppler/eager, Doppler/compile, measured over
predicted; fails (exit 1) when Doppler's outputs differ from PyTorch's by
more than --tolerance. With --recalibrate, every round also calibrates the
host anew and re-costs the placed programs with it (their placement as it
was): the median over rounds of each round's measured over that round's
predicted makespan is the model's error without the drift between one
calibration and runs minutes later (column "recal"). Each compilation's
time (torch.compile and its 3 warm-up calls) goes to stderr.

    build/torch-venv/bin/python bench/zoo_speed.py              # the zoo, D = 1, 2
    build/torch-venv/bin/python bench/zoo_speed.py --set issue  # issue 35's five models
    build/torch-venv/bin/python bench/zoo_speed.py --quick gpt2 # smoke run

Four torchvision CNNs in neither set (shufflenet_v2_x0_5, regnet_x_400mf,
mnasnet0_5, squeezenet1_1: held out from the cost model's tuning) run when
named, here and in bench/zoo_schedule.py.

Run under the torch-venv (torch 2.15) for torch.compile; Debian's
/usr/bin/python3 (torch 1.13) runs the eager columns only.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from bench_worker import WorkerProcess, doppler_tool, parse_seconds, thread_environment

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))

# torch is imported late (in main or in the worker) so that a worker's
# thread settings are in its environment before torch and its BLAS load.


# -- the models --------------------------------------------------------------------

def _issue_models():
    """Issue 35's table: name -> builder of (module, inputs), at its sizes."""
    import torch

    def resnet18_64():
        import torchvision
        return torchvision.models.resnet18(num_classes=10), (torch.randn(1, 3, 64, 64),)

    def vit_w64():
        import torchvision
        model = torchvision.models.VisionTransformer(
            image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=64,
            mlp_dim=128, num_classes=10)
        torch.nn.init.normal_(model.heads.head.weight, std=0.2)  # torchvision zeroes it
        return model, (torch.randn(2, 3, 32, 32),)

    def llama_w128():
        import transformers as tf
        config = tf.LlamaConfig(vocab_size=256, hidden_size=128, intermediate_size=344,
                                num_hidden_layers=2, num_attention_heads=4,
                                num_key_value_heads=4, max_position_embeddings=64,
                                use_cache=False)
        return tf.LlamaForCausalLM(config), (torch.randint(0, 256, (2, 32)),)

    def hf_convnext_64():
        import transformers as tf
        config = tf.ConvNextConfig(num_channels=3, num_stages=2, hidden_sizes=[32, 64],
                                   depths=[2, 2], num_labels=10, image_size=64)
        return tf.ConvNextForImageClassification(config), (torch.randn(1, 3, 64, 64),)

    def hf_resnet_64():
        import transformers as tf
        config = tf.ResNetConfig(num_channels=3, embedding_size=32, hidden_sizes=[64, 128],
                                 depths=[2, 2], layer_type="basic", num_labels=10)
        return tf.ResNetForImageClassification(config), (torch.randn(1, 3, 64, 64),)

    return {"resnet18_64": resnet18_64, "vit_w64": vit_w64, "llama_w128": llama_w128,
            "hf_convnext_64": hf_convnext_64, "hf_resnet_64": hf_resnet_64}


def _heldout_models():
    """CNNs that neither the zoo nor issue 35's table has, for checking the
    cost model on networks it was not tuned on (issue 35's held-out finding):
    torchvision's, random weights, small inputs. In no --set: named only."""
    import torch

    def torchvision_model(builder, shape, **kwargs):
        def build():
            import torchvision
            return getattr(torchvision.models, builder)(**kwargs), (torch.randn(*shape),)
        return build

    return {
        "shufflenet_v2_x0_5": torchvision_model("shufflenet_v2_x0_5", (2, 3, 64, 64),
                                                num_classes=10),
        "regnet_x_400mf": torchvision_model("regnet_x_400mf", (1, 3, 64, 64)),
        "mnasnet0_5": torchvision_model("mnasnet0_5", (1, 3, 64, 64), num_classes=10),
        "squeezenet1_1": torchvision_model("squeezenet1_1", (1, 3, 64, 64), num_classes=10),
    }


def model_names(which):
    from doppler import zoo
    names = []
    if which in ("zoo", "all"):
        names += [n for n in zoo.MODELS if zoo.available(n)]
    if which in ("issue", "all"):
        names += list(_issue_models())
    return names


def build(name):
    """(module in eval mode, inputs) of model `name`, seeded: every process
    builds the same weights."""
    import torch
    from doppler import zoo
    torch.manual_seed(0)
    if name in zoo.MODELS:
        return zoo.build(name)
    builders = _issue_models()
    builders.update(_heldout_models())
    module, inputs = builders[name]()
    return module.eval(), inputs


# -- PyTorch worker ------------------------------------------------------------------

def worker_main(args):
    """Builds every model of --models; per "run NAME MODE N" line on stdin
    (MODE eager or compile) times N forwards and prints their seconds; a
    mode that fails prints "error: ..."."""
    import torch

    torch.set_num_threads(args.threads)
    models = {}
    for name in args.models.split(","):
        module, inputs = build(name)
        models[name] = {"eager": module, "inputs": inputs}
    print("ready", flush=True)
    with torch.no_grad():
        for line in sys.stdin:
            words = line.split()
            if len(words) != 4 or words[0] != "run":
                break
            name, mode, count = words[1], words[2], int(words[3])
            entry = models[name]
            try:
                if mode not in entry:
                    # The first calls compile (inductor) and warm up; how
                    # long that took goes to stderr (the table's note).
                    start = time.perf_counter()
                    entry[mode] = torch.compile(entry["eager"])
                    for _ in range(3):
                        entry[mode](*entry["inputs"])
                    print(f"{name}: torch.compile with {args.threads} thread(s) took "
                          f"{time.perf_counter() - start:.1f} s (compiling and 3 "
                          f"warm-up calls)", file=sys.stderr, flush=True)
                elif mode == "eager" and "warm" not in entry:
                    for _ in range(2):
                        entry["eager"](*entry["inputs"])
                entry["warm"] = True
                seconds = []
                for _ in range(count):
                    start = time.perf_counter()
                    entry[mode](*entry["inputs"])
                    seconds.append(time.perf_counter() - start)
                print(" ".join(f"{s:.9f}" for s in seconds), flush=True)
            except Exception as e:  # noqa: BLE001 - a mode that fails is reported, not fatal
                message = str(e).splitlines()[0] if str(e) else type(e).__name__
                print(f"error: {message[:200]}", flush=True)
    return 0


class TorchWorker(WorkerProcess):
    def __init__(self, names, threads):
        super().__init__(__file__, ["--models", ",".join(names)], threads,
                         f"{threads} threads")

    def time(self, name, mode, repeat):
        """Seconds of `repeat` forwards, or an "error: ..." string."""
        line = self.request(f"run {name} {mode} {repeat}")
        if line.startswith("error:"):
            return line.strip()
        return parse_seconds(line)


# -- Doppler -------------------------------------------------------------------------


def place(program_path, placed, devices, system):
    subprocess.run([doppler_tool("doppler-opt"), program_path,
                    f"--doppler-pipeline=devices={devices} system={system}",
                    "-o", placed], check=True, stderr=subprocess.DEVNULL)


def resimulate(placed, system):
    """The predicted makespan (ms) of the placed program `placed` with its
    costs from description `system`: the same placement, re-costed and
    simulated (doppler-annotate-costs, doppler-simulate with its hand-offs)."""
    done = subprocess.run([doppler_tool("doppler-opt"), placed,
                           f"--doppler-annotate-costs=system={system}",
                           f"--doppler-simulate=system={system}"], check=True,
                          capture_output=True, text=True)
    match = re.search(r"doppler\.makespan = ([0-9.eE+-]+)", done.stdout)
    if not match:
        raise ValueError(f"{placed}: no doppler.makespan after doppler-simulate")
    return float(match.group(1)) / 1e3


def doppler_run(placed, devices, arguments, repeat, outputs=None):
    """One doppler-run (a warm-up and `repeat` timed runs): its JSON report.
    Doppler's workers call a single-threaded BLAS each."""
    command = [doppler_tool("doppler-run"), placed, "--backend", "cpu", "--devices",
               str(devices), "--arguments", arguments, "--json", "--repeat", str(repeat)]
    if outputs:
        command += ["--write-outputs", outputs]
    done = subprocess.run(command, check=True, capture_output=True, text=True,
                          env=thread_environment(1))
    return json.loads(done.stdout)


class Prepared:
    """A model imported once and placed for each device count."""

    def __init__(self, name, counts, tmp):
        import torch
        from doppler import api, host, zoo
        self.name = name
        module, inputs = build(name)
        with torch.no_grad():
            self.expected = module(*inputs)
        start = time.perf_counter()
        program = api.exported(module, inputs)
        self.import_s = time.perf_counter() - start
        self.program = program
        self.ops = sum(zoo.op_counts(program.mlir).values())
        source = os.path.join(tmp, f"{name}.mlir")
        with open(source, "w") as f:
            f.write(program.mlir)
        self.arguments = os.path.join(tmp, f"{name}.args.bin")
        api.write_arguments(program, self.arguments)
        self.placed = {}
        for count in counts:
            self.placed[count] = os.path.join(tmp, f"{name}.d{count}.mlir")
            place(source, self.placed[count], count, host.host_system(count))

    def check(self, count, tmp, tolerance):
        """Relative error of Doppler's outputs on `count` devices."""
        from doppler import api, zoo
        outputs = os.path.join(tmp, f"{self.name}.out.bin")
        doppler_run(self.placed[count], count, self.arguments, 1, outputs)
        results = self.program.unflatten(api.read_outputs(outputs))
        error = zoo.relative_error(results, self.expected)
        if not error <= tolerance:
            raise ValueError(f"relative error {error:.3g} over the tolerance {tolerance:g}")
        return error


# -- the table -----------------------------------------------------------------------

def fmt(value, spec):
    """`value` formatted by `spec` ("9.3f"), or its text (an error, "-")
    right-aligned to the same width."""
    if isinstance(value, (int, float)):
        return format(value, spec)
    width = int(spec.split(".")[0])
    text = "-" if value is None else str(value)
    return f"{text[:width]:>{width}}"


def ratio(a, b):
    return a / b if isinstance(a, float) and isinstance(b, float) and b > 0 else None


def print_table(rows, args, load):
    print(f"\nMedians of {args.runs * args.repeat} runs ({args.runs} interleaved rounds of "
          f"{args.repeat}); load average {load[0]:.2f} -> {load[1]:.2f}; "
          f"{os.cpu_count()} CPUs; torch {rows[0]['torch'] if rows else '?'}")
    head = (f"{'model':<16} {'ops':>5} {'D':>2} {'eager ms':>9} {'compile ms':>10} "
            f"{'doppler ms':>10} {'/eager':>7} {'/compile':>8} {'pred ms':>8} "
            f"{'meas/pred':>9}" + (f" {'recal':>6}" if args.recalibrate else ""))
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r['name']:<16} {r['ops']:>5} {r['devices']:>2} {fmt(r['eager'], '9.3f')} "
              f"{fmt(r['compile'], '10.3f')} {fmt(r['doppler'], '10.3f')} "
              f"{fmt(ratio(r['doppler'], r['eager']), '7.2f')} "
              f"{fmt(ratio(r['doppler'], r['compile']), '8.2f')} "
              f"{fmt(r['predicted'], '8.3f')} "
              f"{fmt(ratio(r['doppler'], r['predicted']), '9.2f')}" +
              (f" {fmt(r['recalibrated'], '6.2f')}" if args.recalibrate else ""))


def settle():
    """A pause before each timed batch: the previous runner's threads (an
    OpenMP team spin-waits after its last parallel region, inductor's
    too) are asleep by then and take no core from the next one."""
    time.sleep(0.05)


def median_ms(samples):
    if isinstance(samples, str):
        return samples
    return statistics.median(samples) * 1e3 if samples else None


def measure(args, names, tmp):
    import torch
    counts = args.devices
    prepared = {}
    for name in names:
        try:
            prepared[name] = Prepared(name, counts, tmp)
        except Exception as e:  # noqa: BLE001 - a model that does not come in is a row
            print(f"{name}: not imported or placed: {str(e).splitlines()[0][:200]}",
                  file=sys.stderr)
    names = [n for n in names if n in prepared]
    failures = []
    for name in names:
        for count in counts:
            try:
                prepared[name].check(count, tmp, args.tolerance)
            except Exception as e:  # noqa: BLE001 - reported, and the run fails at the end
                failures.append(f"{name} on {count} devices: {e}")
    modes = ["eager"] + (["compile"] if hasattr(torch, "compile") and not args.no_compile
                         else [])
    workers = {count: TorchWorker(names, count) for count in counts}
    samples = {(n, c, m): [] for n in names for c in counts for m in modes + ["doppler"]}
    predicted = {}
    # --recalibrate: per round, a fresh calibration re-costs every placed
    # program (its placement unchanged), and the round's measured makespan
    # is set against that round's prediction.
    round_ratios = {(n, c): [] for n in names for c in counts}
    try:
        for _ in range(args.runs):
            round_predicted = {}
            if args.recalibrate:
                from doppler import host
                for count in counts:
                    system = os.path.join(tmp, f"round-host-{count}.json")
                    host.calibrate(count, system)
                    for name in names:
                        round_predicted[(name, count)] = resimulate(
                            prepared[name].placed[count], system)
            for name in names:
                for count in counts:
                    for mode in modes:
                        key = (name, count, mode)
                        if isinstance(samples[key], str):
                            continue
                        settle()
                        got = workers[count].time(name, mode, args.repeat)
                        if isinstance(got, str):
                            samples[key] = got
                        else:
                            samples[key] += got
                    settle()
                    report = doppler_run(prepared[name].placed[count], count,
                                         prepared[name].arguments, args.repeat)
                    samples[(name, count, "doppler")].append(report["measured_makespan_s"])
                    if (name, count) in round_predicted:
                        round_ratios[(name, count)].append(
                            report["measured_makespan_s"] * 1e3 /
                            round_predicted[(name, count)])
                    if report.get("predicted_makespan_s") is not None:
                        predicted[(name, count)] = float(report["predicted_makespan_s"]) * 1e3
    finally:
        for worker in workers.values():
            worker.close()
    rows = []
    for name in names:
        for count in counts:
            rows.append({
                "name": name, "ops": prepared[name].ops, "devices": count,
                "torch": torch.__version__.split("+")[0],
                "eager": median_ms(samples[(name, count, "eager")]),
                "compile": median_ms(samples.get((name, count, "compile"), "n/a")),
                "doppler": median_ms(samples[(name, count, "doppler")]),
                "predicted": predicted.get((name, count)),
                "recalibrated": (statistics.median(round_ratios[(name, count)])
                                 if round_ratios[(name, count)] else None),
            })
    return rows, failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", help="model names (default: the --set)")
    parser.add_argument("--set", choices=("zoo", "issue", "all"), default="zoo")
    parser.add_argument("--devices", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--runs", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--repeat", type=int, default=5,
                        help="timed runs per round and configuration")
    parser.add_argument("--tolerance", type=float, default=1e-4,
                        help="largest relative error of Doppler's outputs")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    parser.add_argument("--recalibrate", action="store_true",
                        help="also calibrate anew before every round, re-cost the placed "
                             "programs with it and report the median over rounds of "
                             "measured over that round's prediction (the model's error "
                             "without the drift between one calibration and later runs)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 1 round of 1, D = 1, no torch.compile")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--models", dest="worker_models", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        args.models = args.worker_models
        return worker_main(args)
    if args.runs < 1 or args.repeat < 1 or min(args.devices) < 1:
        parser.error("--runs, --repeat and --devices must be at least 1")
    if args.quick:
        args.runs, args.repeat, args.devices, args.no_compile = 1, 1, [1], True
    # Names are checked against the lists before any model library loads
    # (torchvision and transformers take seconds to import); availability
    # only for the models asked for.
    from doppler import zoo
    known = list(zoo.MODELS) + list(_issue_models()) + list(_heldout_models())
    names = args.models or model_names(args.set)
    unknown = [n for n in names
               if n not in known or (n in zoo.MODELS and not zoo.available(n))]
    if unknown:
        parser.error(f"unknown or unavailable models {unknown} (known: {', '.join(known)})")
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="doppler-zoo-speed-") as tmp:
        rows, failures = measure(args, names, tmp)
    print_table(rows, args, (load_start, os.getloadavg()[0]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    for failure in failures:
        print(f"error: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

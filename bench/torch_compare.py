#!/usr/bin/python3
"""Doppler's CPU runtime against PyTorch eager on the same functions.

For each function (the MLP of examples/mlp.mlir, the LLaMA block at the
README's smaller size, a GPT-style block) the PyTorch module is exported
through Doppler's frontend (python/doppler), so both run the same function
on the same weights and inputs. Per function it measures, interleaved round
by round so that machine noise hits every configuration alike:

  - PyTorch eager on T threads (T = 1, 2): a worker process whose
    OPENBLAS_NUM_THREADS, OMP_NUM_THREADS and MKL_NUM_THREADS are T before
    torch is imported, plus torch.set_num_threads(T). (Debian's torch calls
    OpenBLAS for matmul, and torch.set_num_threads alone does not limit
    OpenBLAS's own threads.)
  - Doppler on D devices (D = 1, 2): doppler-opt --doppler-pipeline (Doppler's
    placement), then doppler-run --arguments (the same weights) --json; its
    measured_makespan_s and predicted_makespan_s.

It prints the medians over all runs of all rounds (PyTorch T threads beside Doppler on
D = T devices) and fails (exit 1) when Doppler's outputs differ from
PyTorch's by more than --tolerance (relative, ||out - ref|| / ||ref||).

    /usr/bin/python3 bench/torch_compare.py            # 12 minutes on a busy 2-core VM
    /usr/bin/python3 bench/torch_compare.py --quick    # smoke run, test sizes
    /usr/bin/python3 bench/torch_compare.py --calibrate  # predictions for this host

Use /usr/bin/python3: Debian's python3-torch is only visible to it.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench_worker import WorkerProcess, doppler_tool, parse_seconds, thread_environment

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.join(REPO, "examples", "torch"))

# torch is imported late (in main or in the worker) so that a worker's
# thread settings are in its environment before torch and OpenBLAS load.

FUNCTIONS = ("mlp", "llama", "gpt")


def build_function(name, quick):
    """(module, inputs) of function `name`, seeded: every process builds the
    same weights. `quick`: the examples' test sizes."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    if name == "mlp":
        class MLP(nn.Module):
            """examples/mlp.mlir: Linear, GELU (tanh form), Linear."""

            def __init__(self, d_in, hidden, d_out):
                super().__init__()
                self.fc1 = nn.Linear(d_in, hidden)
                self.fc2 = nn.Linear(hidden, d_out)

            def forward(self, x):
                return self.fc2(F.gelu(self.fc1(x), approximate="tanh"))

        batch, d_in, hidden, d_out = (16, 64, 256, 32) if quick else (512, 1024, 4096, 1024)
        torch.manual_seed(0)
        return MLP(d_in, hidden, d_out).eval(), (torch.randn(batch, d_in),)
    if name == "llama":
        import llama_block

        if quick:
            return llama_block.make()
        # README.md's smaller LLaMA block: seq 512, d 1024, 8 heads, ffn 2752.
        torch.manual_seed(0)
        block = llama_block.LlamaBlock(d_model=1024, n_heads=8, ffn=2752, max_seq=512).eval()
        with torch.no_grad():
            block.attn_norm.weight.uniform_(0.5, 1.5)
            block.ffn_norm.weight.uniform_(0.5, 1.5)
        return block, (torch.randn(1, 512, 1024),)
    if name == "gpt":
        import gpt_block

        if quick:
            return gpt_block.make()
        # The same scale as the LLaMA block: seq 512, d 1024, 16 heads.
        torch.manual_seed(0)
        block = gpt_block.GPTBlock(n_embd=1024, n_head=16, block_size=512).eval()
        with torch.no_grad():
            for ln in (block.ln_1, block.ln_2):
                ln.weight.uniform_(0.5, 1.5)
                ln.bias.uniform_(-0.2, 0.2)
        return block, (torch.randn(1, 512, 1024),)
    raise ValueError(f"unknown function {name!r}")


def relative_error(out, ref):
    """||out - ref|| / ||ref|| over every tensor of the (nested) outputs."""
    import torch

    if isinstance(ref, torch.Tensor):
        ref64 = ref.double()
        return ((out.double() - ref64).norm() / max(ref64.norm().item(), 1e-30)).item()
    return max(relative_error(o, r) for o, r in zip(out, ref))


# -- PyTorch worker -------------------------------------------------------------


def worker_main(args):
    """Per "run N" line on stdin, times N forwards; prints their seconds on one line."""
    import torch

    torch.set_num_threads(args.threads)
    module, inputs = build_function(args.function, args.quick)
    with torch.no_grad():
        for _ in range(2):  # warm-up: allocator, OpenBLAS buffers
            module(*inputs)
        print("ready", flush=True)
        for line in sys.stdin:
            words = line.split()
            if len(words) != 2 or words[0] != "run":
                break
            seconds = []
            for _ in range(int(words[1])):
                start = time.perf_counter()
                module(*inputs)
                seconds.append(time.perf_counter() - start)
            print(" ".join(f"{s:.9f}" for s in seconds), flush=True)
    return 0


class TorchWorker(WorkerProcess):
    def __init__(self, function, threads, quick):
        super().__init__(__file__, ["--function", function] + (["--quick"] if quick else []),
                         threads, f"{function}, {threads} threads")

    def time(self, repeat):
        """Seconds of `repeat` forwards run back to back."""
        return parse_seconds(self.request(f"run {repeat}"))


# -- Doppler --------------------------------------------------------------------


def calibrate(devices, path):
    """A system description measured here with `devices` devices busy at once
    (doppler-calibrate), so that predictions are for this host."""
    subprocess.run([doppler_tool("doppler-calibrate"), "--devices", str(devices),
                    "--gemm-size", "512", "-o", path], check=True, stdout=subprocess.DEVNULL)


def place(source, placed, devices, system):
    subprocess.run([doppler_tool("doppler-opt"), source,
                    f"--doppler-pipeline=system={system} devices={devices} policy=doppler",
                    "-o", placed], check=True, stderr=subprocess.DEVNULL)


def doppler_run(placed, devices, arguments, outputs=None, repeat=1):
    """One doppler-run (a warm-up and `repeat` timed runs): its JSON report."""
    command = [doppler_tool("doppler-run"), placed, "--backend", "cpu", "--devices",
               str(devices), "--arguments", arguments, "--json", "--repeat", str(repeat)]
    if outputs:
        command += ["--write-outputs", outputs]
    # The arguments file holds every weight as JSON: lift the 256 MiB cap.
    env = dict(os.environ, DOPPLER_MAX_INPUT_BYTES=str(1 << 34))
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    return json.loads(done.stdout)


def write_arguments(program, path):
    """doppler.api.write_arguments, faster for large weights: finite tensors
    go to json as one list each instead of element by element (half the
    time on the MLP's 8.4 million weights). The file is the same."""
    import torch
    from doppler.api import _tensor_json

    entries = []
    for argument in program.arguments:
        tensor = argument.tensor.detach().cpu().contiguous()
        if tensor.dtype in (torch.float32, torch.float64) and bool(tensor.isfinite().all()):
            entries.append({"type": "f32" if tensor.dtype == torch.float32 else "f64",
                            "shape": list(tensor.shape),
                            "data": tensor.reshape(-1).double().tolist()})
        else:
            entries.append(_tensor_json(tensor))
    with open(path, "w") as f:
        json.dump({"format": "doppler-outputs", "version": 1, "outputs": entries}, f)


# -- Driver ---------------------------------------------------------------------


def compare_function(name, args, tmp):
    """Measures one function; returns (table rows, largest output error)."""
    import torch
    import doppler
    from doppler.api import read_outputs

    module, inputs = build_function(name, args.quick)
    with torch.no_grad():
        expected = module(*inputs)
    program = doppler.exported(module, inputs)
    source = os.path.join(tmp, f"{name}.mlir")
    with open(source, "w") as f:
        f.write(program.mlir)
    arguments = os.path.join(tmp, f"{name}.arguments.json")
    write_arguments(program, arguments)

    configs = sorted(set(args.devices) | set(args.threads))
    placed = {}
    for devices in args.devices:
        placed[devices] = os.path.join(tmp, f"{name}.d{devices}.mlir")
        place(source, placed[devices], devices, args.systems[devices])

    # Doppler's outputs against PyTorch's, on every device count.
    worst = 0.0
    for devices in args.devices:
        outputs = os.path.join(tmp, f"{name}.d{devices}.outputs.json")
        doppler_run(placed[devices], devices, arguments, outputs)
        error = relative_error(program.unflatten(read_outputs(outputs)), expected)
        print(f"  {name}: Doppler on {devices} device(s) vs PyTorch: relative error {error:.3g}",
              flush=True)
        worst = max(worst, error)

    workers = {t: TorchWorker(name, t, args.quick) for t in args.threads}
    torch_s = {t: [] for t in args.threads}
    doppler_s = {d: [] for d in args.devices}
    predicted_s = {}
    try:
        for round_index in range(args.runs):
            # Rotate the order so that no configuration always runs first.
            steps = [("torch", t) for t in args.threads] + [("doppler", d) for d in args.devices]
            shift = round_index % len(steps)
            for kind, count in steps[shift:] + steps[:shift]:
                if kind == "torch":
                    torch_s[count] += workers[count].time(args.repeat)
                else:
                    report = doppler_run(placed[count], count, arguments, repeat=args.repeat)
                    doppler_s[count] += [float(s) for s in report["makespans_s"]]
                    if report.get("predicted_makespan_s") is not None:
                        predicted_s[count] = float(report["predicted_makespan_s"])
            print(f"  {name}: round {round_index + 1}/{args.runs}", flush=True)
    finally:
        for worker in workers.values():
            worker.close()

    rows = []
    for count in configs:
        torch_ms = statistics.median(torch_s[count]) * 1e3 if count in torch_s else None
        doppler_ms = statistics.median(doppler_s[count]) * 1e3 if count in doppler_s else None
        predicted_ms = predicted_s[count] * 1e3 if count in predicted_s else None
        rows.append((name, count, torch_ms, doppler_ms, predicted_ms))
    return rows, worst


def fmt(value, spec):
    return format(value, spec) if value is not None else "-"


def print_table(rows, runs, repeat, load):
    print(f"\nMedians of {runs * repeat} runs ({runs} interleaved rounds of {repeat}); "
          f"PyTorch on T threads beside Doppler on "
          f"D = T devices; load average {load[0]:.1f} at the start, {load[1]:.1f} at the end "
          f"on {os.cpu_count()} CPUs (other processes slow both sides)\n")
    header = (f"{'function':<9} {'T=D':>3} {'PyTorch ms':>11} {'Doppler ms':>11} "
              f"{'Doppler/PyTorch':>16} {'predicted ms':>13} {'measured/predicted':>19}")
    print(header)
    print("-" * len(header))
    for name, count, torch_ms, doppler_ms, predicted_ms in rows:
        ratio = doppler_ms / torch_ms if torch_ms and doppler_ms else None
        accuracy = doppler_ms / predicted_ms if predicted_ms and doppler_ms else None
        print(f"{name:<9} {count:>3} {fmt(torch_ms, '11.2f')} {fmt(doppler_ms, '11.2f')} "
              f"{fmt(ratio, '16.3f')} {fmt(predicted_ms, '13.2f')} {fmt(accuracy, '19.3f')}")


def parse_counts(text):
    counts = sorted({int(part) for part in text.split(",") if part})
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"expected positive counts such as 1,2; got {text!r}")
    return counts


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: the examples' test sizes, 2 rounds")
    parser.add_argument("--functions", default=",".join(FUNCTIONS),
                        help=f"comma-separated, of {', '.join(FUNCTIONS)} (default: all)")
    parser.add_argument("--runs", type=int, help="interleaved rounds (default 7; 2 with --quick)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per configuration per round, back to back (default 3): "
                             "doppler-run --repeat, and as many PyTorch forwards")
    parser.add_argument("--threads", type=parse_counts, default=[1, 2],
                        help="PyTorch thread counts (default 1,2)")
    parser.add_argument("--devices", type=parse_counts, default=[1, 2],
                        help="Doppler device counts (default 1,2)")
    parser.add_argument("--system", default="cpu4",
                        help="system description for the placement (a name or a JSON file, "
                             "e.g. from doppler-calibrate; default cpu4)")
    parser.add_argument("--calibrate", action="store_true",
                        help="place with a system description measured here per device count "
                             "(doppler-calibrate --devices D) instead of --system")
    parser.add_argument("--tolerance", type=float, default=1e-4,
                        help="largest accepted relative error of Doppler's outputs")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--function", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        if len(args.threads) != 1:
            parser.error("a worker takes one --threads count")
        args.threads = args.threads[0]
        return worker_main(args)

    functions = [f for f in args.functions.split(",") if f]
    for name in functions:
        if name not in FUNCTIONS:
            parser.error(f"unknown function {name!r} (expected {', '.join(FUNCTIONS)})")
    if args.runs is None:
        args.runs = 2 if args.quick else 7
    if args.runs < 1 or args.repeat < 1:
        parser.error("--runs and --repeat must be at least 1")

    rows, failures = [], []
    load_start = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="doppler-torch-compare-") as tmp:
        args.systems = {d: args.system for d in args.devices}
        if args.calibrate:
            for devices in args.devices:
                print(f"calibrating {devices} device(s)", flush=True)
                args.systems[devices] = os.path.join(tmp, f"cpu{devices}.json")
                calibrate(devices, args.systems[devices])
        for name in functions:
            print(f"{name}:", flush=True)
            function_rows, error = compare_function(name, args, tmp)
            rows += function_rows
            if not error <= args.tolerance:
                failures.append(f"{name}: relative error {error:.3g} > {args.tolerance:g}")
    print_table(rows, args.runs, args.repeat, (load_start, os.getloadavg()[0]))
    for failure in failures:
        print(f"error: Doppler's outputs differ from PyTorch's: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

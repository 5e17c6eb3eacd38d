#!/usr/bin/env python3
"""Memory as a constraint, end to end (issue 17): a LLaMA block on CPU
devices whose memory limits are far below what the block needs.

For each device count D:
  1. doppler-pipeline places the block (system cpu4, `--parts` parts);
  2. doppler-run runs it without limits: the measured makespan and peaks;
  3. doppler-plan-memory, given a per-device limit, inserts evictions to host
     memory and reloads (doppler.evict / doppler.reload) chosen by simulated
     cost, and predicts the makespan;
  4. doppler-run runs the offloaded program under that limit (memory policy
     wait; the planned order, doppler-run's default for planned programs),
     checks the outputs against the reference interpreter, and reports each
     device's measured peak and the predicted against the measured makespan;
  5. for comparison: the same program in priority order (the planned
     priorities, but a device may run any ready task that fits), in its
     fixed program order (--order program, as an eager framework runs it;
     and the smallest limit under which that order runs at all, by
     bisection), and the placed program without offload under the limit
     (waiting alone).
Prints a table and writes everything (programs, JSON reports, summary.json)
to --out.

  python3 scripts/offload_demo.py                # 2 and 4 devices
  python3 scripts/offload_demo.py --devices 2 --memory-limit 0 --limit-fraction 0.6

Working set: the block's footprint, every tensor it creates plus its
arguments (doppler-work-summary's bytes written, plus the arguments), and
for reference the measured peak of a one-device run that frees every
buffer after its last reader.
"""

import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, check=True):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        sys.stderr.write("command failed: %s\n%s%s" %
                         (" ".join(cmd), proc.stdout, proc.stderr))
        sys.exit(1)
    return proc


def run_json(bin_dir, program, args):
    """doppler-run --json: the report, or the error text when it fails."""
    proc = run([os.path.join(bin_dir, "doppler-run"), program, "--json"] + args,
               check=False)
    if proc.returncode != 0 and not proc.stdout.strip().startswith("{"):
        return None, proc.stderr.strip()
    return json.loads(proc.stdout), None


def tensor_bytes(type_text):
    m = re.match(r"tensor<([0-9x]+)x(f32|f64)>", type_text)
    if not m:
        return 0
    count = 1
    for extent in m.group(1).split("x"):
        count *= int(extent)
    return count * (4 if m.group(2) == "f32" else 8)


def footprint(bin_dir, program_path):
    """Bytes of every tensor the (undecomposed) block creates, plus its
    arguments."""
    summary = run([os.path.join(bin_dir, "doppler-opt"), program_path,
                   "--doppler-work-summary", "-o", os.devnull]).stderr
    written = float(re.search(r"written: ([0-9.e+]+)", summary).group(1))
    text = open(program_path).read()
    header = text[text.index("func.func"):text.index("->")]
    arguments = sum(tensor_bytes(t) for t in re.findall(r"tensor<[0-9x]+x\w+>", header))
    return written + arguments, arguments


def megabytes(value):
    return "%.1f MB" % (value / 1e6)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--devices", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--ffn", type=int, default=688)
    parser.add_argument("--parts", type=int, default=16)
    parser.add_argument("--system", default="cpu4",
                        help="system preset or JSON for the cost model (e.g. "
                             "doppler-calibrate's: predictions that match this "
                             "host); its host link prices evictions")
    parser.add_argument("--memory-limit", type=float, nargs="+",
                        default=[23e6, 18e6],
                        help="bytes per device, one figure per --devices entry "
                             "or one for all (default 23 and 18 MB: the "
                             "planner needs evictions there; 0: "
                             "--limit-fraction of the unlimited run's largest "
                             "device peak)")
    parser.add_argument("--limit-fraction", type=float, default=0.6)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-check", action="store_true",
                        help="skip the comparison with the interpreter")
    parser.add_argument("--build", default=os.environ.get(
        "DOPPLER_BUILD_DIR", os.path.join(ROOT, "build")))
    parser.add_argument("--out", default=os.path.join(
        os.environ.get("DOPPLER_OUT_DIR", os.path.join(ROOT, "out")), "offload"))
    args = parser.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    os.makedirs(args.out, exist_ok=True)

    block = os.path.join(args.out, "llama_block.mlir")
    with open(block, "w") as f:
        f.write(run([sys.executable, os.path.join(ROOT, "examples", "generate_examples.py"),
                     "llama", "--seq", str(args.seq), "--d-model", str(args.d_model),
                     "--heads", str(args.heads), "--ffn", str(args.ffn)]).stdout)
    total, arguments = footprint(bin_dir, block)
    print("LLaMA block: seq %d, d_model %d, %d heads, ffn %d (f32); footprint %s "
          "(arguments %s)" % (args.seq, args.d_model, args.heads, args.ffn,
                              megabytes(total), megabytes(arguments)))

    summary = {"block": {"seq": args.seq, "d_model": args.d_model, "heads": args.heads,
                         "ffn": args.ffn, "parts": args.parts},
               "footprint_bytes": total, "argument_bytes": arguments, "runs": []}
    timing = ["--repeat", str(args.repeat)]

    # One device, no limit: the peak a run that frees as it goes needs.
    one = os.path.join(args.out, "placed.1.mlir")
    run([os.path.join(bin_dir, "doppler-opt"), block, "--doppler-pipeline=devices=1 system=%s parts=%d" % (args.system, args.parts),
         "--mlir-print-op-on-diagnostic=false", "-o", one])
    single, error = run_json(bin_dir, one, ["--repeat", "1"])
    if error:
        sys.exit("one-device run failed: " + error)
    summary["one_device_peak_bytes"] = single["per_device"][0]["peak_bytes"]
    print("one device, unlimited: measured peak %s" % megabytes(summary["one_device_peak_bytes"]))

    limits = args.memory_limit * (len(args.devices) if len(args.memory_limit) == 1 else 1)
    if len(limits) != len(args.devices):
        parser.error("--memory-limit takes one figure, or one per --devices entry")
    for devices, given_limit in zip(args.devices, limits):
        placed = os.path.join(args.out, "placed.%d.mlir" % devices)
        run([os.path.join(bin_dir, "doppler-opt"), block,
             "--doppler-pipeline=devices=%d system=%s parts=%d" % (devices, args.system, args.parts),
             "--mlir-print-op-on-diagnostic=false", "-o", placed])
        free, error = run_json(bin_dir, placed, timing)
        if error:
            sys.exit("unlimited run failed: " + error)
        peak_free = max(d["peak_bytes"] for d in free["per_device"])
        limit = int(given_limit or args.limit_fraction * peak_free)

        offloaded = os.path.join(args.out, "offload.%d.mlir" % devices)
        plan = run([os.path.join(bin_dir, "doppler-opt"), placed,
                    "--doppler-plan-memory=system=%s memory-limit=%d" % (args.system, limit),
                    "--mlir-print-op-on-diagnostic=false", "-o", offloaded], check=False)
        entry = {"devices": devices, "limit_bytes": limit,
                 "unlimited": {"measured_s": free["measured_makespan_s"],
                               "predicted_s": free["predicted_makespan_s"],
                               "peak_bytes": [d["peak_bytes"] for d in free["per_device"]]}}
        print("\n== %d devices, limit %s per device (sum %s; footprint / sum = %.1f)" %
              (devices, megabytes(limit), megabytes(limit * devices), total / (limit * devices)))
        print("  unlimited:            measured %.4f s, predicted %.4f s, peaks %s" %
              (free["measured_makespan_s"], free["predicted_makespan_s"],
               ", ".join(megabytes(d["peak_bytes"]) for d in free["per_device"])))
        if plan.returncode != 0:
            entry["plan_error"] = plan.stderr.strip()
            print("  doppler-plan-memory:  " + plan.stderr.strip().splitlines()[0])
            summary["runs"].append(entry)
            continue
        text = open(offloaded).read()
        evictions = text.count("doppler.evict ")
        entry["evictions"] = evictions
        print("  doppler-plan-memory:  %d eviction(s) and reload(s)" % evictions)

        check = [] if args.no_check else ["--check"]
        limited, error = run_json(bin_dir, offloaded, timing + check + ["--memory-limit", str(limit)])
        if error:
            entry["offload_error"] = error
            print("  offloaded, planned order: FAILED: " + error)
            summary["runs"].append(entry)
            continue
        peaks = [d["peak_bytes"] for d in limited["per_device"]]
        entry["offload"] = {"measured_s": limited["measured_makespan_s"],
                            "predicted_s": limited["predicted_makespan_s"],
                            "peak_bytes": peaks, "host_peak_bytes": limited["host_peak_bytes"],
                            "max_rel_error": limited.get("max_rel_error"),
                            "ok": limited.get("ok", True)}
        print("  offloaded, planned order: measured %.4f s, predicted %.4f s (measured / predicted %.2f), "
              "peaks %s (all <= limit: %s), host peak %s%s" %
              (limited["measured_makespan_s"], limited["predicted_makespan_s"],
               limited["measured_makespan_s"] / limited["predicted_makespan_s"],
               ", ".join(megabytes(p) for p in peaks), all(p <= limit for p in peaks),
               megabytes(limited["host_peak_bytes"]),
               "" if args.no_check else ", max rel-error %.2g vs the interpreter" % limited["max_rel_error"]))
        print("    slowdown against unlimited: %.2fx" %
              (limited["measured_makespan_s"] / free["measured_makespan_s"]))

        dynamic, error = run_json(bin_dir, offloaded, timing + ["--memory-limit", str(limit), "--order", "priority"])
        if error:
            entry["priority_order_error"] = error
            print("  offloaded, priority order: FAILED: " + error.splitlines()[0][:200])
        else:
            entry["priority_order"] = {"measured_s": dynamic["measured_makespan_s"]}
            print("  offloaded, priority order: measured %.4f s" % dynamic["measured_makespan_s"])

        fixed, error = run_json(bin_dir, offloaded, timing + ["--memory-limit", str(limit), "--order", "program"])
        if error:
            entry["program_order_error"] = error
            print("  offloaded, program order: FAILED: " + error.splitlines()[0][:200])
            # The smallest limit under which the program order runs at all.
            def runs(bytes_):
                report, failure = run_json(bin_dir, offloaded, ["--repeat", "1", "--memory-limit",
                                                                str(bytes_), "--order", "program"])
                return failure is None
            low, high = limit, 4 * limit
            if runs(high):
                for _ in range(10):
                    middle = (low + high) // 2
                    if runs(middle):
                        high = middle
                    else:
                        low = middle
                entry["program_order_needs_bytes"] = high
                print("    the program order needs %s per device to run (bisection, one run each): "
                      "%.2fx this limit" % (megabytes(high), high / limit))
        else:
            entry["program_order"] = {"measured_s": fixed["measured_makespan_s"],
                                      "peak_bytes": [d["peak_bytes"] for d in fixed["per_device"]]}
            print("  offloaded, program order: measured %.4f s: the planned order is %.2fx faster" %
                  (fixed["measured_makespan_s"], fixed["measured_makespan_s"] / limited["measured_makespan_s"]))

        waiting, error = run_json(bin_dir, placed, ["--repeat", "1", "--memory-limit", str(limit)])
        if error:
            entry["wait_only_error"] = error
            print("  no offload, waiting only: FAILED: " + error.splitlines()[0][:200])
        else:
            entry["wait_only"] = {"measured_s": waiting["measured_makespan_s"]}
            print("  no offload, waiting only: measured %.4f s" % waiting["measured_makespan_s"])
        summary["runs"].append(entry)

    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    print("\nwrote %s" % os.path.join(args.out, "summary.json"))
    failed = [r for r in summary["runs"]
              if "offload" not in r or not r["offload"]["ok"] or
              any(p > r["limit_bytes"] for p in r["offload"]["peak_bytes"])]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

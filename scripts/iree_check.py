#!/usr/bin/env python3
"""Runs a Doppler-placed program on IREE and checks it against Doppler.

For one program and one device count:
  1. doppler-opt --doppler-pipeline="system=cpu4 devices=N ..." (placement);
  2. doppler-translate --export-iree (devices declared in the module);
  3. iree-compile for N local llvm-cpu devices, printing the IR after
     iree-stream-conversion with locations (to see where dispatches run);
  4. iree-run-module with N --device=local-task on the seeded inputs that
     doppler-interpret and doppler-run use (std::mt19937_64, reproduced
     here), outputs written as .npy;
  5. doppler-run --compare-outputs: the relative L2 error of every output
     against the reference interpreter on the same inputs;
  6. placement: for every doppler.einsum (and doppler.fused, counted as
     einsums), doppler.conv and doppler.pool, the device its IREE dispatch
     runs on (an op fused into another op's dispatch counts as honoured
     only when that dispatch runs on the op's device), and the number of
     dispatches per device.

Prints one summary line (and, with --json, a JSON object) and exits 1 when
the error exceeds --tolerance or a step fails. Run with the IREE venv's
python (numpy).

  iree_check.py PROGRAM.mlir --devices N --tools build/bin --iree VENV/bin \
      --work-dir DIR [--pipeline "system=cpu4 policy=..."] [--tolerance 1e-4]

With --placed, PROGRAM is already placed (every op has doppler.device) and
the pipeline is not run; --reference PREFIX also compares the outputs with
an earlier run's (e.g. the same program on 1 device). With --linalg,
PROGRAM is linalg on tensors: IREE runs it on one device against what
convert-linalg-to-doppler makes of it on the interpreter.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time

import numpy as np

MASK64 = (1 << 64) - 1


class MT19937_64:
    """std::mt19937_64, as the C++ standard defines it."""

    N, M = 312, 156
    MATRIX_A = 0xB5026F5AA96619E9
    UPPER, LOWER = 0xFFFFFFFF80000000, 0x7FFFFFFF

    def __init__(self, seed):
        self.mt = [0] * self.N
        self.mt[0] = seed & MASK64
        for i in range(1, self.N):
            prev = self.mt[i - 1]
            self.mt[i] = (6364136223846793005 * (prev ^ (prev >> 62)) + i) & MASK64
        self.index = self.N

    def _twist(self):
        mt = self.mt
        for i in range(self.N):
            x = (mt[i] & self.UPPER) | (mt[(i + 1) % self.N] & self.LOWER)
            xa = x >> 1
            if x & 1:
                xa ^= self.MATRIX_A
            mt[i] = mt[(i + self.M) % self.N] ^ xa
        self.index = 0

    def next(self):
        if self.index >= self.N:
            self._twist()
        y = self.mt[self.index]
        self.index += 1
        y ^= (y >> 29) & 0x5555555555555555
        y ^= (y << 17) & 0x71D67FFFEDA60000
        y ^= (y << 37) & 0xFFF7EEE000000000
        y ^= y >> 43
        return y & MASK64


DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16}


def parse_tensor_type(text):
    """'tensor<4x8xf32>' -> ([4, 8], 'f32')."""
    inner = re.fullmatch(r"\s*tensor<(.*)>\s*", text).group(1)
    parts = inner.split("x")
    return [int(p) for p in parts[:-1]], parts[-1]


def function_signature(path, name=None):
    """Argument and result types of the first (or named) func.func."""
    text = open(path).read()
    pattern = r"func\.func\s+@(\w+)\s*\((.*?)\)\s*->\s*\(?(.*?)\)?\s*(?:attributes\s*\{.*?\}\s*)?\{"
    for m in re.finditer(pattern, text, re.S):
        if name and m.group(1) != name:
            continue
        args = re.findall(r"%[\w.]+\s*:\s*(tensor<[^>]*>)", m.group(2))
        results = re.findall(r"tensor<[^>]*>", m.group(3))
        return m.group(1), [parse_tensor_type(a) for a in args], \
            [parse_tensor_type(r) for r in results]
    sys.exit(f"iree_check: no func.func found in {path}")


def seeded_inputs(arg_types, seed):
    """The inputs of doppler-interpret/doppler-run: uniform in [-1, 1)."""
    gen = MT19937_64(seed)
    inputs = []
    for shape, dtype in arg_types:
        count = int(np.prod(shape)) if shape else 1
        values = [((gen.next() >> 11) * 2.0 ** -53) * 2.0 - 1.0 for _ in range(count)]
        inputs.append(np.array(values, dtype=np.float64).astype(DTYPES[dtype]).reshape(shape))
    return inputs


def run(cmd, what, **kwargs):
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, **kwargs)
    if proc.returncode != 0:
        sys.stderr.write(f"iree_check: {what} failed ({proc.returncode}):\n  "
                         + " ".join(cmd) + "\n" + proc.stdout[-4000:] + proc.stderr[-4000:])
        sys.exit(1)
    return proc, time.monotonic() - start


OP_NAME = re.compile(
    r'"(einsum|conv|pool|fused|reshape|slice|assemble|fill)_(\d+)@d(\d+)"')
# The ops whose placement is checked: the compute ops. A doppler.fused (a
# chain of elementwise einsums made one op) counts as an einsum.
COUNTED = ("einsum", "fused", "conv", "pool")


def dump_sections(stderr):
    """The IR dumps of --mlir-print-ir-after=..., by pass argument."""
    sections = {}
    parts = re.split(r"^// -----// IR Dump After \S+ \((\S+)\) //----- //$|"
                     r"^// -----// IR Dump After \S+: (\S+) //----- //$", stderr, flags=re.M)
    # re.split with two groups: text, g1, g2, text, ...
    for i in range(1, len(parts) - 2, 3):
        name = parts[i] or parts[i + 1]
        sections[name] = parts[i + 2]
    return sections


class LocNames:
    """Resolves the location aliases of one IR dump to the Doppler op names
    (kind, position, device) they hold."""

    def __init__(self, ir):
        self.aliases = dict(re.findall(r"^(#loc\d*) = (loc\(.*\))$", ir, re.M))
        self.memo = {}

    def __call__(self, text, depth=0):
        found = {(k, int(i), int(d)) for k, i, d in OP_NAME.findall(text)}
        if depth > 64:
            return found
        for ref in re.findall(r"#loc\d*\b", text):
            if ref not in self.memo:
                self.memo[ref] = set()
                self.memo[ref] = self(self.aliases.get(ref, ""), depth + 1)
            found |= self.memo[ref]
        return found


def placement_report(stderr, exported_path):
    """Where each Doppler einsum, conv and pool runs in IREE.

    Which ops each dispatch holds comes from the IR after
    iree-flow-outline-dispatch-regions (one executable per dispatch, before
    identical executables are merged), where it runs from the IR after
    iree-stream-conversion (stream.tensor.dispatch on(#hal.device.affinity));
    both printed with --mlir-print-debuginfo, and matched by the dispatch
    op's own location (its root op)."""
    sections = dump_sections(stderr)
    outline = sections.get("iree-flow-outline-dispatch-regions", "")
    stream = sections.get("iree-stream-conversion", "")
    if not outline or not stream:
        sys.exit("iree_check: iree-compile printed no IR after "
                 "iree-flow-outline-dispatch-regions / iree-stream-conversion")

    names = LocNames(outline)
    exe_members = {}
    for m in re.finditer(r"^  flow\.executable private @(\S+) \{\n(.*?)^  \} loc",
                         outline, re.S | re.M):
        # Every op of the body but constants, tensor.empty and linalg.fill:
        # CSE merges identical ones of different Doppler ops and keeps one
        # op's name. (An elementwise op fused into another's linalg.generic
        # keeps its name on its scalar ops, so it counts where it runs.)
        members = set()
        for line in m.group(2).splitlines():
            if re.search(r"arith\.constant|tensor\.empty|linalg\.fill", line):
                continue
            members |= names(line)
        exe_members[m.group(1)] = members
    members_by_root = {}
    for m in re.finditer(r"flow\.dispatch @([\w$.-]+)::@[\w$.-]+\(.*(loc\(.*\))$",
                         outline, re.M):
        root = frozenset(names(m.group(2)))
        members_by_root[root] = exe_members.get(m.group(1), set()) | set(root)

    names = LocNames(stream)
    dispatches = []  # (device, the Doppler ops it runs)
    for m in re.finditer(
            r"stream\.tensor\.dispatch on\(#hal\.device\.affinity<@__device_(\d+)>\) "
            r"@[\w$.-]+::@[\w$.-]+\(.*(loc\(.*\))$", stream, re.M):
        root = frozenset(names(m.group(2)))
        dispatches.append((int(m.group(1)), members_by_root.get(root, set(root))))

    # The counted ops and their devices, from the names the export gave them.
    ops = {int(i): (k, int(d)) for k, i, d in OP_NAME.findall(open(exported_path).read())
           if k in COUNTED}
    counts = {}
    where = {}
    for device, members in dispatches:
        counts[device] = counts.get(device, 0) + 1
        for _, index, _ in members:
            where.setdefault(index, set()).add(device)
    honoured = {index for index, (_, device) in ops.items() if where.get(index) == {device}}
    missing = sum(1 for index in ops if index not in where)
    windows = [index for index, (kind, _) in ops.items() if kind in ("conv", "pool")]
    return {
        "ops": len(ops),
        "honoured": len(honoured),
        "einsums": len(ops) - len(windows),
        "einsums_honoured": len(honoured) - len(honoured.intersection(windows)),
        "windows": len(windows),
        "windows_honoured": len(honoured.intersection(windows)),
        "not_found": missing,
        "dispatches_per_device": {f"@__device_{d}": n for d, n in sorted(counts.items())},
    }


def honoured_text(report):
    """'12/12 einsums' and, with convolutions or pools, ' and 4/4 convs and
    pools'."""
    text = f"{report['einsums_honoured']}/{report['einsums']} einsums"
    if report["windows"]:
        text += f" and {report['windows_honoured']}/{report['windows']} convs and pools"
    return text


COMPILE_DUMPS = ["--mlir-print-ir-after=iree-flow-outline-dispatch-regions",
                 "--mlir-print-ir-after=iree-stream-conversion", "--mlir-disable-threading",
                 "--mlir-print-debuginfo"]


def placement_only(args):
    proc, _ = run([os.path.join(args.iree, "iree-compile"), args.program,
                   "--iree-hal-local-target-device-backends=llvm-cpu",
                   "--compile-to=stream", "-o", os.devnull] + COMPILE_DUMPS, "iree-compile")
    report = placement_report(proc.stderr, args.program)
    fraction = report["honoured"] / report["ops"] if report["ops"] else 1.0
    ok = fraction >= args.min_honoured
    print(f"placement honoured for {honoured_text(report)} "
          f"({fraction:.2f}); dispatches per device: "
          + ", ".join(f"{d}: {n}" for d, n in report["dispatches_per_device"].items())
          + (": ok" if ok else f": below {args.min_honoured}"))
    return 0 if ok else 1


def compile_and_run(args, module, signature_of, devices, base, flags):
    """iree-compile `module` for `devices` local llvm-cpu devices and run its
    function (named and typed as in `signature_of`) on the seeded inputs.
    Returns the output .npy paths, the result types, the compiler's stderr
    and the two times."""
    iree = lambda name: os.path.join(args.iree, name)
    vmfb = base + ".vmfb"
    # f64 stays f64 (IREE demotes it to f32 by default; the interpreter
    # does not).
    proc, compile_s = run(
        [iree("iree-compile"), module, "--iree-hal-local-target-device-backends=llvm-cpu",
         "--iree-llvmcpu-target-cpu=host", "--iree-input-demote-f64-to-f32=false",
         "-o", vmfb] + flags, "iree-compile")
    name, arg_types, result_types = function_signature(signature_of)
    inputs = seeded_inputs(arg_types, args.seed)
    cmd = [iree("iree-run-module"), f"--module={vmfb}", f"--function={name}"]
    cmd += ["--device=local-task"] * devices
    for i, value in enumerate(inputs):
        path = f"{base}.in{i}.npy"
        np.save(path, value)
        cmd.append(f"--input=@{path}")
    outputs = [f"{base}.out{i}.npy" for i in range(len(result_types))]
    cmd += [f"--output=@{path}" for path in outputs]
    _, run_s = run(cmd, "iree-run-module")
    return outputs, result_types, proc.stderr, compile_s, run_s


def compare_with_interpreter(args, program, outputs, result_types, base):
    """doppler-run --compare-outputs: the outputs against the reference
    interpreter running `program` on the same seeded inputs."""
    doc = {"format": "doppler-outputs", "version": 1, "outputs": []}
    for path, (shape, dtype) in zip(outputs, result_types):
        value = np.load(path)
        data = [v if np.isfinite(v) else ("nan" if np.isnan(v) else ("inf" if v > 0 else "-inf"))
                for v in value.astype(np.float64).reshape(-1).tolist()]
        doc["outputs"].append({"type": dtype, "shape": shape, "data": data})
    outputs_json = base + ".outputs.json"
    with open(outputs_json, "w") as f:
        json.dump(doc, f)
    proc = subprocess.run([os.path.join(args.tools, "doppler-run"), program,
                           "--compare-outputs", outputs_json, "--seed", str(args.seed),
                           "--tolerance", str(args.tolerance), "--json"],
                          capture_output=True, text=True)
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        sys.exit("iree_check: doppler-run --compare-outputs failed:\n" + proc.stdout + proc.stderr)


def compare_with_reference(outputs, reference):
    """The largest relative L2 difference between each output and the
    same-numbered .npy of the run `reference` (a path prefix, e.g.
    WORK/cnn.d1: WORK/cnn.d1.out0.npy, ...)."""
    worst = 0.0
    for i, path in enumerate(outputs):
        ours = np.load(path).astype(np.float64)
        theirs = np.load(f"{reference}.out{i}.npy").astype(np.float64)
        if ours.shape != theirs.shape:
            sys.exit(f"iree_check: output {i} has shape {ours.shape}, the reference's "
                     f"{theirs.shape}")
        norm = np.linalg.norm(theirs)
        diff = np.linalg.norm(ours - theirs)
        worst = max(worst, float(diff / norm if norm > 0 else diff))
    return worst


def finish(args, line, result):
    print(line)
    if args.summary:
        with open(args.summary, "a") as f:
            f.write(line + "\n")
    if args.json:
        print(json.dumps(result))
    return 0 if result["ok"] else 1


def linalg_check(args, stem):
    """--linalg: PROGRAM is linalg on tensors. IREE runs it on one device;
    the interpreter runs what convert-linalg-to-doppler (full=true) makes of
    it; both on the same seeded inputs."""
    base = os.path.join(args.work_dir, f"{stem}.linalg")
    converted = base + ".doppler.mlir"
    run([os.path.join(args.tools, "doppler-opt"), args.program,
         "--convert-linalg-to-doppler=full=true", "-o", converted],
        "doppler-opt --convert-linalg-to-doppler")
    # The module declares no device: one local device by flag.
    outputs, result_types, _, compile_s, run_s = compile_and_run(
        args, args.program, converted, 1, base, ["--iree-hal-target-device=local"])
    compared = compare_with_interpreter(args, converted, outputs, result_types, base)
    result = {"program": stem, "max_rel_error": compared["max_rel_error"],
              "tolerance": args.tolerance, "ok": bool(compared["ok"]),
              "iree_compile_s": round(compile_s, 2), "iree_run_s": round(run_s, 2)}
    line = (f"{stem} (linalg) on IREE against its doppler conversion: max rel error "
            f"{compared['max_rel_error']:.3g} (tolerance {args.tolerance:g}): "
            f"{'ok' if result['ok'] else 'FAILED'}")
    return finish(args, line, result)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("program")
    parser.add_argument("--devices", type=int)
    parser.add_argument("--tools", help="Doppler's build/bin")
    parser.add_argument("--iree", required=True, help="the IREE venv's bin")
    parser.add_argument("--work-dir")
    parser.add_argument("--pipeline", default="system=cpu4",
                        help="doppler-pipeline options besides devices=N")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-honoured", type=float, default=0.0,
                        help="fail below this fraction of honoured einsums, "
                        "convs and pools")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--summary", help="also append the result line to this file "
                        "(scripts/test.sh prints it after the suite)")
    parser.add_argument("--placement-only", action="store_true",
                        help="PROGRAM is an --export-iree output: only compile "
                             "it and report where its einsums run")
    parser.add_argument("--placed", action="store_true",
                        help="PROGRAM is placed already: do not run the pipeline")
    parser.add_argument("--reference",
                        help="also compare the outputs with those of an earlier run, "
                        "given by its prefix in the work dir (e.g. cnn.d1): fail "
                        "above --tolerance")
    parser.add_argument("--linalg", action="store_true",
                        help="PROGRAM is linalg on tensors: run it on IREE (one "
                        "device) against its convert-linalg-to-doppler conversion "
                        "on the interpreter")
    args = parser.parse_args()
    if not args.placement_only and (not args.tools or not args.work_dir or
                                    (args.devices is None and not args.linalg)):
        parser.error("--devices (unless --linalg), --tools and --work-dir are required")
    return args


def main():
    args = parse_args()
    if args.placement_only:
        return placement_only(args)
    os.makedirs(args.work_dir, exist_ok=True)
    stem = os.path.splitext(os.path.basename(args.program))[0]
    if args.linalg:
        return linalg_check(args, stem)
    base = os.path.join(args.work_dir, f"{stem}.d{args.devices}")
    tool = lambda name: os.path.join(args.tools, name)

    placed = base + ".placed.mlir"
    if args.placed:
        placed = args.program
    else:
        run([tool("doppler-opt"), args.program,
             f"--doppler-pipeline={args.pipeline} devices={args.devices}", "-o", placed],
            "doppler-opt --doppler-pipeline")
    exported = base + ".iree.mlir"
    run([tool("doppler-translate"), "--export-iree", placed, "-o", exported],
        "doppler-translate --export-iree")
    outputs, result_types, compile_log, compile_s, run_s = compile_and_run(
        args, exported, placed, args.devices, base, COMPILE_DUMPS)
    compared = compare_with_interpreter(args, placed, outputs, result_types, base)

    report = placement_report(compile_log, exported)
    fraction = report["honoured"] / report["ops"] if report["ops"] else 1.0
    result = {
        "program": stem, "devices": args.devices,
        "max_rel_error": compared["max_rel_error"], "tolerance": args.tolerance,
        "ok": bool(compared["ok"]) and fraction >= args.min_honoured,
        "honoured_fraction": fraction, **report,
        "iree_compile_s": round(compile_s, 2), "iree_run_s": round(run_s, 2),
    }
    against = ""
    if args.reference:
        result["reference_rel_error"] = compare_with_reference(
            outputs, os.path.join(args.work_dir, args.reference))
        result["ok"] &= result["reference_rel_error"] <= args.tolerance
        against = (f"; against {args.reference}: max rel error "
                   f"{result['reference_rel_error']:.3g}")
    per_device = ", ".join(f"{d}: {n}" for d, n in report["dispatches_per_device"].items())
    line = (f"{stem} on {args.devices} devices: max rel error {compared['max_rel_error']:.3g} "
            f"(tolerance {args.tolerance:g}){against}; placement honoured for "
            f"{honoured_text(report)} ({fraction:.2f}, "
            f"{report['not_found']} in no dispatch); "
            f"dispatches per device: {per_device}: {'ok' if result['ok'] else 'FAILED'}")
    return finish(args, line, result)


if __name__ == "__main__":
    sys.exit(main())

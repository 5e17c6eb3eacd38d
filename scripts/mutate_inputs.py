#!/usr/bin/env python3
"""Feeds mutated copies of .mlir files to a tool and reports crashes.

Each mutant is the text of a seed file with a few random edits: a token
deleted, duplicated or swapped with another token, a number changed (to 0,
-1, huge, fractional), a type changed, a line dropped or duplicated, or the
text truncated. The tool must answer every mutant with exit code 0 or 1:
a signal (crash), any other code, or running past the timeout is reported.

  mutate_inputs.py --tool build/bin/doppler-opt --count 500 --seed 1 \
      --tool-args="--verify-roundtrip" examples/*.mlir test/Dialect/Doppler/ops.mlir
"""

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

TOKEN = re.compile(r'"[^"\n]*"|%[\w.]+|#?[\w.]+|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|\S')
NUMBERS = ["0", "-1", "1", "2", "-7", "9223372036854775807", "99999999999999999999",
           "0.5", "1.0e308", "-0.0", "0x7FF8000000000000"]
TYPES = ["f32", "f16", "i32", "index", "!doppler.value", "tensor<?xf32>", "tensor<*xf32>",
         "tensor<0xf32>", "none"]
WORDS = ["join", "agg", "(", ")", ",", "->", ":", "[", "]", "<", ">", "{", "}", "=",
         "doppler.einsum", "doppler.slice", "doppler.assemble", "doppler.transfer",
         "doppler.task", "doppler.fill", "\"ij->\"", "\"\"", "\"->\"", "\",->\"",
         "#doppler.device<-1>", "add", "mul", "scale", "identity", "func.return",
         "doppler.device", "from", "to", "compute", "transfer"]


def mutate(text, rng):
    for _ in range(rng.randint(1, 3)):
        tokens = [(m.start(), m.end()) for m in TOKEN.finditer(text)]
        if not tokens:
            return text
        start, end = rng.choice(tokens)
        piece = text[start:end]
        choice = rng.randrange(9)
        if choice == 0:
            text = text[:start] + text[end:]
        elif choice == 1:
            text = text[:end] + " " + piece + text[end:]
        elif choice == 2:
            other = text[slice(*rng.choice(tokens))]
            text = text[:start] + other + text[end:]
        elif choice == 3 and re.fullmatch(r"-?\d.*", piece):
            text = text[:start] + rng.choice(NUMBERS) + text[end:]
        elif choice == 4:
            text = re.sub(r"f32|f16|bf16", lambda m: rng.choice(TYPES), text, count=1)
        elif choice == 5:
            lines = text.split("\n")
            i = rng.randrange(len(lines))
            del lines[i]
            text = "\n".join(lines)
        elif choice == 6:
            lines = text.split("\n")
            i = rng.randrange(len(lines))
            lines.insert(rng.randrange(len(lines) + 1), lines[i])
            text = "\n".join(lines)
        elif choice == 7:
            text = text[: rng.randrange(len(text) + 1)]
        else:
            text = text[:start] + rng.choice(WORDS) + text[end:]
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", required=True)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--keep", help="directory to copy crashing mutants into")
    parser.add_argument("--tool-args", default="", help="arguments for the tool, one string")
    parser.add_argument("seeds", nargs="+")
    args = parser.parse_args()
    tool_args = args.tool_args.split()

    rng = random.Random(args.seed)
    texts = [(path, open(path).read()) for path in args.seeds]
    failures = 0
    outcomes = {0: 0, 1: 0}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.count):
            path, seed_text = rng.choice(texts)
            mutant = mutate(seed_text, rng)
            file = os.path.join(tmp, f"mutant{i}.mlir")
            with open(file, "w") as f:
                f.write(mutant)
            try:
                result = subprocess.run([args.tool, file, *tool_args], capture_output=True,
                                        timeout=args.timeout, text=True, errors="replace")
                code = result.returncode
                stderr = result.stderr
            except subprocess.TimeoutExpired:
                code, stderr = "timeout", ""
            if code in (0, 1):
                outcomes[code] += 1
                if code == 1 and "error" not in stderr:
                    failures += 1
                    print(f"mutant {i} of {path}: exit 1 without an error message")
                continue
            failures += 1
            print(f"mutant {i} of {path}: {code}\n{stderr[-2000:]}")
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                with open(os.path.join(args.keep, f"crash{i}.mlir"), "w") as f:
                    f.write(mutant)
    print(f"mutants: {args.count}, accepted: {outcomes[0]}, rejected with errors: "
          f"{outcomes[1]}, crashes/timeouts/other: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

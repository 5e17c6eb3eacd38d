"""Places a reference graph with doppler-place (the command) and with the
doppler-place pass + doppler-simulate, and checks that both report the same
makespan, bit for bit, for several policies."""
import json
import re
import struct
import subprocess
import sys

graph, scratch = sys.argv[1], sys.argv[2]
imported = subprocess.run(["doppler-translate", "--import-doppler-graph", graph],
                          check=True, capture_output=True, text=True).stdout
for policy in ["critical-path", "heft", "round-robin", "single"]:
    placed = subprocess.run(
        ["doppler-opt", f"--doppler-place=devices=4 policy={policy}", "--doppler-simulate"],
        input=imported, check=True, capture_output=True, text=True).stdout
    match = re.search(r"doppler.makespan = (\S+) : f64", placed)
    text = match.group(1)
    ir = struct.unpack(">d", bytes.fromhex(text[2:]))[0] if text.startswith("0x") else float(text)
    tool = json.loads(subprocess.run(
        ["doppler-place", graph, "--devices", "4", "--policy", policy, "--json"],
        check=True, capture_output=True, text=True).stdout)["makespan"]
    print(f"{policy}: pass {ir!r}, command {tool!r}")
    if ir != tool:
        sys.exit(f"mismatch for {policy}: {ir!r} != {tool!r}")

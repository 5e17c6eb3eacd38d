"""Checks a Chrome trace: complete events carry name/ph/ts/dur/pid/tid and
no two events on one (pid, tid) overlap. Prints a short summary."""
import json
import sys
from collections import defaultdict

trace = json.load(open(sys.argv[1]))
events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
lanes = defaultdict(list)
for e in events:
    for key in ("name", "ph", "ts", "dur", "pid", "tid"):
        assert key in e, f"event without {key}: {e}"
    assert e["dur"] >= 0, e
    lanes[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e["name"]))
for lane, spans in lanes.items():
    spans.sort()
    for (s0, e0, n0), (s1, e1, n1) in zip(spans, spans[1:]):
        assert s1 >= e0 - 1e-9 * max(1.0, abs(e0)), f"overlap on {lane}: {n0} and {n1}"
names = {e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
print(f"events: {len(events)}, lanes: {len(lanes)}, processes and threads: {sorted(names)}")

"""Summarises a memory-tight doppler-train log: per stage, the episode
count, how many episodes were on memory-tight pairs (they carry
memory_overflow), and whether the memory prior kept its value."""
import json
import sys

episodes = {}
with open(sys.argv[1]) as log:
    for line in log:
        record = json.loads(line)
        if "stage" in record:
            episodes.setdefault(record["stage"], []).append(record)
for stage, records in episodes.items():
    tight = [r for r in records if "memory_overflow" in r]
    priors = [r["memory_prior"] for r in records]
    state = "unchanged" if all(p == priors[0] for p in priors) else "moved"
    print(f"{stage} episodes {len(records)}, memory-tight {len(tight)}, "
          f"memory prior {state}")

"""Summarises a doppler-train log: per stage, the episode count and whether
the join-aware prior kept the value it had after the first episode."""
import json
import sys

episodes = {}
with open(sys.argv[1]) as log:
    for line in log:
        record = json.loads(line)
        if "stage" in record:
            episodes.setdefault(record["stage"], []).append(record)
start = None
for stage, records in episodes.items():
    priors = [r["join_prior"] for r in records]
    if start is None:
        start = priors[0]
    state = "unchanged" if all(p == start for p in priors) else "moved"
    print(f"{stage} episodes {len(records)}, join prior {state}")

"""Summarises a doppler-train log: per stage, the episode count and whether
the join-aware prior kept its value (imitation) or moved from where RL
started it (the log's join_prior_start line)."""
import json
import sys

episodes = {}
start = None
with open(sys.argv[1]) as log:
    for line in log:
        record = json.loads(line)
        if "join_prior_start" in record:
            start = record["join_prior_start"]
            print(f"RL starts the join prior at {start:g}, chosen from "
                  f"{len(record['tried'])} starts")
        elif "stage" in record:
            episodes.setdefault(record["stage"], []).append(record)
for stage, records in episodes.items():
    priors = [r["join_prior"] for r in records]
    reference = priors[0] if stage == "il" else start
    state = "unchanged" if all(p == reference for p in priors) else "moved"
    print(f"{stage} episodes {len(records)}, join prior {state}")

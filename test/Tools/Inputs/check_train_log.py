"""Summarises a doppler-train log: per stage, the episode count and whether
a prior (argument 2: join, the default, or lookahead) kept its value
(imitation) or moved from where RL started it (the log's <prior>_prior_start
line)."""
import json
import sys

prior = sys.argv[2] if len(sys.argv) > 2 else "join"
key = f"{prior}_prior"
episodes = {}
start = None
with open(sys.argv[1]) as log:
    for line in log:
        record = json.loads(line)
        if f"{key}_start" in record:
            start = record[f"{key}_start"]
            print(f"RL starts the {prior} prior at {start:g}, chosen from "
                  f"{len(record['tried'])} starts")
        elif "stage" in record:
            episodes.setdefault(record["stage"], []).append(record)
for stage, records in episodes.items():
    priors = [r[key] for r in records]
    reference = priors[0] if stage == "il" else start
    state = "unchanged" if all(p == reference for p in priors) else "moved"
    print(f"{stage} episodes {len(records)}, {prior} prior {state}")

"""Writes a copy of a plan with one field changed, for the limit tests.

    mutate_plan.py IN OUT transfer-seconds VALUE   the first transfer's fixed seconds
    mutate_plan.py IN OUT device VALUE             the first transfer's device
    mutate_plan.py IN OUT predicted VALUE          predicted_makespan_s
VALUE is a JSON number (1e300, -5, 4096 ...).
"""
import json
import sys

src, dst, what, value = sys.argv[1:5]
plan = json.load(open(src))
value = json.loads(value)
transfer = next(t for t in plan["tasks"] if t["kind"] == "transfer")
if what == "transfer-seconds":
    transfer["seconds"] = value
elif what == "device":
    transfer["device"] = value
elif what == "predicted":
    plan["predicted_makespan_s"] = value
else:
    sys.exit(f"unknown field {what}")
json.dump(plan, open(dst, "w"))

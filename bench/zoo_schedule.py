#!/usr/bin/env python3
"""Where a zoo model's measured makespan departs from its prediction, task by task.

For each model and device count D: imports it and places it on this host's
calibrated description (as bench/zoo_speed.py does), runs it with
`doppler-run --schedule` (per task, the median run's measured start and end
beside the simulator's and the predicted cost) and prints, per device:

  - per kind of task: tasks, measured time (the task itself plus the
    hand-off before it: the idle gap after the device's previous task when
    the task's inputs were already there), predicted cost, their ratio;
  - the waits (gaps where the device waited for an input from another
    device, or for its first task: the run's start-up), measured and
    predicted;
  - per cross-device input, the hop: from the producer's end to the
    consumer's start, measured against the simulated one.

    build/torch-venv/bin/python bench/zoo_schedule.py gpt2 mobilenet_v2 --devices 1 2

`--keep DIR` keeps the placed programs and schedules there; `--placed FILE`
analyses an already placed program (with `--arguments`, or seeded inputs).
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
sys.path.insert(0, HERE)

from bench_worker import doppler_tool, thread_environment  # noqa: E402


def run_schedule(placed, devices, arguments, repeat, path):
    """doppler-run --schedule on `placed`: the schedule's JSON."""
    command = [doppler_tool("doppler-run"), placed, "--backend", "cpu", "--devices",
               str(devices), "--json", "--repeat", str(repeat), "--schedule", path]
    if arguments:
        command += ["--arguments", arguments]
    subprocess.run(command, check=True, capture_output=True, text=True,
                   env=thread_environment(1))
    with open(path) as f:
        return json.load(f)


def analyse(schedule):
    """Per device: kinds {kind: [count, measured, predicted]}, waits
    (measured, predicted), hops [(measured, predicted)], busy end."""
    tasks = {t["id"]: t for t in schedule["tasks"]}
    devices = collections.defaultdict(list)
    for t in schedule["tasks"]:
        if t["worker"] == "compute":
            devices[t["device"]].append(t)

    def arrival(task):
        """When the inputs of `task` were there (measured, predicted): the
        latest end of its inputs, a transfer's end included."""
        measured = predicted = 0.0
        for i in task["inputs"]:
            source = tasks.get(i)
            if source is None:
                continue  # a graph input
            measured = max(measured, source["end_us"])
            predicted = max(predicted, source.get("predicted_end_us") or 0.0)
        return measured, predicted

    report = {}
    for device, list_ in sorted(devices.items()):
        list_.sort(key=lambda t: t["start_us"])
        kinds = collections.defaultdict(lambda: [0, 0.0, 0.0])
        wait_measured = wait_predicted = 0.0
        previous_end = previous_predicted_end = 0.0
        for t in list_:
            ready, predicted_ready = arrival(t)
            gap = t["start_us"] - previous_end
            if ready > previous_end:  # it waited for an input (or the start)
                wait_measured += gap
                hand_off = 0.0
            else:
                hand_off = gap
            if previous_end == 0.0:  # the first task: the run's start-up
                wait_measured += hand_off
                hand_off = 0.0
            predicted_start = t.get("predicted_start_us") or 0.0
            wait_predicted += max(0.0, predicted_start - previous_predicted_end)
            row = kinds[t["kind"]]
            row[0] += 1
            row[1] += t["end_us"] - t["start_us"] + hand_off
            row[2] += t.get("predicted_us") or 0.0
            previous_end = t["end_us"]
            previous_predicted_end = t.get("predicted_end_us") or previous_predicted_end
        report[device] = {"kinds": dict(kinds), "wait": (wait_measured, wait_predicted),
                          "end": (previous_end, previous_predicted_end)}
    hops = []
    for t in schedule["tasks"]:
        source = tasks.get(t["inputs"][0]) if t["inputs"] else None
        if t["kind"] != "transfer" or source is None:
            continue
        # From the producer's end to the copy's end (the copy itself and,
        # through the copy worker, its wake-up), against the simulator's.
        hops.append((t["bytes"], t["end_us"] - source["end_us"],
                     (t.get("predicted_end_us") or 0.0) -
                     (source.get("predicted_end_us") or 0.0)))
    return report, hops


def print_report(name, devices, schedule, report, hops):
    measured = schedule["measured_makespan_us"]
    predicted = schedule.get("predicted_makespan_us") or 0.0
    print(f"\n{name}, D = {devices}: measured {measured:.1f} us, predicted "
          f"{predicted:.1f} us, ratio {measured / predicted if predicted else 0:.2f}")
    for device, entry in report.items():
        print(f"  device {device}: last task ends {entry['end'][0]:.1f} us "
              f"(predicted {entry['end'][1]:.1f}); waits {entry['wait'][0]:.1f} us "
              f"(predicted {entry['wait'][1]:.1f})")
        rows = sorted(entry["kinds"].items(), key=lambda kv: -kv[1][1])
        for kind, (count, got, want) in rows:
            print(f"    {kind:<26} {count:5d} {got:10.1f} {want:10.1f} "
                  f"{got / want if want else 0:6.2f}  {got / count:7.2f} us/task")
    if hops:
        got = sorted(h[1] for h in hops)
        want = sorted(h[2] for h in hops)
        size = sorted(h[0] for h in hops)
        print(f"  hops: {len(hops)} of {size[0]}-{size[-1]} bytes; producer's end to "
              f"the copy's: measured median {got[len(got) // 2]:.1f} us (sum "
              f"{sum(got):.1f}), predicted median {want[len(want) // 2]:.1f} us "
              f"(sum {sum(want):.1f})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", help="zoo or issue 35 model names")
    parser.add_argument("--devices", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--keep", metavar="DIR", help="keep placed programs here")
    parser.add_argument("--placed", metavar="FILE", help="analyse this placed program")
    parser.add_argument("--arguments", metavar="FILE", help="its --arguments file")
    args = parser.parse_args()
    directory = args.keep or tempfile.mkdtemp(prefix="doppler-zoo-schedule-")
    os.makedirs(directory, exist_ok=True)
    if args.placed:
        devices = args.devices[0]
        path = os.path.join(directory, "schedule.json")
        schedule = run_schedule(args.placed, devices, args.arguments, args.repeat, path)
        print_report(args.placed, devices, schedule, *analyse(schedule))
        return 0
    from zoo_speed import Prepared
    for name in args.models:
        prepared = Prepared(name, args.devices, directory)
        for devices in args.devices:
            path = os.path.join(directory, f"{name}.d{devices}.schedule.json")
            schedule = run_schedule(prepared.placed[devices], devices, prepared.arguments,
                                    args.repeat, path)
            print_report(name, devices, schedule, *analyse(schedule))
    return 0


if __name__ == "__main__":
    sys.exit(main())

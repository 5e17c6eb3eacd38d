#!/usr/bin/env bash
# The paper's comparison (issues 15 and 32): critical-path, join-aware,
# HEFT, Placeto, GDP, Doppler-IL, Doppler-SIM, Doppler-SYS, and the default
# placement zero-shot and within its budget, with sample-efficiency curves,
# on four sets: the shared graphs and a small MLP program at D = 4, two zoo
# models placed for this host at D = 2 (Doppler-SYS trains on the measured
# CPU runs of the program and the zoo models; the zoo needs the torch venv,
# --torch-python), and the held-out real programs of scripts/real_programs.py
# at D = 8 and 16. Writes docs/results/ (table.md, results.json,
# table-zoo.md, results-zoo.json, table-real.md, results-real.json, SVG
# curves); the trained models and logs go to a temporary directory,
# removed at the end, or to --work DIR, kept. See
# scripts/paper_table.py --help. Long: run it at nice -n 19; --sets picks
# the sets.
#   scripts/paper_table.sh [--sets shared,program,zoo,real] [--devices D]
#                          [--zoo-devices D] [--zoo-system host|S] [--remeasure K]
#                          [--episodes E] [--real-episodes E] [--seed S]
#                          [--out DIR] [--work DIR] [GRAPH...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec python3 "$root/scripts/paper_table.py" "$@"

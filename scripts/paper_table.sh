#!/usr/bin/env bash
# The paper's comparison (issues 15 and 32): critical-path, join-aware,
# HEFT, Placeto, GDP, Doppler-IL, Doppler-SIM, Doppler-SYS, and the default
# placement zero-shot and within its budget, with sample-efficiency curves,
# on four sets: the shared graphs, a small MLP program and two zoo models
# (Doppler-SYS trains on their measured CPU runs; the zoo needs the torch
# venv, --torch-python) at D = 4, and the held-out real programs of
# scripts/real_programs.py at D = 8 and 16. Writes docs/results/ (table.md,
# results.json, table-real.md, results-real.json, SVG curves). See
# scripts/paper_table.py --help. Long: run it at nice -n 19; --sets picks
# the sets.
#   scripts/paper_table.sh [--sets shared,program,zoo,real] [--devices D]
#                          [--episodes E] [--real-episodes E] [--seed S]
#                          [--out DIR] [GRAPH...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec python3 "$root/scripts/paper_table.py" "$@"

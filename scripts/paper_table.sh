#!/usr/bin/env bash
# The paper's comparison on the shared graphs (issue 15): critical-path,
# join-aware, Placeto, GDP, Doppler-IL, Doppler-SIM, Doppler-SYS, and the
# default placement zero-shot and within its budget, with sample-efficiency
# curves. Writes docs/results/ (table.md, results.json, SVG curves). See
# scripts/paper_table.py --help; about 15 minutes on 2 cores at the default
# 400 episodes.
#   scripts/paper_table.sh [--devices D] [--episodes E] [--seed S] [--out DIR] [GRAPH...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
exec python3 "$root/scripts/paper_table.py" "$@"

"""Checks for the runs across processes (test/Mpi).

  mpi_check.py outputs REF.json RUN.json...   every RUN's outputs equal
      REF's within 1e-6 relative (max |a - b| / max(1, |b|))
  mpi_check.py trace TRACE.json R D [NODES]   the trace has one row per
      (rank, device): "rank r device d" for D devices in contiguous blocks
      over R ranks (or on the ranks NODES lists, comma-separated), and
      events on every one of them
  mpi_check.py rows TRACE.json R D [NODES]    the same rows, some of them
      possibly without events (a placement that leaves a device idle)
  mpi_check.py nodes PLAN.json OUT.json N,..  writes PLAN with "nodes"
  mpi_check.py killed PLAN.json TOOL          starts 2 ranks of TOOL on PLAN
      with a hang injected on rank 1's first einsum, kills rank 1 with
      SIGKILL once it hangs, and checks that every rank ends, with an
      error, within 10 s
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time


def outputs(ref_path, run_paths):
    ref = json.load(open(ref_path))["outputs"]
    for path in run_paths:
        run = json.load(open(path))["outputs"]
        assert len(run) == len(ref), f"{path}: {len(run)} outputs, {len(ref)} expected"
        worst = 0.0
        for i, (a, b) in enumerate(zip(run, ref)):
            assert a["shape"] == b["shape"], f"{path}: output {i} shape {a['shape']} != {b['shape']}"
            for x, y in zip(a["data"], b["data"]):
                worst = max(worst, abs(x - y) / max(1.0, abs(y)))
        assert worst <= 1e-6, f"{path}: max rel-error {worst} > 1e-6"
        print(f"{os.path.basename(path)}: {len(run)} output(s), max rel-error {worst:.3g}")


def trace(path, ranks, devices, nodes=None, every_row_busy=True):
    events = json.load(open(path))["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events
             if e.get("name") == "process_name"}
    per = devices // ranks
    for d in range(devices):
        want = f"rank {nodes[d] if nodes else d // per} device {d}"
        assert names.get(d) == want, f"process {d} is {names.get(d)!r}, expected {want!r}"
        assert not every_row_busy or any(e["ph"] == "X" and e["pid"] == d for e in events), \
            f"no event on {want}"
    print(f"trace: {devices} rows, " + ", ".join(names[d] for d in range(devices)))


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def killed(plan_path, tool):
    plan = json.load(open(plan_path))
    devices = plan["devices"]
    victim = next(t["id"] for t in plan["tasks"]
                  if t["kind"] == "einsum" and t["device"] >= devices // 2)
    work = tempfile.mkdtemp()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    script = (f'echo $$ > {work}/pid.$OMPI_COMM_WORLD_RANK; exec {tool} '
              f'{plan_path} --repeat 1 --inject-fault hang:{victim}')
    mpirun = subprocess.Popen(
        ["mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none",
         "sh", "-c", script], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    pid_file = os.path.join(work, "pid.1")
    deadline = time.monotonic() + 30
    while not os.path.exists(pid_file) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.5)  # rank 1 is now hanging in task `victim`
    assert mpirun.poll() is None, "the job ended before rank 1 was killed"
    pids = {r: int(open(os.path.join(work, f"pid.{r}")).read()) for r in (0, 1)}
    os.kill(pids[1], signal.SIGKILL)
    killed_at = time.monotonic()
    try:
        out, _ = mpirun.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        mpirun.kill()
        raise AssertionError("mpirun still running 10 s after rank 1 was killed")
    # Every rank's process is gone too (or a zombie waiting to be reaped).
    for r, pid in pids.items():
        while alive(pid):
            assert time.monotonic() < killed_at + 10, \
                f"rank {r} (pid {pid}) still running 10 s after rank 1 was killed"
            time.sleep(0.05)
    elapsed = time.monotonic() - killed_at
    assert mpirun.returncode != 0, "mpirun exited 0 after a rank was killed"
    sys.stdout.write(out)
    print(f"killed rank 1 (task {victim} hanging): every rank ended in "
          f"{elapsed:.1f} s, mpirun exit status {mpirun.returncode}")


if __name__ == "__main__":
    what = sys.argv[1]
    if what == "outputs":
        outputs(sys.argv[2], sys.argv[3:])
    elif what in ("trace", "rows"):
        trace(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]),
              [int(n) for n in sys.argv[5].split(",")] if len(sys.argv) > 5 else None,
              every_row_busy=what == "trace")
    elif what == "nodes":
        plan = json.load(open(sys.argv[2]))
        plan["nodes"] = [int(n) for n in sys.argv[4].split(",")]
        json.dump(plan, open(sys.argv[3], "w"))
    elif what == "killed":
        killed(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"unknown check {what!r}")

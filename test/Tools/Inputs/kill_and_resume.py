"""Kills doppler-train with SIGKILL at random points and resumes it from its
checkpoint until it finishes, then checks that the model is byte for byte
the one an uninterrupted run writes.

    kill_and_resume.py WORKDIR SEED -- DOPPLER-TRAIN ARGS... (without -o)

The uninterrupted run writes WORKDIR/straight/model.pt; the killed one
WORKDIR/killed/model.pt (its checkpoint beside it). The same file name
for both: a LibTorch archive holds its own name. Kill times are
drawn (from SEED) over the uninterrupted run's wall time, so that kills land
in imitation, in RL and while a checkpoint is written. Prints one line per
attempt and "identical after K kill(s) and R resume(s)" at the end; exits 1
on a difference, a failed resume, a run that does not finish within 20
attempts, or when no kill or no resume happened (nothing tested).
"""
import os
import random
import signal
import subprocess
import sys
import time

workdir, seed = sys.argv[1], int(sys.argv[2])
command = sys.argv[sys.argv.index("--") + 1:]
for sub in ("straight", "killed"):
    os.makedirs(os.path.join(workdir, sub), exist_ok=True)
straight = os.path.join(workdir, "straight", "model.pt")
killed = os.path.join(workdir, "killed", "model.pt")
for path in (straight, killed, killed + ".ckpt"):
    if os.path.exists(path):
        os.remove(path)

begin = time.monotonic()
subprocess.run(command + ["-o", straight], check=True, stdout=subprocess.DEVNULL)
wall = time.monotonic() - begin

rng = random.Random(seed)
kills = resumes = 0
left = 1.0  # the fraction of the uninterrupted run's wall time still to go
for attempt in range(20):
    resume = os.path.exists(killed + ".ckpt")
    resumes += resume
    args = command + ["-o", killed] + (["--resume"] if resume else [])
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    # Three kills, each early enough in what is left of the run that it
    # lands before the end (the first one surely does).
    fraction = rng.uniform(0.25, 0.6)
    delay = fraction * left * wall if attempt < 3 else None
    try:
        process.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
        process.wait()
        kills += 1
        left *= 1 - fraction
        print(f"attempt {attempt}: killed after {delay:.2f} s (resume={resume})")
        continue
    err = process.stderr.read().decode()
    if process.returncode != 0:
        sys.exit(f"attempt {attempt}: exit status {process.returncode}: {err.strip()}")
    print(f"attempt {attempt}: finished (resume={resume})")
    break
else:
    sys.exit("no run finished within 20 attempts")

if kills == 0 or resumes == 0:
    sys.exit(f"nothing was tested: {kills} kills, {resumes} resumes")
same = open(straight, "rb").read() == open(killed, "rb").read()
if not same:
    sys.exit(f"the model after {kills} kills differs from the uninterrupted run's")
print(f"identical after {kills} kill(s) and {resumes} resume(s)")

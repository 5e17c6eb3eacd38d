# Runs a command under a 60 s watchdog, passing its stdout and stderr
# through (stderr first), then prints "exit status N"; a command that hangs
# or dies from a signal makes this fail instead of printing a status.
import subprocess
import sys

try:
    run = subprocess.run(sys.argv[1:], capture_output=True, text=True,
                         timeout=60)
except subprocess.TimeoutExpired:
    sys.exit("watchdog: %s did not return within 60 s" % sys.argv[1])
sys.stdout.write(run.stderr)
sys.stdout.write(run.stdout)
if run.returncode < 0:
    sys.exit("watchdog: %s died from signal %d" % (sys.argv[1], -run.returncode))
print("exit status %d" % run.returncode)

"""What the PyTorch-side benchmarks share (bench/torch_compare.py,
bench/zoo_speed.py): the thread variables a timed process runs under, a
worker process that times forwards on request, and the Doppler tools.

A worker is the benchmark script itself re-run with --worker: it prints
"ready" once built, then answers each request line with one line."""

import os
import subprocess
import sys


def thread_environment(threads):
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    return env


def parse_seconds(line):
    """The seconds a worker printed on one line."""
    return [float(word) for word in line.split()]


class WorkerProcess:
    def __init__(self, script, arguments, threads, what):
        """`script` --worker `arguments` --threads `threads`; `what` names it
        in errors."""
        command = [sys.executable, os.path.abspath(script), "--worker", *arguments,
                   "--threads", str(threads)]
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=thread_environment(threads), text=True)
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the PyTorch worker ({what}) failed")

    def request(self, line):
        """The worker's answer to one request line."""
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError("the PyTorch worker died")
        return answer

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def doppler_tool(name):
    from doppler.tools import find_tool

    return find_tool(name)

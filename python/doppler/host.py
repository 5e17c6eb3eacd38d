"""This host's system description, measured once by doppler-calibrate.

`doppler.run` places for the machine it runs on unless told otherwise: its
default `system="host"` resolves to the description doppler-calibrate
measures of this host for the device count (GEMM and memory rates, join
throughputs, the runtime's per-task launch overhead, the cost of a transfer
between device threads), cached per machine and device count so that only
the first run pays for it (a few seconds). The presets (`cpu4`, `h100x8`,
...) stay for what-if placement.

The cache lives in ``$DOPPLER_CACHE_DIR`` or else ``~/.cache/doppler``;
`host_system(devices, refresh=True)` (or deleting the file) measures anew.
A machine is told apart by its host name, CPU model, CPU count and the
calibration tool itself (a rebuilt runtime may run at other rates).
"""

import hashlib
import os
import platform
import tempfile

from .tools import find_tool, run_tool

# Timed runs per figure: fewer than doppler-calibrate's default 7, so that
# the first doppler.run stays quick; the median of 5 is stable enough for
# placement (measured: figures within a few percent of 7 runs' on this
# project's 2-core CI machine).
_REPEAT = 5
# Calibration runs are short; a machine under heavy load may need longer.
_TIMEOUT_S = 600


def cache_dir():
    """Where calibrated descriptions are kept."""
    return os.environ.get("DOPPLER_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "doppler")


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine_key():
    """A short hash naming this machine and calibration tool."""
    # The tool's real path: DOPPLER_BUILD_DIR given relative or absolute, or
    # through a link, names the same binary and so the same calibration.
    tool = os.path.realpath(find_tool("doppler-calibrate"))
    stat = os.stat(tool)
    text = "|".join([platform.node(), _cpu_model(), str(os.cpu_count()), tool,
                     str(stat.st_size), str(int(stat.st_mtime))])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _grids():
    """Whether host calibrations measure the GEMM-shape grids of convolutions
    and contractions (the default). DOPPLER_CALIBRATE_GRIDS=0 leaves them
    out (doppler-calibrate --no-grids): a calibration takes seconds less,
    and each of those kinds is priced by its one rate. The test suite sets
    it; the cached description's name says which it is."""
    return os.environ.get("DOPPLER_CALIBRATE_GRIDS", "1") != "0"


def calibrate(devices, path):
    """Runs doppler-calibrate for `devices` devices as host_system does,
    writing the description to `path` (no cache involved)."""
    grids = [] if _grids() else ["--no-grids"]
    run_tool("doppler-calibrate", ["--devices", str(devices), "--repeat", str(_REPEAT),
                                   *grids, "-o", path], timeout=_TIMEOUT_S)


def host_system(devices, refresh=False):
    """Path of this host's system description for `devices` CPU devices,
    measured by doppler-calibrate on first use (or when `refresh`)."""
    devices = int(devices)
    if devices < 1:
        raise ValueError(f"devices must be at least 1, got {devices}")
    directory = cache_dir()
    suffix = "" if _grids() else "-nogrids"
    path = os.path.join(directory, f"host-{machine_key()}-{devices}{suffix}.json")
    if refresh or not os.path.isfile(path):
        os.makedirs(directory, exist_ok=True)
        # Written beside the final name and renamed: a concurrent run never
        # reads half a file, and two runs calibrating at once both succeed.
        fd, partial = tempfile.mkstemp(prefix=f"host-{devices}-", suffix=".json",
                                       dir=directory)
        os.close(fd)
        try:
            calibrate(devices, partial)
            os.replace(partial, path)
        finally:
            if os.path.exists(partial):
                os.unlink(partial)
    return path


def resolve_system(system, devices, backend="cpu"):
    """`system`, with "host" replaced by this host's calibrated description
    (for the CPU backend; a GPU run needs a description of its GPUs)."""
    if system != "host":
        return system
    if backend != "cpu":
        raise ValueError('system="host" describes this machine\'s CPU; for the '
                         f'{backend} backend give a preset or a JSON file')
    return host_system(devices)

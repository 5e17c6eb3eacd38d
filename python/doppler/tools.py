"""Finding and running Doppler's command-line tools.

The package is pure Python over the tools (doppler-opt, doppler-run, ...).
They are looked up, without any configuration, in this order:

1. ``$DOPPLER_BUILD_DIR/bin`` when the environment variable is set,
2. ``<repo>/build/bin`` when the package is used from a source checkout
   (``PYTHONPATH=python``), ``<repo>`` being the parent of ``python/``,
3. the directories of ``PATH``.
"""

import os
import shutil
import subprocess

from .errors import DopplerError, ToolError, ToolNotFoundError

_REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def search_dirs():
    """The directories searched before PATH, in order, with where each came from."""
    dirs = []
    build = os.environ.get("DOPPLER_BUILD_DIR")
    if build:
        dirs.append((os.path.join(build, "bin"), "$DOPPLER_BUILD_DIR/bin"))
    # Only from a source checkout: python/doppler/tools.py -> <repo>.
    if os.path.isfile(os.path.join(_REPO_ROOT, "python", "doppler", "tools.py")):
        dirs.append((os.path.join(_REPO_ROOT, "build", "bin"), "<repo>/build/bin"))
    return dirs


def _executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def find_tool(name):
    """The path of tool `name` (e.g. "doppler-opt"); raises ToolNotFoundError."""
    tried = []
    for directory, origin in search_dirs():
        path = os.path.join(directory, name)
        if _executable(path):
            return path
        tried.append(f"{path} ({origin})")
    found = shutil.which(name)
    if found:
        return found
    tried.append("PATH")
    raise ToolNotFoundError(
        f"cannot find the Doppler tool '{name}'; looked in: " + ", ".join(tried)
        + ". Build it (bash scripts/build.sh, binaries land in build/bin) or set "
        "DOPPLER_BUILD_DIR to the build directory.")


def run_tool(name, args, input_text=None, timeout=None, stderr=False):
    """Runs tool `name` with `args`; returns its stdout (its stderr with
    stderr=True). Raises ToolError on failure."""
    path = find_tool(name)
    command = [path] + [str(a) for a in args]
    try:
        done = subprocess.run(command, input=input_text, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise ToolError(f"{name} timed out after {timeout} s", command, "", "") from e
    if done.returncode != 0:
        raise ToolError(f"{name} failed with exit status {done.returncode}", command,
                        done.stdout, done.stderr)
    return done.stderr if stderr else done.stdout


__all__ = ["find_tool", "run_tool", "search_dirs", "DopplerError", "ToolError",
           "ToolNotFoundError"]

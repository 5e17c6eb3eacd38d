"""Doppler's PyTorch frontend: torch modules in, placed and running Doppler programs out.

    import doppler
    text = doppler.export(model, (x,))            # doppler-dialect MLIR
    placement = doppler.place(model, (x,), devices=4, system="h100x4")
    print(placement.summary())                    # node -> device, makespan
    result = doppler.run(model, (x,), devices=4)  # placed for this host
    doppler.host_system(4)                        # its calibrated description
    result.outputs, result.measured_makespan, result.predicted_makespan

Pure Python over Doppler's tools (doppler-opt, doppler-run,
doppler-translate), found in $DOPPLER_BUILD_DIR/bin, <repo>/build/bin or
PATH. See python/README.md.
"""

from .api import Placement, RunResult, export, exported, place, run
from .errors import DopplerError, ToolError, ToolNotFoundError, UnsupportedError
from .ops import register
from .host import host_system
from .tools import find_tool

__version__ = "0.1.0"

__all__ = ["export", "exported", "place", "run", "Placement", "RunResult", "register",
           "find_tool", "host_system", "DopplerError", "UnsupportedError", "ToolError", "ToolNotFoundError"]

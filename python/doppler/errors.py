"""Exceptions of the doppler package."""


class DopplerError(Exception):
    """Base class of every error the package raises."""


class UnsupportedError(DopplerError):
    """A torch op (or a use of one) the frontend cannot turn into Doppler IR.

    `node` is the FX node (None when not tied to one); the message names the
    op, the node and, where FX recorded it, the source line.
    """

    def __init__(self, message, node=None):
        self.node = node
        self.reason = message
        super().__init__(_describe(message, node))


def _describe(message, node):
    if node is None:
        return message
    where = f"FX node '{node.name}' ({node.format_node()})"
    trace = node.meta.get("stack_trace") or getattr(node, "stack_trace", None)
    text = f"{message}\n  at {where}"
    frame = _model_frame(trace) if trace else None
    if frame:
        text += "\n  source: " + "\n          ".join(frame)
    return text


def _model_frame(trace):
    """The innermost frame of `trace` (FX's node.stack_trace) outside torch:
    the model's own line, as ["File ..., line N, in f", "code"]."""
    import os

    import torch

    frames = []
    for line in trace.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("File "):
            frames.append([stripped])
        elif frames and len(frames[-1]) == 1:
            frames[-1].append(stripped)
    torch_dir = os.path.realpath(os.path.dirname(torch.__file__)) + os.sep

    def in_torch(frame):
        path = frame[0].split('"')[1] if frame[0].count('"') >= 2 else ""
        return os.path.realpath(path).startswith(torch_dir)

    own = [f for f in frames if not in_torch(f)] or frames
    if not own:
        return None
    # torch 1.x records the innermost frame first, torch 2.x last.
    major = int(torch.__version__.split(".")[0])
    return own[-1] if major >= 2 else own[0]


class ToolNotFoundError(DopplerError):
    """A Doppler command-line tool could not be found."""


class ToolError(DopplerError):
    """A Doppler command-line tool failed; carries its command line and output."""

    def __init__(self, message, command, stdout, stderr):
        self.command = command
        self.stdout = stdout
        self.stderr = stderr
        detail = stderr.strip() or stdout.strip()
        if len(detail) > 4000:
            detail = detail[:4000] + " ..."
        super().__init__(f"{message}: {' '.join(command)}" + (f"\n{detail}" if detail else ""))

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
    if trace:
        # torch.fx records the innermost frame first: the model's own line.
        lines = [line.strip() for line in trace.strip().splitlines() if line.strip()]
        text += "\n  source: " + "\n          ".join(lines[:2])
    return text


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

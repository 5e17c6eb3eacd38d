"""Embedding as doppler.gather: the ids are integer arguments of the program,
so one imported program runs on other ids (the one-hot of old was computed
from the example ids at import time and tied the program to them)."""

import torch
import torch.nn as nn

import doppler
from conftest import assert_close, check_run, needs_tools
from doppler.api import run_program


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(37, 12, padding_idx=0)
        self.head = nn.Linear(12, 5)

    def forward(self, ids):
        return self.head(torch.tanh(self.tok(ids)))


@needs_tools
def test_one_program_runs_on_two_different_id_tensors():
    torch.manual_seed(3)
    model = Tagger().eval()
    first = torch.tensor([[1, 36, 0, 7, 7, 2], [5, 0, 12, 30, 3, 1]])
    second = torch.tensor([[9, 9, 33, 0, 4, 18], [36, 1, 2, 3, 0, 11]])
    program = doppler.exported(model, (first,))
    assert program.mlir.count("doppler.gather") == 1 and "onehot" not in program.mlir
    ids = [a for a in program.arguments if a.tensor.dtype == torch.int64]
    assert len(ids) == 1 and ids[0].kind == "input" and torch.equal(ids[0].tensor, first)
    outputs = []
    for tensor in (first, second):
        ids[0].tensor = tensor  # the same program text, other argument values
        result = run_program(program, devices=2, system="cpu4", policy="round-robin",
                             repeat=1)
        with torch.no_grad():
            assert_close(result.outputs, model(tensor), 1e-5)
        outputs.append(result.outputs)
    assert not torch.allclose(outputs[0], outputs[1])


@needs_tools
def test_padding_idx_rows_are_gathered_as_they_are():
    """padding_idx only zeroes the gradient: forward reads the row as it is
    (here made non-zero by hand), as a plain gather does."""
    torch.manual_seed(4)
    model = Tagger().eval()
    with torch.no_grad():
        model.tok.weight[0].fill_(0.5)
    check_run(model, (torch.tensor([[0, 0, 3], [4, 0, 36]]),))

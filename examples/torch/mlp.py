"""A three-layer perceptron in PyTorch (Doppler's PyTorch frontend example).

    PYTHONPATH=python /usr/bin/python3 examples/torch/mlp.py
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d_in=64, hidden=256, d_out=32):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, d_out)

    def forward(self, x):
        h = F.gelu(self.fc1(x), approximate="tanh")
        h = torch.relu(self.fc2(h))
        return self.fc3(h)


def make(seed=0):
    """The module (eval mode) and example inputs at test size."""
    torch.manual_seed(seed)
    return MLP().eval(), (torch.randn(16, 64),)


if __name__ == "__main__":
    import common

    common.main(make, "mlp")

"""A small ResNet-style CNN in PyTorch (Doppler's PyTorch frontend example):
a strided 7x7 stem with batch norm and max pooling, two basic residual
blocks (the second strided, with a 1x1 projection shortcut), global average
pooling and a classifier.

    PYTHONPATH=python /usr/bin/python3 examples/torch/resnet_small.py
"""

import torch
import torch.nn as nn


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm, and the shortcut added."""

    def __init__(self, channels_in, channels_out, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(channels_in, channels_out, 3, stride=stride, padding=1,
                               bias=False)
        self.bn1 = nn.BatchNorm2d(channels_out)
        self.conv2 = nn.Conv2d(channels_out, channels_out, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels_out)
        self.shortcut = nn.Sequential()
        if stride != 1 or channels_in != channels_out:
            self.shortcut = nn.Sequential(
                nn.Conv2d(channels_in, channels_out, 1, stride=stride, bias=False),
                nn.BatchNorm2d(channels_out))

    def forward(self, x):
        h = torch.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return torch.relu(h + self.shortcut(x))


class SmallResNet(nn.Module):
    def __init__(self, classes=10, width=16):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(width),
            nn.ReLU(), nn.MaxPool2d(3, stride=2, padding=1))
        self.block1 = BasicBlock(width, width)
        self.block2 = BasicBlock(width, 2 * width, stride=2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2 * width, classes)

    def forward(self, x):
        h = self.block2(self.block1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(h), 1))


def make(seed=0):
    """The module (eval mode, batch-norm statistics away from 0 / 1) and
    example inputs at test size."""
    torch.manual_seed(seed)
    model = SmallResNet()
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.5, 0.5)
                module.running_mean.uniform_(-0.5, 0.5)
                module.running_var.uniform_(0.5, 1.5)
    return model.eval(), (torch.randn(2, 3, 32, 32),)


if __name__ == "__main__":
    import sys

    import common

    sys.exit(common.main(make, "resnet_small"))

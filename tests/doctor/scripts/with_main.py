"""Robustness: an `if __name__ == "__main__":` guard and argparse, as most scripts have."""

import argparse
import sys

import torch
from torch import nn


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--steps", type=int, default=100)
    return p.parse_args()


def main() -> None:
    args = parse_args()
    assert sys.argv[0].endswith("with_main.py"), sys.argv
    assert __file__.endswith("with_main.py")
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    for _ in range(args.steps):
        model(torch.randn(2, 4)).sum().backward()
        optimizer.step()
        optimizer.zero_grad()
    print("finished", args.lr)


if __name__ == "__main__":
    main()

"""CPU simulation of benchmarks/unseen3/01 (row cumsum, 4096 x 4096 fp32) under the accuracy rule.

The original's serial fp32 order and the cooperative-row candidate's order (a warp-wide Hillis-Steele scan of
32 elements, the carry added to every lane) are both computed in numpy float32 and measured against a float64
cumsum: how many elements fail the spec's dtype rule (atol 1e-3, rtol 1e-4), what the accuracy rule says,
and that a candidate with one dropped term is still rejected. Inputs as verification draws them.

    PYTHONPATH=$PWD python3 scripts/cumsum_accuracy_sim.py normal shifted scaled    # ~1 min per distribution
"""

from __future__ import annotations

import sys

import numpy as np
import torch

from perfagent.verify.accuracy import compare_accuracy
from perfagent.workloads.inputs import draw

ROWS = LEN = 4096
ATOL, RTOL = 1e-3, 1e-4


def serial(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    cum = np.zeros(x.shape[0], np.float32)
    for i in range(x.shape[1]):
        cum = cum + x[:, i]
        out[:, i] = cum
    return out


def warp_scan(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    carry = np.zeros((x.shape[0], 1), np.float32)
    lanes = np.arange(32)
    for c in range(0, x.shape[1], 32):
        v = x[:, c : c + 32].copy()
        o = 1
        while o < 32:
            up = np.concatenate([np.zeros((x.shape[0], o), np.float32), v[:, :-o]], axis=1)
            v = np.where(lanes >= o, up + v, v).astype(np.float32)
            o <<= 1
        v = (carry + v).astype(np.float32)
        out[:, c : c + 32] = v
        carry = v[:, 31:32]
    return out


def main(dists: list[str]) -> None:
    for dist in dists:
        x = draw((ROWS, LEN), dist, torch.Generator().manual_seed(7)).numpy().astype(np.float32)
        original, candidate = serial(x), warp_scan(x)
        exact = torch.from_numpy(np.cumsum(x.astype(np.float64), axis=1))
        bad = int((np.abs(candidate - original) > ATOL + RTOL * np.abs(original)).sum())
        acc = compare_accuracy(torch.from_numpy(candidate), torch.from_numpy(original), exact, ATOL, RTOL)
        dropped = candidate.copy()
        dropped[5, 2000:] -= x[5, 2000]
        bug = compare_accuracy(torch.from_numpy(dropped), torch.from_numpy(original), exact, ATOL, RTOL)
        print(
            f"{dist}: dtype rule {bad}/{candidate.size} outside; candidate err {acc.candidate_err:.3g}, "
            f"original err {acc.original_err:.3g}: rule ok={acc.ok}; one dropped term: rule ok={bug.ok}"
        )


if __name__ == "__main__":
    main(sys.argv[1:] or ["scaled"])

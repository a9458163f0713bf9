"""Generate examples/fraud.csv: a small synthetic card-transaction dataset (seeded).

Columns: amount (EUR), hour (0-23), merchant_risk (0-1), distance_km, card_age_days,
n_txn_24h, and label `fraud` (1 = fraud, about 7% of rows). Run:
    python examples/make_fraud.py
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np


def main(n: int = 3000, seed: int = 7) -> None:
    rng = np.random.default_rng(seed)
    amount = np.round(rng.lognormal(3.6, 1.0, n), 2)
    hour = rng.integers(0, 24, n)
    merchant_risk = np.round(rng.beta(2, 6, n), 3)
    distance = np.round(rng.exponential(15, n), 1)
    card_age = rng.integers(1, 3000, n)
    n_txn = rng.poisson(2, n)
    night = ((hour < 6) | (hour > 22)).astype(float)
    logit = (
        -5.6
        + 0.45 * np.log1p(amount)
        + 3.0 * merchant_risk
        + 0.9 * night
        + 0.02 * distance
        - 0.0006 * card_age
        + 0.25 * n_txn
    )
    fraud = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    missing = rng.random(n) < 0.02
    out = Path(__file__).with_name("fraud.csv")
    with out.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(
            [
                "amount",
                "hour",
                "merchant_risk",
                "distance_km",
                "card_age_days",
                "n_txn_24h",
                "fraud",
            ]
        )
        for i in range(n):
            w.writerow(
                [
                    amount[i],
                    hour[i],
                    merchant_risk[i],
                    "" if missing[i] else distance[i],
                    card_age[i],
                    n_txn[i],
                    fraud[i],
                ]
            )
    print(f"wrote {out} ({n} rows, {fraud.mean():.1%} fraud)")


if __name__ == "__main__":
    main()

"""Generate examples/fraud.csv: a small synthetic card-transaction dataset (seeded).

Columns: ``amount`` (EUR, per row: what a missed fraud costs), ``hour`` (0-23),
``merchant_risk`` (0-1, the merchant's past fraud rate, scaled), ``distance_km`` (from
the card holder's home; empty = unknown, about 2% of rows), ``card_age_days``,
``n_txn_24h`` (the card's transactions in the last 24 hours), ``online`` (1 = card not
present), and the label ``fraud`` (1 = fraud, about 6% of rows).

How fraud is drawn (a logistic model with interactions, so that boosting has something
to find beyond one feature): risky merchants; online purchases at night (the product,
not each alone); far from home on a new card (the product); bursts of transactions;
and two kinds of fraudulent amount: card testing (tiny amounts in a burst) and cash-out
(large amounts online). Legitimate amounts are log-normal around 40 EUR. Deterministic:
the same seed writes the same file, byte for byte. Run::

    python examples/make_fraud.py
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

COLUMNS = (
    "amount",
    "hour",
    "merchant_risk",
    "distance_km",
    "card_age_days",
    "n_txn_24h",
    "online",
    "fraud",
)


def generate(n: int = 6000, seed: int = 2026) -> dict[str, np.ndarray]:
    """The columns of the dataset (``distance_km`` holds NaN where unknown)."""
    rng = np.random.default_rng(seed)
    online = (rng.random(n) < 0.35).astype(int)
    hour = np.where(
        rng.random(n) < 0.85,
        np.clip(np.round(rng.normal(14, 4, n)), 0, 23),  # daytime shopping
        rng.integers(0, 24, n),
    ).astype(int)
    night = ((hour < 6) | (hour >= 23)).astype(float)
    merchant_risk = rng.beta(1.5, 8, n)
    distance = rng.exponential(12, n) + 60 * online * rng.random(n)
    card_age = rng.integers(1, 3650, n)
    new_card = (card_age < 60).astype(float)
    n_txn = rng.poisson(1.5, n)
    amount = rng.lognormal(3.7, 0.9, n)

    logit = (
        -6.0
        + 9.0 * merchant_risk
        + 2.5 * online * night  # interaction: online at night
        + 3.0 * new_card * (distance > 40)  # interaction: new card far from home
        + 0.55 * np.minimum(n_txn, 8)
        + 0.5 * online
        + 0.4 * night
    )
    fraud = rng.random(n) < 1.0 / (1.0 + np.exp(-logit))
    # fraudulent amounts: card testing (tiny, in a burst) or cash-out (large, online)
    testing = fraud & (rng.random(n) < 0.2)
    cash_out = fraud & ~testing
    amount = np.where(testing, rng.uniform(0.5, 5.0, n), amount)
    amount = np.where(cash_out, rng.lognormal(4.4, 1.1, n), amount)
    n_txn = np.where(testing, n_txn + rng.integers(3, 9, n), n_txn)
    distance = np.where(rng.random(n) < 0.02, np.nan, distance)
    return {
        "amount": np.round(amount, 2),
        "hour": hour,
        "merchant_risk": np.round(merchant_risk, 3),
        "distance_km": np.round(distance, 1),
        "card_age_days": card_age,
        "n_txn_24h": n_txn,
        "online": online,
        "fraud": fraud.astype(int),
    }


def write(path: Path, columns: dict[str, np.ndarray]) -> None:
    n = len(columns["fraud"])
    with path.open("w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(COLUMNS)
        for i in range(n):
            row = [columns[c][i] for c in COLUMNS]
            w.writerow(["" if isinstance(v, float) and np.isnan(v) else v for v in row])


def main() -> None:
    out = Path(__file__).with_name("fraud.csv")
    columns = generate()
    write(out, columns)
    fraud = columns["fraud"]
    print(f"wrote {out} ({len(fraud)} rows, {fraud.mean():.1%} fraud)")


if __name__ == "__main__":
    main()

"""How far sampled metrics and their corrections land from the full-catalogue metric.

    python bench/sampled_error.py [--users 10000] [--negatives 100] [--seed 0]

Three synthetic "models" give every user's held-out item a full rank R among n items:
- head:  a quarter of the users get R in 1..5, the rest a uniformly random R (sharp but
         often lost);
- broad: log R ~ Normal(log 150, 1) (never at the very top, rarely far off);
- gauss: the held-out score ~ N(2, 1) against n - 1 N(0, 1) scores, R - 1 ~ Binomial(n - 1,
         1 - Φ(score)).
The sampled rank is what sampling m negatives without replacement gives:
r - 1 ~ Hypergeometric(n - 1, R - 1, m). For each catalogue size the table prints the true
metric (from R), the plain sampled metric and each correction's estimate with its absolute
error, and whether each estimator orders the three models as the truth does.
"""

import argparse

import numpy as np

import fastrank as fr
from fastrank.sampled import TAGS

METRICS = ("recall@10", "ndcg@10")
ESTIMATORS = (("sampled", "none", None), ("adjusted", "adjusted", None), ("mes", "mes", None),
              ("bv λ=0.01", "bv", 0.01), ("bv λ=0.1", "bv", 0.1))


def full_ranks(model, n_users, n_items, rng):
    if model == "head":
        top = rng.random(n_users) < 0.25
        return np.where(top, rng.integers(1, 6, n_users), rng.integers(1, n_items + 1, n_users))
    if model == "broad":
        return np.clip(np.rint(np.exp(rng.normal(np.log(150), 1.0, n_users))), 1, n_items
                       ).astype(np.int64)
    from scipy.stats import norm

    score = rng.normal(2.0, 1.0, n_users)
    return 1 + rng.binomial(n_items - 1, norm.sf(score))


def true_value(label, big_r):
    if label == "recall@10":
        return float(np.mean(big_r <= 10))
    return float(np.mean(np.where(big_r <= 10, 1 / np.log2(big_r + 1.0), 0.0)))


def run(n_users, n_items, m, seed):
    rng = np.random.default_rng(seed)
    models = ("head", "broad", "gauss")
    truth, estimates = {}, {}
    for model in models:
        big_r = full_ranks(model, n_users, n_items, rng)
        ranks = 1 + rng.hypergeometric(big_r - 1, n_items - big_r, m)
        for label in METRICS:
            truth[model, label] = true_value(label, big_r)
        for name, correction, lam in ESTIMATORS:
            res = fr.evaluate_sampled_ranks(ranks, n_items, list(METRICS), n_negatives=m,
                                            correction=correction, bv_lambda=lam or 0.01,
                                            sampling="hypergeometric")
            for label in METRICS:
                estimates[model, label, name] = res[f"{label}[{TAGS[correction]}]"]
    print(f"\nn = {n_items:,} items, m = {m} sampled negatives, {n_users:,} users per model "
          f"(corrections fitted with sampling='hypergeometric', uniform prior)\n")
    header = "| metric | model | true | " + " | ".join(
        f"{name} (err)" for name, _, _ in ESTIMATORS) + " |"
    print(header)
    print("|" + "---|" * (3 + len(ESTIMATORS)))
    for label in METRICS:
        for model in models:
            t = truth[model, label]
            values = [estimates[model, label, name] for name, _, _ in ESTIMATORS]
            cells = [f"{v:.4f} ({abs(v - t):.4f})" for v in values]
            print(f"| {label} | {model} | {t:.4f} | " + " | ".join(cells) + " |")
        order = sorted(models, key=lambda md: -truth[md, label])
        kept = []
        for name, _, _ in ESTIMATORS:
            est = sorted(models, key=lambda md: -estimates[md, label, name])
            kept.append(f"{'yes' if est == order else 'NO'} ({' > '.join(est)})")
        print(f"| {label} | order kept? | {' > '.join(order)} | " + " | ".join(kept) + " |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--negatives", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--items", type=int, nargs="*", default=[10_000, 100_000])
    args = parser.parse_args()
    for n_items in args.items:
        run(args.users, n_items, args.negatives, args.seed)


if __name__ == "__main__":
    main()

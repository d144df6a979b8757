"""fastrank.spark against Spark's own RankingMetrics, in one local SparkSession, on the same
parquet tables.

    python bench/spark_speed.py                      # 5,000,000 users, K = 10, local[2]
    python bench/spark_speed.py --users 1000000 --memory 6g

Both start from `spark.read.parquet` of the same tables (the power-law workload of
bench/datasets.py: grades 1..5, every user judged with at least one relevant item, lists
of K distinct items with distinct scores) and end with four means on the driver:
- fastrank: `fastrank.spark.evaluate(truth, recs, metrics, k=K, per_user=False)`;
- Spark: what `pyspark.mllib.evaluation.RankingMetrics` takes, one row per judged user
  (the recommended items by score descending, empty for a user without a list; the
  relevant items), built with groupBy / collect_list and a left join, cached, then one
  RankingMetrics call per metric. `RankingMetrics(rdd)` turns a Python RDD into this same
  DataFrame and hands it to the JVM (`newRankingMetrics`); here the DataFrame is built in
  Spark directly, so no row passes through Python on Spark's side.

Where the definitions agree (Spark's RankingMetrics.scala; every row Spark is given counts
in its means, as every judged user with a relevant item counts in fastrank's recsys
convention), fastrank computes them under RecBole's names (`dialect="recbole"`):
  precisionAt(k)             hits@k / k (an empty list: 0)      Precision@k = precision@k
  recallAt(k)                hits@k / m                         Recall@k    = recall@k
  meanAveragePrecisionAt(k)  Σ_{i≤k} P@i·rel(i) / min(k, m)     MAP@k       = map@k (recsys)
  ndcgAt(k)                  binary gains, log discount, ideal  NDCG@k      = ndcg@k (implicit)
                             over min(k, m) ranks
Not compared: Spark's meanAveragePrecision divides the whole list's sum by m (fastrank's
mar@K), and PySpark's RankingMetrics passes no grades to the JVM (its ndcgAt is binary
even when given (predicted, labels, relevances) triples).
Each side runs twice, alternating, and the better time is kept; the values must agree to
1e-12 before the ratio is printed.
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SPARK_METRICS = {  # RecBole's label (fastrank computes it): Spark's method
    "Precision@{k}": "precisionAt", "Recall@{k}": "recallAt",
    "MAP@{k}": "meanAveragePrecisionAt", "NDCG@{k}": "ndcgAt"}


def session(memory, partitions):
    from pyspark.sql import SparkSession

    return (SparkSession.builder.master("local[2]").appName("fastrank-spark-speed")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.memory", memory)
            .config("spark.sql.shuffle.partitions", str(partitions))
            .config("spark.pyspark.python", sys.executable)
            .getOrCreate())


def fastrank_run(spark, truth_dir, recs_dir, k):
    import fastrank.spark

    labels = [label.format(k=k) for label in SPARK_METRICS]
    start = time.perf_counter()
    res = fastrank.spark.evaluate(spark.read.parquet(str(truth_dir)),
                                  spark.read.parquet(str(recs_dir)), labels, k=k,
                                  dialect="recbole", per_user=False)
    return time.perf_counter() - start, res.to_dict(), res.n_users


def spark_run(spark, truth_dir, recs_dir, k):
    from pyspark.mllib.common import JavaModelWrapper, callMLlibFunc
    from pyspark.sql import functions as F

    start = time.perf_counter()
    truth, recs = spark.read.parquet(str(truth_dir)), spark.read.parquet(str(recs_dir))
    lists = recs.groupBy("user").agg(  # items by score descending
        F.sort_array(F.collect_list(F.struct("score", "item")), asc=False).alias("ranked"))
    relevant = truth.where(F.col("relevance") > 0).groupBy("user").agg(
        F.collect_list("item").alias("labels"))
    pairs = relevant.join(lists, "user", "left").select(
        F.coalesce(F.col("ranked.item"), F.array().cast("array<bigint>")).alias("predicted"),
        "labels").persist()
    metrics = JavaModelWrapper(callMLlibFunc("newRankingMetrics", pairs._jdf))
    values = {label.format(k=k): metrics.call(method, k)
              for label, method in SPARK_METRICS.items()}
    seconds = time.perf_counter() - start
    n_rows = pairs.count()
    pairs.unpersist()
    return seconds, values, n_rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=5_000_000)
    parser.add_argument("-k", type=int, default=10, help="list length K (default 10)")
    parser.add_argument("--memory", default="12g", help="Spark driver memory (default 12g)")
    parser.add_argument("--partitions", type=int, default=16,
                        help="spark.sql.shuffle.partitions (default 16)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", FutureWarning)  # pyspark on pandas 3

    from bench.datasets import parquet_files

    truth_dir, recs_dir = parquet_files(args.users, args.k)
    spark = session(args.memory, args.partitions)
    spark.sparkContext.setLogLevel("ERROR")  # RankingMetrics warns per empty truth set
    small = parquet_files(1000, args.k)
    fastrank_run(spark, *small, args.k)  # the Python workers load the kernels
    spark_run(spark, *small, args.k)
    ours, theirs = [], []
    for _ in range(2):
        ours.append(fastrank_run(spark, truth_dir, recs_dir, args.k))
        theirs.append(spark_run(spark, truth_dir, recs_dir, args.k))
    spark.stop()
    best_ours = min(ours, key=lambda r: r[0])
    best_theirs = min(theirs, key=lambda r: r[0])
    assert best_ours[2] == best_theirs[2], (best_ours[2], best_theirs[2])  # users counted
    print(f"{args.users:,} users, K = {args.k}, local[2], {args.partitions} shuffle "
          f"partitions, {best_ours[2]:,} users counted")
    print(f"{'metric':14} {'fastrank':>18} {'Spark RankingMetrics':>22}")
    for label, method in SPARK_METRICS.items():
        label = label.format(k=args.k)
        a, b = best_ours[1][label], best_theirs[1][label]
        assert abs(a - b) <= 1e-12 * abs(b), (label, a, b)
        print(f"{label:14} {a:18.15f} {b:22.15f}  ({method}({args.k}))")
    print(f"fastrank.spark.evaluate:            {best_ours[0]:7.2f} s  "
          f"(runs: {', '.join(f'{r[0]:.2f}' for r in ours)})")
    print(f"RankingMetrics (build, cache, 4x):  {best_theirs[0]:7.2f} s  "
          f"(runs: {', '.join(f'{r[0]:.2f}' for r in theirs)})")
    print(f"ratio: RankingMetrics takes {best_theirs[0] / best_ours[0]:.2f}x fastrank's time")


if __name__ == "__main__":
    main()

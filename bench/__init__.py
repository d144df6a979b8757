"""asv benchmarks (bench_*.py) and side-by-side peer scripts (vs_*.py)."""

"""treckit's benchmarks, each run from the repository's root as ``python -m bench.NAME`` (bench/README.md); they
measure the installed treckit and share their helpers (``run_bench``'s measuring, ``generate``'s data)."""

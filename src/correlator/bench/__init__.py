"""Benchmarks that print our rates next to baselines measured in the same run."""

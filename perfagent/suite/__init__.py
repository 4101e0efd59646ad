"""Suites: many targets at once, spread over every local GPU (or a Ray cluster), with resumable
results, KernelBench's fast_p and a summary (``perfagent suite``)."""

"""Benchmarks (`make bench`) and load tests (`make loadtest`): they print figures, never assert."""

"""Benchmark: the service against a bare Tornado + Motor app doing the same database work (`python -m bench.run`)."""

"""Smoke tests of the benchmark scripts in bench/."""

"""Tests of the pure match core, driven with explicit times."""

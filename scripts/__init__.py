"""Maintenance scripts; run them from the repository root as `python -m scripts.<name>`."""

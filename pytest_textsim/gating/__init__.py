"""Gating a run: dataset gates over recorded scores, baselines and their tolerances.
Nothing here imports pytest, the plugin or the command line."""

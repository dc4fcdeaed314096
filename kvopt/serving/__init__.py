"""The serving side of kvopt (SPEC §10, §10.1): rounds in seconds, requests, setups, experiments.

Its modules sit in different layers of :data:`kvopt.layers.LAYERS`, so this package
imports none of them (import the module you need):

* :mod:`kvopt.serving.timemodel` — round durations ``d_t`` (layer 0, the engine's clock uses it);
* :mod:`kvopt.serving.setups` — serving setups: a model on GPUs → the KV budget, the cap, a time model;
* :mod:`kvopt.serving.trace` — request traces (Azure 2023 and any CSV of the same shape);
* :mod:`kvopt.serving.workload` — timed instances: lengths, arrivals, predictions;
* :mod:`kvopt.serving.lengths` — length distributions and named length profiles (data in
  ``profiles/``);
* :mod:`kvopt.serving.seconds` — latencies, per-run metrics and bounds in seconds;
* :mod:`kvopt.serving.experiment` — declarative, resumable experiment grids and their reports.
"""

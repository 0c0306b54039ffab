"""The rules' logic: every input function, parameter and target of the Snakemake workflow (``rules/*.smk``),
as plain functions of the validated config (``docnmt.config.validate``) and the job's wildcards, so that tests
reach them without Snakemake. It comes after the stages: it reads the strategy registry (decode) and the
training presets (train), and gives every path with ``docnmt.layout``. ``rules/common.smk`` imports it as
``wf``; a rule file calls its own module (``rules/decode.smk``: ``wf.decode``).

Modules:
  tasks      -- a task's settings: languages, levels, window size, separator, backend, corpus settings,
                evaluation sets; where its models, data and codes are (the workflow's or the config's)
  systems    -- what each task decodes: strategies per evaluation set, those skipped, MBR systems, doc-trans's mode
  corpora    -- rules/corpora.smk: downloads, each corpus type's recipe, the demo's and ContraPro's files
  preprocess -- rules/preprocess.smk: shards, a level's training text, binarization's arguments
  train      -- rules/train.smk: the model preset as fairseq-train arguments, the time limit
  decode     -- rules/decode.smk: a task's model as inputs and options, a strategy's decode inputs and options
  score      -- rules/score.smk: each scorer's inputs and options
  environments -- where the rules run whose code has an environment of its own (a backend's: vLLM's; a metric's:
                unbabel-comet's), and on how many GPUs a task's model rules run
  model_rules -- what every rule that loads a task's model shares: its params, conda env, GPUs, PATH prefix
  metrics    -- the metric seam's rules (inputs, options, outputs, environment), the metrics' checks, and the
                decodes that select by a learned metric (COMET's checkpoints, the rule comet_env)
  tables     -- rules/score.smk: the tables' manifest, which tables and plots, where they go
  targets    -- the Snakefile's rules all and data

Beside them, two CLIs no rule runs: ``registry_tables`` writes the docs' and the Slurm profile's lists of the
registries' backends, metrics and strategy rules; ``source_check`` (``docnmt-check-sources``) asks every location of
the configured tasks' download sources for its headers before a long run.
"""

from . import (corpora, decode, environments, metrics, model_rules, preprocess, score, systems, tables, targets, tasks,
               train)

__all__ = ["corpora", "decode", "environments", "metrics", "model_rules", "preprocess", "score", "systems", "tables",
           "targets", "tasks", "train"]

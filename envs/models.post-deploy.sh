#!/usr/bin/env bash
# Run by Snakemake (--sdm conda) inside the freshly created models env (envs/models.yaml): fairseq-fixed must be compiled
# against the env's torch and numpy (its dependencies are the env's pins: --no-deps); then the package docnmt, editable from the checkout whose Snakefile
# created the env (rules/common.smk exports DOCNMT_CHECKOUT).
set -euo pipefail
python -m pip install --no-build-isolation --no-deps fairseq-fixed==0.12.3.1
python -m pip install --no-deps --no-build-isolation -e "${DOCNMT_CHECKOUT:?is set by the Snakefile of the workflow}"

#!/usr/bin/env bash
# Run by Snakemake (--sdm conda) inside the freshly created fairseq env:
# fairseq-fixed must be compiled against the env's torch and numpy.
set -euo pipefail
python -m pip install --no-build-isolation fairseq-fixed==0.12.3.1

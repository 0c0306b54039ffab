# docnmt-search: search strategies for document-level NMT (Herold & Ney, 2023).
# This file is the table of contents; the rules are in rules/, their logic in
# the package scripts/docnmt, and every path is derived in rules/common.smk.
import os

from snakemake.utils import min_version

min_version("9.0")


configfile: os.path.join(workflow.basedir, "config.yaml")


include: "rules/common.smk"
include: "rules/corpora.smk"
include: "rules/preprocess.smk"
include: "rules/train.smk"
include: "rules/decode.smk"
include: "rules/score.smk"


# Downloads run where Snakemake runs (a cluster's login node), not in cluster
# jobs: compute nodes often have no internet.
localrules:
    download,


rule all:
    default_target: True
    input:
        all_targets(),


rule data:
    """Downloads, corpora, preprocessing and binarization only: `snakemake data`."""
    input:
        data_targets(),

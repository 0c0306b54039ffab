# docnmt-search: search strategies for document-level NMT (Herold & Ney, 2023).
# This file is the table of contents; the rules are in rules/ (the config and
# the glue in rules/common.smk), their logic in the package scripts/docnmt
# (docnmt.workflow), and every path comes from docnmt.layout.
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
        wf.targets.all_targets(config),


rule data:
    """Downloads, corpora, preprocessing and binarization only: `snakemake data`."""
    input:
        wf.targets.data_targets(config),

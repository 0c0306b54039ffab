"""Where each CLI sits in the workflow: its stage, its page of the manual (``docs/``) and the rules that call it.

Every CLI builds its parser with :func:`argument_parser`, so its ``--help`` ends with :func:`epilog`, so a user who meets a command
in a log finds the stage, the rule and the manual page. ``tests/test_docs.py``
checks this map against the rules' shell commands in ``rules/*.smk``, both ways.
"""

from __future__ import annotations

import argparse

#: Stage name -> (manual page, rule file).
STAGES = {
    "configuration": ("docs/configuration.md", "Snakefile"),
    "data": ("docs/data.md", "rules/corpora.smk"),
    "preprocessing": ("docs/preprocessing.md", "rules/preprocess.smk"),
    "training": ("docs/training.md", "rules/train.smk"),
    "decoding": ("docs/decoding.md", "rules/decode.smk"),
    "own models": ("docs/own-models.md", "rules/decode.smk"),
    "scoring": ("docs/scoring.md", "rules/score.smk"),
}

#: CLI module -> (stage, the rules that call it; none: a tool run by hand).
CLIS = {
    "docnmt.config": ("configuration", []),
    "docnmt.corpora.demo": ("data", ["demo_corpus"]),
    "docnmt.corpora.corpus": ("data", ["prepared_corpus", "check_corpus"]),
    "docnmt.corpora.download": ("data", ["download", "extract"]),
    "docnmt.corpora.parsers": ("data", ["corpus_news", "corpus_ted", "corpus_os"]),
    "docnmt.corpora.contrapro": ("data", ["contrapro_set"]),
    "docnmt.corpora.stats": ("data", ["data_statistics"]),
    "docnmt.preprocess.shards": ("preprocessing", ["shard", "gather_shards"]),
    "docnmt.preprocess.tokenize": ("preprocessing", ["tokenize"]),
    "docnmt.preprocess.bpe": ("preprocessing", ["learn_bpe", "apply_bpe"]),
    "docnmt.preprocess.windows": ("preprocessing", ["windows"]),
    "docnmt.preprocess.dictionary": ("preprocessing", ["joined_dictionary"]),
    "docnmt.preprocess.binarize": ("preprocessing", ["binarize"]),
    "docnmt.preprocess.encode": ("own models", ["encode_external"]),
    "docnmt.train.cli": ("training", ["train"]),
    "docnmt.train.fairseq_train": ("training", []),
    "docnmt.train.curves": ("training", ["learning_curves"]),
    "docnmt.decode.cli": ("decoding", ["decode_sentence_level", "decode_no_context", "decode_full_segment",
                                       "decode_last_sentence", "decode_first_sentence", "decode_2_pass",
                                       "decode_doc_trans", "decode_doc_trans_beam", "decode_cheating"]),
    "docnmt.decode.checks": ("own models", ["check_model"]),
    "docnmt.decode.translate": ("own models", []),
    "docnmt.score.scoring": ("scoring", ["bleu_ter"]),
    "docnmt.score.pronouns": ("scoring", ["pronoun_f1"]),
    "docnmt.score.perplexity": ("scoring", ["perplexity"]),
    "docnmt.score.contrastive": ("scoring", ["contrapro_accuracy"]),
    "docnmt.score.cxmi": ("scoring", ["cxmi"]),
    "docnmt.score.context_usage": ("scoring", ["context_usage"]),
    "docnmt.score.tables": ("scoring", ["tables"]),
    "docnmt.score.plots": ("scoring", ["plot_bleu", "plot_pronouns", "plot_cost", "plot_cxmi"]),
}

#: What runs a CLI that no rule calls.
BY_HAND = {
    "docnmt.config": "the Snakefile validates the config itself at start; this checks a file alone",
    "docnmt.train.fairseq_train": "run by docnmt.train.cli (rule train): fairseq-train with atomic checkpoint copies",
    "docnmt.decode.translate": "no rule: translates raw documents with any strategy, outside the workflow",
}


def epilog(module: str) -> str:
    """The last paragraph of ``python -m MODULE --help``: stage, rules, manual page."""
    stage, rules = CLIS[module]
    page, rule_file = STAGES[stage]
    called = (f"workflow rule{'s' if len(rules) > 1 else ''} {', '.join(rules)} ({rule_file})" if rules
              else BY_HAND[module])
    return f"Stage: {stage}; {called}. Manual: {page}."


def argument_parser(module: str, description: str) -> argparse.ArgumentParser:
    """The parser of ``python -m MODULE``: its program name, its description, and :func:`epilog`."""
    return argparse.ArgumentParser(prog=f"python -m {module}", description=description, epilog=epilog(module))

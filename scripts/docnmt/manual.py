"""Where each CLI sits in the workflow: its stage, its page of the manual (``docs/``), the rules that call it, and
the command a person types for it.

Every CLI builds its parser with :func:`argument_parser`, so its ``--help`` ends with :func:`epilog`, so a user who meets a command
in a log finds the stage, the rule and the manual page. ``tests/test_docs.py``
checks this map against the rules' shell commands in ``rules/*.smk``, both ways.

:data:`COMMANDS` are the package's console scripts (``pyproject.toml``'s
``[project.scripts]``, kept equal by ``tests/test_install.py``): what a person
types by hand, named in the fairseq way (``fairseq-train``, ``fairseq-generate``).
``python -m MODULE`` runs the same CLI; its ``--help`` shows the name it was
started by.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap

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

#: CLI module -> (stage, the rules that call it; none: a tool run by hand); :func:`clis` adds the backends' tools,
#: every metric module (its rule is named as the metric) and the decode CLI's rules (one per strategy), so a new
#: metric, backend or strategy needs no line here.
CLIS = {
    "docnmt.config": ("configuration", []),
    "docnmt.workflow.registry_tables": ("configuration", []),
    "docnmt.corpora.demo": ("data", ["demo_corpus"]),
    "docnmt.corpora.corpus": ("data", ["prepared_corpus", "check_corpus"]),
    "docnmt.corpora.testsets": ("data", ["testset_corpus"]),
    "docnmt.corpora.check": ("data", []),
    "docnmt.workflow.source_check": ("data", []),
    "docnmt.corpora.download": ("data", ["download", "extract", "ctxpro_download"]),
    "docnmt.corpora.parsers": ("data", ["corpus_news", "corpus_ted", "corpus_os"]),
    "docnmt.corpora.contrapro": ("data", ["contrapro_set"]),
    "docnmt.corpora.ctxpro": ("data", ["ctxpro_set_news", "ctxpro_set_ted", "ctxpro_set_os", "ctxpro_set_demo",
                                       "ctxpro_set_demo_llm"]),
    "docnmt.corpora.stats": ("data", ["data_statistics"]),
    "docnmt.preprocess.shards": ("preprocessing", ["shard", "gather_shards"]),
    "docnmt.preprocess.tokenize": ("preprocessing", ["tokenize"]),
    "docnmt.preprocess.bpe": ("preprocessing", ["learn_bpe", "apply_bpe"]),
    "docnmt.preprocess.windows": ("preprocessing", ["windows"]),
    "docnmt.preprocess.dictionary": ("preprocessing", ["joined_dictionary"]),
    "docnmt.preprocess.binarize": ("preprocessing", ["binarize"]),
    "docnmt.preprocess.fairseq_preprocess": ("preprocessing", []),
    "docnmt.preprocess.encode": ("own models", ["encode_external"]),
    "docnmt.train.cli": ("training", ["train"]),
    "docnmt.train.fairseq_train": ("training", []),
    "docnmt.train.curves": ("training", ["learning_curves"]),
    "docnmt.decode.cli": ("decoding", []),
    "docnmt.decode.checks": ("own models", ["check_model"]),
    "docnmt.decode.translate": ("own models", []),
    "docnmt.decode.document_mbr": ("decoding", ["select_document_mbr"]),
    "docnmt.score.context_usage": ("scoring", ["context_usage"]),
    "docnmt.score.comet": ("scoring", ["comet", "comet_env"]),
    "docnmt.score.compare.cli": ("scoring", ["compare_page"]),
    "docnmt.score.compare.screenshot": ("scoring", []),
    "docnmt.score.tiny_comet": ("scoring", []),
    "docnmt.score.tiny_metricx": ("scoring", []),
    "docnmt.score.tables": ("scoring", ["tables", "task_tables"]),
    "docnmt.score.findings": ("scoring", []),
    "docnmt.score.plots": ("scoring", ["plot_bleu", "plot_pronouns", "plot_cost", "plot_cxmi", "plot_mbr",
                                       "plot_cad", "plot_ctxpro", "task_plot_bleu", "task_plot_pronouns",
                                       "task_plot_cost", "task_plot_cxmi", "task_plot_mbr", "task_plot_cad",
                                       "task_plot_ctxpro"]),
}

#: Console script -> CLI module: translating documents, checking a model, a config and a corpus folder, decoding
#: BPE text with one strategy, and the scorers that make sense outside the workflow. The ContraPro scorer, the
#: tables and the plots read the workflow's own intermediate files, and stay ``python -m`` modules.
COMMANDS = {
    "docnmt-translate": "docnmt.decode.translate",
    "docnmt-check-model": "docnmt.decode.checks",
    "docnmt-check-config": "docnmt.config",
    "docnmt-check-corpus": "docnmt.corpora.check",
    "docnmt-check-sources": "docnmt.workflow.source_check",
    "docnmt-decode": "docnmt.decode.cli",
    "docnmt-bleu-ter": "docnmt.score.sacrebleu_metrics",
    "docnmt-pronoun-f1": "docnmt.score.pronouns",
    "docnmt-perplexity": "docnmt.score.perplexity",
    "docnmt-cxmi": "docnmt.score.cxmi",
    "docnmt-ctxpro": "docnmt.score.ctxpro",
    "docnmt-metricx": "docnmt.score.metricx",
    "docnmt-compare": "docnmt.score.compare.cli",
}

#: What runs a CLI that no rule calls.
BY_HAND = {
    "docnmt.config": "the Snakefile validates the config itself at start; this checks a file by hand",
    "docnmt.workflow.registry_tables": "no rule: writes the docs' and the Slurm profile's lists of the registries",
    "docnmt.preprocess.fairseq_preprocess": "run by docnmt.preprocess.binarize (rule binarize): fairseq-preprocess",
    "docnmt.train.fairseq_train": "run by docnmt.train.cli (rule train): fairseq-train with atomic checkpoint copies",
    "docnmt.decode.translate": "no rule: translates raw documents with any strategy, outside the workflow",
    "docnmt.score.tiny_comet": "no rule: makes a tiny COMET checkpoint (the tests, make demo-comet) in .venv-comet",
    "docnmt.score.tiny_metricx": "no rule: makes a tiny MetricX-24 checkpoint (the tests, make demo-metrics)",
    "docnmt.corpora.check": "no rule: checks a corpus folder by hand (the workflow checks each split in check_corpus)",
    "docnmt.workflow.source_check": "no rule: asks every location of the configured tasks' sources for its headers "
                                    "before a long run",
    "docnmt.score.findings": "no rule: make demo checks the paper's two findings on the demo's scores with it",
    "docnmt.score.compare.screenshot": "no rule: make screenshot writes the README's picture of the demo's page",
}


def clis() -> dict[str, tuple[str, list[str]]]:
    """Every CLI module with its stage and rules: the metric modules (stage "scoring", the rule named as the metric:
    :class:`docnmt.score.metric.Metric`), :data:`CLIS` (which may name more rules of one, as COMET's ``comet_env``),
    the decode CLI's rules (a strategy's :attr:`~docnmt.decode.strategy_registry.StrategyInfo.rule`), and the tools
    the registered backends declare (:attr:`docnmt.decode.backend.Backend.tools`: stage "own models", no rule)."""
    from .seams import lookup

    metrics = {m.module: ("scoring", [m.name]) for m in lookup("metrics")().values()}
    decode = {"docnmt.decode.cli": ("decoding", lookup("decode_rules")())}
    return {**metrics, **CLIS, **decode, **{module: ("own models", []) for b in lookup("backends").values()
                                            for module, _ in b.tools}}


def by_hand() -> dict[str, str]:
    """What runs each CLI that no rule calls: :data:`BY_HAND`, and the backends' tools (what each is for)."""
    from .seams import lookup

    return {**BY_HAND, **{module: what for b in lookup("backends").values()
                                                           for module, what in b.tools}}


def command(module: str) -> str | None:
    """The console script of ``module``, or None where it has none."""
    return next((name for name, target in COMMANDS.items() if target == module), None)


def program(module: str, argv0: str | None = None) -> str:
    """The name a CLI was started by: its console script (``docnmt-translate``) or ``python -m MODULE``."""
    name = command(module)
    started = os.path.basename(sys.argv[0] if argv0 is None else argv0)
    return name if name is not None and started == name else f"python -m {module}"


def epilog(module: str) -> str:
    """The last paragraph of ``python -m MODULE --help``: stage, rules, manual page."""
    stage, rules = clis()[module]
    page, rule_file = STAGES[stage]
    called = (f"workflow rule{'s' if len(rules) > 1 else ''} {', '.join(rules)} ({rule_file})" if rules
              else by_hand()[module])
    name = command(module)
    also = f" Command: {name} (or python -m {module})." if name else ""
    return f"Stage: {stage}; {called}. Manual: {page}.{also}"


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's, except that a line never breaks inside a hyphenated name (``docnmt-check-model``)."""

    def _fill_text(self, text, width, indent):
        text = self._whitespace_matcher.sub(" ", text).strip()
        return textwrap.fill(text, width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False)


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser, which also tells the option ledger (:mod:`docnmt.ledger`, where it is on) which options a
    command line gave a value other than their default. ``module``: the CLI's."""

    def __init__(self, *args, module: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.module = module
        #: each option's default as declared, before a later ``set_defaults`` (translate's --task) changed it
        self.declared_defaults: dict = {}

    def format_help(self) -> str:
        """argparse's help, its last paragraph (:func:`epilog`: stage, rules, manual page) made when asked for, so
        that a CLI's start reads no registry."""
        if self.epilog is None and self.module is not None:
            self.epilog = epilog(self.module)
        return super().format_help()

    def set_defaults(self, **kwargs):
        for action in self._actions:
            if action.dest in kwargs:
                self.declared_defaults.setdefault(action.dest, action.default)
        super().set_defaults(**kwargs)

    def parse_known_args(self, args=None, namespace=None):
        from . import ledger

        parsed = super().parse_known_args(args, namespace)
        if ledger.active() and self.module:
            # parsed again over a namespace that already holds every option: argparse then sets no defaults, so
            # what it sets is what the command line gave (an appending option starts from None, which it extends)
            unset = object()
            appending = (argparse._AppendAction, argparse._AppendConstAction, argparse._CountAction,
                         argparse._ExtendAction)
            probe = argparse.Namespace(**{a.dest: None if isinstance(a, appending) else unset for a in self._actions
                                          if a.dest != argparse.SUPPRESS})
            super().parse_known_args(args, probe)
            ledger.record_options(self.module, self, {dest: value for dest, value in vars(probe).items()
                                                      if value is not unset and value is not None})
        return parsed


def argument_parser(module: str, description: str | None, **options) -> ArgumentParser:
    """The parser of MODULE's CLI: its program name (:func:`program`), its description, and :func:`epilog`
    (``options``: argparse's, e.g. ``add_help=False``)."""
    return ArgumentParser(prog=program(module), description=description, formatter_class=_HelpFormatter,
                          module=module, **options)

"""docnmt: the logic behind the docnmt-search workflow.

Reproduces "On Search Strategies for Document-Level Neural Machine
Translation" (Herold & Ney, 2023). Every Snakemake rule calls the CLI of one
module of this package; the modules are unit-tested without Snakemake.

One subpackage per rule file (rules/STAGE.smk), in workflow order; data flows
one way through them, and a subpackage imports only earlier ones and the
top-level helpers (tests/test_structure.py checks it):
  corpora     -- download and parse the corpora, the demo task, ContraPro, the common document format
  preprocess  -- tokenization, BPE, shards, k-sentence windows, the dictionary, binarization
  train       -- fairseq training of the sentence- and document-level models, learning curves
  decode      -- the model, beam search after a forced prefix, the search strategies, the decoding CLI
  score       -- BLEU/TER, perplexity, pronoun F1, ContraPro accuracy, the tables and plots

After them, the rules' logic (tested without Snakemake; it reads the stages' registries):
  workflow    -- every input function, parameter and target of the rules, from the validated config

The top level holds what more than one stage uses, and nothing of one stage alone:
  config        -- config loading and validation against schemas/config.schema.yaml (decode, workflow, the Snakefile)
  seams         -- the stages' registries the top-level helpers read (backends, load options, metrics), as lazy
                   module:object entries: the one way a top-level module reaches a stage
  textio        -- atomic output files and the one error type for bad input (every stage)
  option_ranges -- numeric CLI options with their range, one declaration shared by every CLI that takes it (every stage)
  manual        -- each CLI's stage, rules and manual page (docs/), the last lines of its --help (every stage's CLIs)
  startup       -- a model-loading CLI's start: fairseq imported without its unused parts, the heap frozen
                   (preprocess, train, decode, score)
  tablefmt      -- a result table as Markdown, CSV and LaTeX (corpora's statistics, score's tables)
  layout        -- where the workflow keeps every file: the one definition of every path of a rule (corpora, decode,
                   score, the rules)
  installation  -- the interpreter the rules run on: its shell prefix, missing packages, the setup hint (the
                   Snakefile, and this package's hook for a CLI that lacks a package)
  ledger        -- the option ledger of the test suite (config, manual, textio)
"""

import sys

__version__ = "0.1.0"

#: The separator token between the sentences of a document-level segment.
SEP = "<sep>"


def _install_moved_finder() -> None:
    """The old names of the modules that moved keep importing for one release (:data:`docnmt.seams.MOVED`)."""
    from .seams import MovedFinder

    if not any(isinstance(finder, MovedFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedFinder())


_install_moved_finder()


def _missing_package_hook(previous):
    """An excepthook: a missing third-party package becomes one line on stderr, not a traceback."""

    def hook(exc_type, exc, tb):
        if issubclass(exc_type, ModuleNotFoundError) and exc.name and exc.name.split(".")[0] != __name__:
            from .installation import setup_hint

            print(f"error: {setup_hint([exc.name.split('.')[0]])}", file=sys.stderr)
            return
        previous(exc_type, exc, tb)

    return hook


def _started_as_cli(argv0: str) -> bool:
    """`python -m docnmt.STAGE.MODULE` (every rule: Python imports this package while sys.argv[0] is still "-m"),
    or one of the package's console scripts (docnmt-translate, ...)."""
    import os

    from .manual import COMMANDS

    return argv0 == "-m" or os.path.basename(argv0) in COMMANDS


# Only for a CLI is the hook installed, so importing the package elsewhere
# (Snakemake, pytest) changes nothing. The exit status stays 1.
if sys.argv[:1] and _started_as_cli(sys.argv[0]):
    sys.excepthook = _missing_package_hook(sys.excepthook)

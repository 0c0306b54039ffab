"""docnmt: the logic behind the docnmt-search workflow.

Reproduces "On Search Strategies for Document-Level Neural Machine
Translation" (Herold & Ney, 2023). Every Snakemake rule calls the CLI of one
module of this package; the modules are unit-tested without Snakemake.

Modules (data flows one way through them):
  config     -- config loading and validation against schemas/config.schema.yaml
  textio     -- atomic output files and the one error type for bad input
  corpus     -- the common on-disk document format and its validation
  download   -- verified, retried, atomic downloads (mirror-aware) and safe extraction
  parsers    -- real corpus formats (NC TSV, WMT SGML, IWSLT XML/tags, OPUS Moses) -> common format
  contrapro  -- ContraPro examples with left and right context, as a small document corpus
  demo       -- the synthetic, context-dependent En->De demo task
  stats      -- the data-statistics table (the paper's Table 5)
  tokenize   -- Moses punctuation normalization, tokenization, detokenization
  bpe        -- joint BPE (subword-nmt) that leaves <sep> untouched
  shards     -- splitting a file into shards and gathering them back
  windows    -- k-sentence windows joined by <sep>, within documents
  dictionary -- the joined fairseq dictionary shared by both models
  environment -- the interpreter the rules run on: its shell prefix, missing packages, the setup hint
"""

import sys

__version__ = "0.1.0"

#: The separator token between the sentences of a document-level segment.
SEP = "<sep>"

def _missing_package_hook(previous):
    """An excepthook: a missing third-party package becomes one line on stderr, not a traceback."""

    def hook(exc_type, exc, tb):
        if issubclass(exc_type, ModuleNotFoundError) and exc.name and exc.name.split(".")[0] != __name__:
            from .environment import setup_hint

            print(f"error: {setup_hint([exc.name.split('.')[0]])}", file=sys.stderr)
            return
        previous(exc_type, exc, tb)

    return hook


# `python -m docnmt.MODULE` (every rule): Python imports this package while
# sys.argv[0] is still "-m". Only then is the hook installed, so importing the
# package elsewhere (Snakemake, pytest) changes nothing. The exit status stays 1.
if sys.argv[:1] == ["-m"]:
    sys.excepthook = _missing_package_hook(sys.excepthook)

"""Stage 3, ``rules/train.smk``: the sentence- and the document-level transformer.

Modules:
  cli           -- the training CLI: data and resume checks, the fairseq-train command, the GPU rules
  fairseq_train -- fairseq-train with atomic checkpoint copies (what the CLI runs)
  curves        -- learning curves: fairseq's training log as a CSV, and the CSV as a plot
  demo_digest   -- the digest of what the demo's models are made from (bench/decode records it with its table)

CLIs (``python -m docnmt.train.X``): ``cli``, ``curves plot``; ``fairseq_train`` is run by ``cli``.
"""

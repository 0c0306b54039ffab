"""Stage 2, ``rules/preprocess.smk``: from the common format to fairseq's binary data.

Moses tokenization and joint BPE (scattered over shards), k-sentence windows
joined by ``<sep>``, one joined dictionary, fairseq binarization of the
sentence- and the document-level data.

Modules:
  tokenize    -- Moses punctuation normalization, tokenization, detokenization
  bpe         -- joint BPE (subword-nmt) that leaves <sep> untouched
  shards      -- splitting a file into shards and gathering them back
  windows     -- k-sentence windows joined by <sep>, within documents
  dictionary  -- the joined fairseq dictionary shared by both models
  binarize    -- fairseq-preprocess with that dictionary, atomically
  fairseq_preprocess -- fairseq-preprocess, fairseq imported by docnmt.startup.import_fairseq (what binarize runs)
  encode      -- raw text to a model's units in one step (its tokenizer and BPE codes, or none): the
                 evaluation text of models trained elsewhere, and docnmt.decode.translate

CLIs (``python -m docnmt.preprocess.X``): ``shards split|gather``,
``tokenize tok|detok``, ``bpe learn|apply``, ``windows``, ``dictionary``, ``binarize``, ``encode``; ``fairseq_preprocess`` is run by ``binarize``.
"""

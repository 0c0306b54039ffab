"""Stage 1, ``rules/corpora.smk``: every task's documents in the common format.

Each corpus, whatever its origin, ends as three line-aligned files per split
(``{split}.{src}``, ``{split}.{tgt}``, ``{split}.docids``; see :mod:`.corpus`).

Modules:
  corpus      -- the common document format, its validation and statistics
  download    -- a source's file from the first of its locations serving it: verified, retried, atomic
  sources     -- a download source as the config declares it: its locations in order, checksums, members, local
  gdrive      -- Google Drive locations (gdrive:ID), fetched through gdown
  archives    -- safe extraction, through archives inside archives and from folders of an archive's layout
  probe       -- whether each location of a source serves its file now, from its headers alone
  parsers     -- the CLI that turns a real corpus into the common format, by corpus type
  rawtext     -- what the format readers share: lines, entities, repeated document ids
  news        -- NEWS training data: News Commentary v14 TSV
  mteval      -- the SGML/XML of WMT and IWSLT (valid and test sets)
  testsets    -- WMT XML (2021 onward), WMT24++ and WMT25 JSONL test sets: read as documents, written with translations
  segments    -- what the test sets' readers share: a segment on one line, a document's checks, JSON rows, paragraphs
  wmt25       -- WMT25's JSONL: a document a line, a line per paragraph, and WMT25's submission
  iwslt_tags  -- TED training data: IWSLT17 train.tags
  opus        -- OS: OPUS OpenSubtitles v2018 in Moses format, and the OS split
  contrapro   -- ContraPro examples with left and right context, as a small document corpus
  ctxpro      -- ctxpro's evaluation sets (its registry, their files checked) as documents: context, then sentence
  demo        -- the synthetic, context-dependent En->De demo task (generator, ContraPro, CLI)
  demo_vocabulary, demo_templates -- the demo's words and sentence templates
  demo_ctxpro -- the demo's test documents as a ctxpro set (its gender and formality, ctxpro's German rules)
  demo_drafts -- drafts of the demo's references with a translation without context's errors (the demo LLM's
                 refinement examples)
  stats       -- the data-statistics table (the paper's Table 5)

CLIs (``python -m docnmt.corpora.X``): ``demo``, ``download fetch|extract``,
``parsers news|ted|os``, ``contrapro``, ``ctxpro``, ``corpus check|copy``, ``testsets convert``, ``stats``.
"""

"""Stage 5, ``rules/score.smk``: the metrics, the paper's tables and the plots.

Modules (each metric declares itself to the metric seam, :mod:`docnmt.score.metric`, at its bottom, and is found by
reading the package: a new metric module needs no line here, in the CLI map or in the development page):
  metric      -- the metric seam: each metric's declaration (Metric: its rule, score file, config block, Table 3
                 columns) and the registry that collects them
  evalset     -- the files a score is computed on: hypotheses, references, sources, selected lines, subsets
  sacrebleu_metrics -- BLEU, chrF++, TER and d-BLEU with SacreBLEU, with their signatures (console script
                 docnmt-bleu-ter)
  significance -- the paired bootstrap every metric's score file shares: over sentences (sacrebleu's) and over
                 mean segment scores (COMET, MetricX, GEMBA)
  perplexity  -- perplexity of hypotheses and references, by forced scoring
  pronouns    -- pronoun gender and formality F1 (the paper's German BlonDe fork), with the tagger it used
  contrastive -- ContraPro contrastive accuracy by forced scoring
  ctxpro      -- ctxpro accuracy, scored exactly as `ctxpro score` scores it, with its signature
  metricx     -- MetricX-24 on the stock mT5 class, as metricx24.predict scores (console script docnmt-metricx)
  gemba       -- an LLM as the judge: GEMBA-ESA and GEMBA-MQM on an OpenAI-compatible endpoint, answers cached
  cxmi        -- context usage: CXMI and per-sentence P-CXMI of the document-level model, per strategy too
  sentence_file -- the per-sentence P-CXMI file: writing it and reading it back (no torch)
  context_usage -- the highest-P-CXMI sentences, and BLEU/pronoun F1 on them against the rest
  comet       -- learned metrics from local checkpoints (COMET, Doc-COMET, CometKiwi QE), in unbabel-comet's
                 environment: scores with paired bootstrap, and a scorer for the decodes' selection
  tiny_comet  -- a tiny COMET, CometKiwi or XCOMET checkpoint made here (XLM-R architecture, local tokenizer)
  tiny_metricx -- a tiny MetricX-24 checkpoint made here (mT5 reaching id 250089, local tokenizer)
  tables      -- the paper's tables (Markdown, CSV, LaTeX) from the scores
  cost_table  -- Table 1, the strategies' cost, with each backend's own cost columns
  contrapro_table -- ContraPro's accuracy per model, with the document model's CAD row
  span_table  -- XCOMET's error spans per strategy: by severity, and the commonest
  docmbr_wins -- the documents pooled+docmbr took from each strategy (table docmbr_wins)
  notes       -- the notes under the tables: precision, backend, MBR, realigned windows, skipped strategies
  plots       -- the report's plots (BLEU, pronoun F1, quality against cost, P-CXMI) from the same manifest
  findings    -- the paper's two findings on the demo, checked from its scores (make demo ends with it)
  compare     -- the comparison page: every strategy's translation of every document side by side, with filters
                 that recompute every metric and the paired test; a subpackage: collect (what it shows, read and
                 checked), randomization (the paired test and the metrics from summed statistics), page (its data
                 and HTML), marot (the Marot file), browser (headless chromium), screenshot (a PNG of a page), cli
                 (console script docnmt-compare)

CLIs (``python -m docnmt.score.X``): ``sacrebleu_metrics``, ``pronouns``, ``perplexity``,
``contrastive``, ``ctxpro``, ``metricx``, ``tiny_metricx``, ``gemba``, ``cxmi``, ``context_usage``, ``tables``, ``plots``, ``findings``, ``compare.cli``, ``compare.screenshot``; in unbabel-comet's environment
``comet`` and ``tiny_comet``.
"""

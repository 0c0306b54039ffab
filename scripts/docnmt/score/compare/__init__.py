"""The comparison page of a task (``results/{task}/compare.html``, console script ``docnmt-compare``): every
strategy's translation of every document side by side, the context each saw, what every metric and test set of
context found, filters that recompute every number and the paired test, and an export to Google's Marot.

Modules:
  collect       -- reading and checking what the page shows: test set, translations, metrics' statistics, target
                   contexts, error spans, pronoun counts, ContraPro and ctxpro examples
  randomization -- paired approximate randomization and the metrics from summed statistics, computed exactly as
                   the page's script computes them
  page          -- the page's data, its Overview in Python, and the self-contained HTML (page.html, page.css,
                   page.js of this folder)
  marot         -- the Marot data file (ten tab-separated columns)
  browser       -- Debian's headless chromium through Selenium (the screenshot, the benchmark, the tests)
  screenshot    -- a PNG of a page (make screenshot: the README's)
  cli           -- docnmt-compare
"""

"""Stage 4, ``rules/decode.smk``: one decoding per search strategy.

Modules:
  backend      -- the backend layer's interface: what the strategies, the CLIs, the config and the workflow know of a
                  model backend (ModelLike, SearcherLike, the Backend description) and the backends' registry
  requests     -- what every backend's search takes, gives and counts: requests, hypotheses, batches, cost
                  counters, dtypes
  load_options -- a backend's typed load options: --engine-args, the schema's keys, the transport options
  backends     -- a model, its searcher and its checks, through the backends' registry (backend); a
                  subpackage per backend, found by walking the package (backend.builtin), each with its entry
                  points (load, check, searcher, check_cli):
                  backends.fairseq (model: a trained fairseq model, loaded once, for forced scoring and decoding;
                  search: batched beam search after a forced target prefix, fairseq's SequenceGenerator;
                  prefix_cache: the forced prefix's attention cache; checks) and backends.transformers (model: a
                  Hugging Face seq2seq model and its tokenizer from a local folder, and beam search after a forced
                  target context with transformers' beam semantics; checks) and backends.causal_lm (model: a
                  decoder-only LLM prompted with a conversation of turns, its search after the longest cached
                  prefix; contrast: context-aware decoding's side without context beside generate; checks; tiny: a tiny
                  causal LM trained on a corpus, make demo-llm's) and backends.vllm
                  (model: the same LLM folders and prompts on vLLM's engine, in its own environment; epsilon:
                  epsilon sampling as the engine's logits processor; checks; serve: vllm serve started as the
                  backend starts its engine) and
                  backends.openai (model: a model served behind an OpenAI-compatible endpoint, causal-lm's
                  conversations as chat messages; endpoint: the client, concurrency, retries, the key from the
                  environment; checks); backends.encoder_decoder: the request checks fairseq and transformers
                  share
  prompting    -- a causal LM's prompt, shared by the backends that prompt one (causal_lm, vllm, openai):
                  template: the templates (prompting/templates/) and the languages' names; conversation: a request
                  as turns and the Prompter that renders them for a tokenizer; answers: a request's ids, its
                  answer's lines and sentences; model: a causal LM's folder, prompted (config, tokenizer, end
                  tokens, ids, hypotheses), and its searchers' counters; checks: the checks of a causal LM's folder
                  and the sample's prompts; refinement: refine's template and the message it renders
  arguments    -- the command-line arguments the decoding and scoring CLIs share (backend, dtype, search)
  documents    -- a test set's documents (Document, group) and a sentence's window and context: the library layer
                  of the strategies, the decoding CLIs and the scorers
  strategy_registry -- the strategy registry: each strategy's function, the models it needs, its cost and inputs
  strategies   -- the paper's search strategies, each a function of documents, registered (REGISTRY, STRATEGIES)
  contrastive  -- context-aware (contrastive) decoding for the strategies with a target context: --cad, its variant
                  (+cad); each backend's searcher runs the side without context beside its own
  verification -- draft verification, exact under greedy search: a draft checked in one pass, searched on from the
                  first disagreement (the backends' passes: backends.fairseq.drafts, backends.causal_lm.drafts)
  overlapping  -- last-sentence's and first-sentence's overlapping windows; at beam 1 a tiling's windows first, the
                  others with the tiling's translations as drafts
  refinement   -- refine: a draft (another strategy's translation) improved by a prompting model with the source
                  document and the whole draft in view, by sentence or document, in rounds; its CLIs' options
  fixed_point  -- parallel doc-trans: the fixed-point iteration over a document's sentences, round by round
  realign      -- a window's output mapped back to its sentences where its count of segments is another
                  (full-segment, the whole document in one turn, chunks)
  variants     -- a system's variants (doc-trans+mbr, doc-trans+qe, pooled+docmbr), each declared once beside its
                  code: the registry, the systems' names and rows
  mbr          -- minimum Bayes risk selection among a search's candidates (beyond the paper): its rule, settings
                  and its variants' declarations (+mbr, +qe)
  selection    -- MBR's utilities (fastchrf's chrF, sacrebleu's chrF++, COMET) and QE reranking: the selector the
                  strategies call
  document_mbr -- document-level MBR by optimal transport over sentences (MBR-OT: Jinnai, ACL 2025): the
                  utility of one candidate document against another, the selection among a document's candidates,
                  and pooled+docmbr: each test document's translation chosen among the strategies' (its CLI)
  metric_client -- a learned metric (COMET, QE) for the selection, scored by a child process in unbabel-comet's
                  environment
  sampling     -- epsilon sampling of MBR's candidates, per request under a seed, on either backend
  journal      -- a decode's finished chunks of requests on disk as it goes, from which a killed decode resumes
  record       -- a decode's record for the decode CLI and docnmt-translate alike: its journal, cost, signature
  cli          -- the decoding CLI: a test set decoded with one strategy, hypotheses and a JSON sidecar
  checks       -- docnmt-check-model: a model trained elsewhere checked by its backend's checks; k
  translate    -- raw documents translated with any strategy (tokenizer, BPE, search, detokenizer)

CLI: ``python -m docnmt.decode.cli --strategy NAME ...``, ``python -m docnmt.decode.checks``,
``python -m docnmt.decode.translate``, ``python -m docnmt.decode.document_mbr``,
``python -m docnmt.decode.backends.causal_lm.tiny``; in vLLM's environment
``python -m docnmt.decode.backends.vllm.serve``.
"""

"""Perplexity of hypotheses and references (the paper's Table 2), by forced scoring.

Definition used here (the paper does not spell it out; this is the natural
reading of its Table 2 and the models' training condition):

- **sentence-level rows**: the sentence-level model scores each target
  sentence alone, ``log p(E_i | F_i)``;
- **document-level rows**: the document-level model scores each target
  sentence in the context of the *same text's* k-1 previous sentences,
  ``log p(E_i | F_{i-k+1}^i, E_{i-k+1}^{i-1})``: source window and target
  prefix ``E_{i-k+1} <sep> ... E_{i-1} <sep>`` as in training, where the
  target context comes from the text being scored (the hypothesis' own
  earlier sentences for a strategy, the reference's for the reference).
  Context never crosses a document boundary, and only sentence i's tokens
  are scored. A window longer than the model's max positions drops its
  oldest context sentences (as in decoding).

Per-token normalization: the tokens of sentence i are its BPE tokens plus
``</s>``; ``PPL = exp(-Σ log p / Σ tokens)`` over all sentences of the test
set (natural log; the same value as fairseq's ``2 ** (-Σ log2 p / N)``). An
empty hypothesis line is scored as ``</s>`` alone. The scores come from one
teacher-forced pass per batch after the prefilled context
(:meth:`docnmt.decode.backends.fairseq.search.Searcher.score_forced`); for a sentence without context
this equals fairseq-generate's ``--score-reference``.

A Hugging Face model (``--backend transformers``, a model folder, no
``--data``) scores plain text, segmented by its tokenizer: its tokens are
then the tokenizer's (``</s>`` included), so its perplexities compare with
those of other models with the same tokenizer only.

CLI::

    python -m docnmt.score.perplexity --model doc.pt --data bin/document --level document --k 3 \
        --src bpe/test.en --docids corpus/test.docids \
        --system reference=bpe/test.de --system doc-trans=decode/test/doc-trans.bpe ... --output ppl.json
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

from ..decode.documents import group, previous, window
from .evalset import parse_systems, read_documents, read_system
from ..textio import atomic_write, cli_errors
from ..manual import argument_parser
from .metric import Metric


def requests_and_targets(decoder, src: list[str], docids: list[str], text: list[str], level: str, k: int):
    """Search requests (source window, target context) and target ids, one per line, in line order.

    The document-level context is the one the ``cheating`` strategy forces, with the scored
    text in place of the reference: the same documents, windows and truncation.
    """
    from ..decode.requests import Request

    model = decoder.searcher.model
    requests, targets = [], []
    for doc in group(src, docids, ref=text):
        for i, line in enumerate(doc.lines):
            target = model.encode(doc.ref[i], source=False)[:-1]
            if level == "sentence":
                requests.append(Request(model.encode(doc.src[i], source=True), []))
            else:  # the context must leave room for the scored sentence: the oldest is dropped first
                requests.append(decoder.request(window(doc, i - k + 1, i + 1), previous(doc.ref, i, k), line,
                                                continuation=len(target)))
            targets.append(target)
    return requests, targets


def perplexity(searcher, decoder, src, docids, text, level: str, k: int) -> dict:
    requests, targets = requests_and_targets(decoder, src, docids, text, level, k)
    scored = searcher.score_forced(requests, targets)
    logprob = sum(s.logprob for s in scored)
    tokens = sum(s.tokens for s in scored)
    return {"perplexity": math.exp(-logprob / tokens), "logprob": logprob, "tokens": tokens, "sentences": len(scored)}


@cli_errors
def main(argv=None) -> int:
    from ..decode.backends import make_searcher, model_from_args
    from ..startup import freeze_heap
    from ..decode.arguments import add_language_code_arguments, add_scoring_model_arguments
    from ..option_ranges import POSITIVE_INT
    from ..decode.strategies import Decoder

    parser = argument_parser("docnmt.score.perplexity", __doc__.split("\n\n")[0])
    add_scoring_model_arguments(parser)
    parser.add_argument("--src", required=True, type=Path, help="BPE source, one sentence per line")
    parser.add_argument("--docids", required=True, type=Path)
    parser.add_argument("--system", action="append", default=[], required=True, metavar="NAME=PATH",
                        help="BPE-level text to score (hypotheses or the reference), repeatable")
    add_language_code_arguments(parser)
    parser.add_argument("--batch-size", type=POSITIVE_INT, default=64,
                        help="at most this many scored sentences a batch")
    parser.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)

    src, docids = read_documents(args.src, args.docids)
    texts = {name: read_system(path, len(src), args.src) for name, path in parse_systems(args.system).items()}

    model = model_from_args(parser, args, src_lang=args.src_lang, tgt_lang=args.tgt_lang)
    freeze_heap(argv)
    searcher = make_searcher(model, batch_size=args.batch_size)
    decoder = Decoder(searcher, k=args.k, h=1, source_name=str(args.src))
    result = {
        "model": str(args.model),
        "backend": args.backend,
        "level": args.level,
        "k": args.k if args.level == "document" else None,
        "device": model.device,
        "dtype": model.dtype,
        "definition": "exp(-sum log p(E_i | F_{i-k+1}^i, E_{i-k+1}^{i-1}) / sum(|E_i| + 1)), context from the scored text"
                      if args.level == "document" else "exp(-sum log p(E_i | F_i) / sum(|E_i| + 1))",
        "systems": {},
    }
    for name, text in texts.items():
        started = time.perf_counter()
        before = decoder.stats.context_truncated
        entry = perplexity(searcher, decoder, src, docids, text, args.level, args.k)
        entry["context_truncated"] = decoder.stats.context_truncated - before
        entry["seconds"] = round(time.perf_counter() - started, 3)
        result["systems"][name] = entry
        print(f"{name}: perplexity {entry['perplexity']:.3f} over {entry['tokens']} tokens")
    with atomic_write(args.output) as handle:
        json.dump(result, handle, indent=1)
        handle.write("\n")
    return 0


#: Its declaration in the metric seam (docnmt.score.metric): a rule of its own.
METRIC = Metric(
    name="perplexity", module=__name__, order=5, rule=False, table="perplexity",
    summary="perplexity of the reference and of every strategy's hypotheses under the level's model (Table 2)",
    columns=lambda config: ["perplexity"], environment="model", unit="sentence",
    needs=("source", "docids", "model"), higher_is_better=False,
    signature="the model's level, window k and dtype")


if __name__ == "__main__":
    main()

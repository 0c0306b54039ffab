"""refine: a draft translation of each document improved by the model with the whole draft in view (a prompting
model's strategy; Tan, Hieber, Byrne et al. 2026, "translate the document, then refine it segment by segment").

The draft is another strategy's output (``Document.draft``; config ``refine.draft``, default full-segment; the decode
CLI's ``--draft``). Each *round* rewrites it:

- ``unit: sentence`` (the default): every sentence in its own request, whose prompt holds the source document, the
  draft document and the sentence with its draft (:class:`docnmt.decode.prompting.refinement.Refiner`); the answer
  is that sentence's new translation. All sentences of all documents go into one search call.
- ``unit: document``: the whole draft of a document in one request; the answer's lines are mapped back to the
  document's sentences by the realignment of full-segment (:func:`docnmt.decode.realign.realign`, guided by the
  draft) where their number is another. No line of the answer is dropped.

The output has one line per sentence, always. A sentence keeps its draft where its answer is empty or cannot be read
as its translation: for the sentence unit an answer that did not end or ran on to more lines than one (not
complete); for the document unit an empty answer (every sentence's draft), or an empty piece after the realignment
(that sentence's). Such sentences are counted (``Stats.kept_draft``, their lines in ``kept_draft_lines``).
``rounds`` rounds each refine the last round's output.
"""

from __future__ import annotations

from pathlib import Path

from .. import SEP
from ..preprocess.windows import join, split
from ..textio import InputError
from .documents import Document
from .prompting.refinement import UNITS
from .realign import realign
from .requests import Request
from .strategy_registry import STRATEGIES, strategy


def _ids(dec, sentences) -> list[int]:
    return dec.searcher.model.encode(join(sentences), source=True)


def _request(dec, doc: Document, source: list[str], draft: list[str], whole: list[str] | None, line: int) -> Request:
    """One refine request: ``source`` with its ``draft``, beside the whole source document and ``whole`` (the whole
    draft) for the sentence unit; an InputError naming the line where the prompt does not fit the context window."""
    model = dec.searcher.model
    src, refining = _ids(dec, source), _ids(dec, draft)
    document = _ids(dec, doc.src) if whole is not None else []
    draft_document = _ids(dec, whole) if whole is not None else []
    room = max(1, len(refining)) * 2
    if not model.fits(src, [], room, document=document, refining=refining, draft_document=draft_document):
        raise InputError(dec.source_name, f"expected refine's prompt (the source document, its draft and the "
                                          f"sentence) and an answer of {room} tokens to fit the model's context "
                                          f"window of {model.max_positions} tokens", line + 1)
    dec.stats.requests += 1
    return Request(src, [], document, line=line, refining=refining, draft_document=draft_document)


def _keep_draft(dec, doc: Document, at: int, draft: str) -> str:
    """The draft of sentence ``at``, kept (counted)."""
    dec.stats.kept_draft += 1
    dec.stats.kept_draft_lines.append(doc.lines[at])
    return draft


def refine_round(dec, docs: list[Document], drafts: list[list[str]], unit: str) -> list[list[str]]:
    """One round: each document's ``drafts`` improved (the module docstring)."""
    keys, requests = [], []
    for n, doc in enumerate(docs):
        # the draft is also the answer's draft, which a greedy search verifies (prompt lookup: it is in the prompt)
        if unit == "sentence":
            for i in range(len(doc)):
                keys.append((n, i, i + 1))
                requests.append(dec.with_draft(_request(dec, doc, [doc.src[i]], [drafts[n][i]], drafts[n],
                                                        doc.lines[i]), drafts[n][i]))
        elif len(doc):
            keys.append((n, 0, len(doc)))
            requests.append(dec.with_draft(_request(dec, doc, doc.src, drafts[n], None, doc.lines[0]),
                                           "\n".join(drafts[n])))
    out = [list(d) for d in drafts]
    dec.stats.rounds += 1
    for (n, a, b), nbest in zip(keys, dec.search(requests)):
        hyp, doc = nbest[0], docs[n]
        text = dec.text(hyp)
        if not text.replace(SEP, "").strip() or (unit == "sentence" and not hyp.complete):
            segments = [""] * (b - a)
        elif unit == "sentence":
            segments = [text]
        else:
            segments = split(text)
            if len(segments) != b - a:  # mapped back to the document's sentences, against the draft
                dec.stats.sep_mismatch += 1
                dec.stats.realigned_documents.add(n)
                segments = realign(doc.src[a:b], segments, drafts[n][a:b])
        out[n][a:b] = [piece if piece.strip() else _keep_draft(dec, doc, a + j, drafts[n][a + j])
                       for j, piece in enumerate(segments)]
    return out


@strategy("refine", "O(2NL)", needs=("conversation",), drafted=True, contrapro=False, target_context="draft",
          sidecar=("refine", "realigned_documents"))
def refine(dec, docs: list[Document]) -> list[list[str]]:
    """The draft (``Document.draft``) improved in ``dec.refine_rounds`` rounds of ``dec.refine_unit``: each sentence
    rewritten with the whole source document and draft in view (the module docstring).  Cost O(2NL): the draft's
    translation, then about as many tokens again (each prompt longer by the document and the draft, which the
    reused cache computes once per document)."""
    if dec.refine_unit not in UNITS:
        raise ValueError(f"refine's unit must be one of {', '.join(UNITS)}, got {dec.refine_unit!r}")
    for doc in docs:
        if doc.draft is None:
            raise ValueError("refine needs the draft's translation (Document.draft; the decode CLI's --draft)")
    drafts = [list(doc.draft) for doc in docs]
    for _ in range(dec.refine_rounds):
        drafts = refine_round(dec, docs, drafts, dec.refine_unit)
    return drafts


# ---- the decode CLI's options ------------------------------------------------------------------------------------
def add_arguments(parser) -> None:
    """refine's options of the decode CLI: the draft (its file and sidecar), and :func:`add_settings`."""
    parser.add_argument("--draft", type=Path, help="refine: the draft's hypotheses (another strategy's output, line "
                                                   "by line as --src)")
    parser.add_argument("--draft-sidecar", type=Path, help="refine: the draft's decode sidecar (its cost)")
    add_settings(parser)


def add_translate_arguments(parser) -> None:
    """refine's options of docnmt-translate: the strategy that translates the draft, and :func:`add_settings`."""
    from .strategy_registry import STRATEGIES

    drafts = [name for name, info in STRATEGIES.items() if not info.drafted and not info.reference]
    parser.add_argument("--refine-draft", choices=drafts, default="full-segment",
                        help="refine: the strategy whose translation it improves (default: %(default)s; with "
                             "--context document, the whole document in one turn)")
    add_settings(parser)


def add_settings(parser) -> None:
    """refine's unit, rounds and template."""
    from ..option_ranges import POSITIVE_INT

    parser.add_argument("--refine-unit", choices=UNITS, default="sentence",
                        help="refine: each sentence in its own request, or the whole document in one "
                             "(default: %(default)s)")
    parser.add_argument("--refine-rounds", type=POSITIVE_INT, default=1,
                        help="refine: rounds, each refining the last one's output (default: %(default)s)")
    parser.add_argument("--refine-template",
                        help="refine: its prompt's template, a name of the repository's (improve; "
                             "scripts/docnmt/decode/prompting/templates/refine/) or a YAML file of one's own")


def check_args(parser, args, draft) -> None:
    """A usage error where refine's options do not go with the decode: a draft for another strategy, refine without
    one."""
    given = [option for option, value in (("--draft", args.draft), ("--draft-sidecar", args.draft_sidecar),
                                          ("--refine-template", args.refine_template)) if value is not None]
    drafted = STRATEGIES[args.strategy].drafted
    if not drafted and given:
        parser.error(f"{given[0]} is refine's option, not {args.strategy}'s")
    if drafted and draft is None:
        parser.error("refine needs --draft (the translation it improves)")


def set_template(model, args) -> None:
    """The model's refine template (``--refine-template``), loaded now: a template without a slot it needs is an error
    naming the file before anything is decoded."""
    if STRATEGIES[args.strategy].drafted:
        model.refine_template = args.refine_template
        model.refiner  # noqa: B018 (loaded and checked)


def record(args, model, stats) -> dict:
    """What refine's sidecar records: its unit, rounds, template, the draft's file and digest, and the sentences that
    kept their draft (their lines, 1-based)."""
    from ..textio import file_digest

    return {"unit": args.refine_unit, "rounds": args.refine_rounds, "template": model.refiner.template.path.name,
            "draft": str(args.draft), "draft_sha256": file_digest(args.draft), "kept_draft": stats.kept_draft,
            "kept_draft_lines": sorted(line + 1 for line in stats.kept_draft_lines), **_draft_cost(args)}


#: What refine's sidecar takes over of its draft's (``--draft-sidecar``): the strategy and its cost.
DRAFT_COST = ("strategy", "seconds", "decoder_positions", "forward_calls", "tokens_prefilled", "tokens_cached",
              "tokens_generated")


def _draft_cost(args) -> dict:
    """The draft's strategy and cost from its sidecar (``draft_cost``), where given; an InputError naming it where it
    is not a decode's sidecar."""
    if args.draft_sidecar is None:
        return {}
    from ..textio import InputError, load_json

    found = load_json(args.draft_sidecar, "the draft's decode sidecar")
    if not isinstance(found, dict) or "strategy" not in found or "seconds" not in found:
        raise InputError(args.draft_sidecar, "expected a decode's sidecar (with strategy and seconds)")
    return {"draft_cost": {key: found[key] for key in DRAFT_COST if key in found}}

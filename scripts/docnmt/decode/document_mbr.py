"""Document-level MBR by optimal transport over sentences (MBR-OT: Jinnai, ACL 2025, arXiv 2505.23078).

Two candidate translations of one document, ``h`` (the hypothesis) and ``r`` (the pseudo-reference), are compared
sentence by sentence through an optimal transport between their sentences::

    C_jk = 1 - u(h_j, r_k)                 (u: a sentence utility in [0, 1], here sentence chrF / 100)
    U(h, r) = 1 - OT(a, b, C)              (a, b: the sentences' weights, uniform or by length in characters)

so a candidate that splits or merges a sentence still meets its counterpart, where a line-by-line comparison would
not. The solvers (:data:`SOLVERS`): ``assign``, the assignment of sentences to sentences that minimizes the mean
cost of the assigned pairs (``scipy.optimize.linear_sum_assignment``; the weights do not enter), and ``sinkhorn``,
the entropic transport cost of POT's ``ot.sinkhorn2`` at regularization 0.1. This follows MBR-OT's reference code
(jinnaiyuu/mbr-optimal-transport, ``mbr/utility/ot_utility.py`` at 4e32c2d), its edge cases included: identical
documents score 1 (without a transport), and a document with more than twice the other's sentences is cut to the
first ``int(2 * other)`` of them. The sentences are the test set's lines, not a sentence splitter's.

A candidate's expected utility is its mean utility against every candidate of the document, itself included (as
MBR-OT's and mbrs' code compute it); the selected candidate is the first with the highest (:func:`select`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..textio import InputError, cli_errors, parse_named
from .variants import Variant

#: The transport solvers: MBR-OT's ``assign`` and ``sinkhorn`` (its default).
SOLVERS = ("assign", "sinkhorn")
#: The sentences' weights: each sentence alike, or by its length in characters.
WEIGHTS = ("uniform", "length")
#: Sinkhorn's entropic regularization, MBR-OT's.
SINKHORN_REGULARIZATION = 0.1
#: A document with more than this times the other's sentences is cut to that many (MBR-OT's
#: ``n_sentences_threshold``).
THRESHOLD = 2.0

#: A sentence utility over two lists of sentences: the matrix of ``u(hyp_j, ref_k)``, each in [0, 1].
Similarity = Callable[[Sequence[str], Sequence[str]], "object"]


def cut_to_threshold(hyp: Sequence[str], ref: Sequence[str], threshold: float = THRESHOLD):
    """The longer document cut to ``int(threshold * shorter)`` sentences where it has more than that."""
    if len(hyp) > threshold * len(ref):
        return list(hyp[: int(threshold * len(ref))]), list(ref)
    if len(ref) > threshold * len(hyp):
        return list(hyp), list(ref[: int(threshold * len(hyp))])
    return list(hyp), list(ref)


def sentence_weights(sentences: Sequence[str], weights: str):
    """The sentences' masses, summing to 1: uniform, or by length in characters (uniform where every sentence is
    empty, whose lengths give no masses)."""
    import numpy as np

    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}")
    lengths = np.array([len(s) for s in sentences], dtype=np.float64)
    if weights == "uniform" or lengths.sum() == 0:
        return np.ones(len(sentences)) / len(sentences)
    return lengths / lengths.sum()


def transport_cost(cost, hyp_weights, ref_weights, solver: str) -> float:
    """The optimal transport cost of the cost matrix between the two weight vectors by ``solver``."""
    import numpy as np

    if solver == "assign":
        from scipy.optimize import linear_sum_assignment

        rows, cols = linear_sum_assignment(cost)
        return float(np.asarray(cost)[rows, cols].mean())
    if solver == "sinkhorn":
        import ot

        return float(ot.sinkhorn2(hyp_weights, ref_weights, cost, SINKHORN_REGULARIZATION))
    raise ValueError(f"solver must be one of {', '.join(SOLVERS)}, got {solver!r}")


def document_utility(hyp: Sequence[str], ref: Sequence[str], similarity: Similarity, solver: str = "sinkhorn",
                     weights: str = "uniform") -> float:
    """MBR-OT's utility of the document ``hyp`` against the document ``ref`` (lists of sentences): 1 where they are
    the same, else 1 minus the optimal transport cost of ``1 - similarity`` between their sentences. A document
    without sentences against one with some has utility 0."""
    import numpy as np

    if list(hyp) == list(ref):
        return 1.0
    hyp, ref = cut_to_threshold(hyp, ref)
    if not hyp or not ref:
        return 0.0
    cost = 1.0 - np.asarray(similarity(hyp, ref), dtype=np.float64)
    return 1.0 - transport_cost(cost, sentence_weights(hyp, weights), sentence_weights(ref, weights), solver)


class PooledSentences:
    """A sentence utility over the distinct sentences of one document's candidates: every pair's utility computed at
    once (:meth:`pairwise`, a subclass's), then read by the transports as rows (hypothesis) and columns
    (pseudo-reference). ``position``: each distinct sentence's first position in a candidate (its line in the
    document)."""

    def __init__(self, candidates: Sequence[Sequence[str]]):
        self.index: dict[str, int] = {}
        self.position: list[int] = []
        for candidate in candidates:
            for position, sentence in enumerate(candidate):
                if sentence not in self.index:
                    self.index[sentence] = len(self.index)
                    self.position.append(position)
        self.matrix = self.pairwise(list(self.index))

    def pairwise(self, sentences: list[str]):
        """The matrix of u(sentence i, sentence j)."""
        raise NotImplementedError

    def __call__(self, hyp: Sequence[str], ref: Sequence[str]):
        rows = [self.index[s] for s in hyp]
        cols = [self.index[s] for s in ref]
        return self.matrix[rows][:, cols]


class PooledChrf(PooledSentences):
    """Sentence chrF / 100 over the sentences of one document's candidates, every distinct pair at once: sacrebleu's
    ``CHRF()`` (character 6-grams without whitespace, beta 2, its effective-order averaging), from n-gram counts
    kept once per sentence. The matches of two sentences at order n, sum over n-grams of min(count in one, count in
    the other), are the number of thresholds t >= 1 both counts reach, so each order's matches of all pairs are sums
    of sparse products of 0/1 matrices (``count >= t``). Exact (integer counts; equal to sacrebleu within 1e-12,
    tested), and about ten times faster than fastchrf's pairwise chrF on a TED talk's pooled sentences (1.8 s
    against 19.5 s for 1,937 sentences)."""

    ORDER = 6
    BETA = 2.0

    def pairwise(self, sentences: list[str]):
        return pairwise_chrf(sentences, self.ORDER, self.BETA)


def pairwise_chrf(sentences: Sequence[str], order: int = 6, beta: float = 2.0):
    """The matrix of sacrebleu's sentence chrF / 100 of sentence i (hypothesis) against sentence j (reference)."""
    from collections import Counter

    import numpy as np
    from scipy import sparse

    size = len(sentences)
    stripped = ["".join(s.split()) for s in sentences]
    precision, recall, effective = np.zeros((size, size)), np.zeros((size, size)), np.zeros((size, size))
    for n in range(1, order + 1):
        vocabulary: dict[str, int] = {}
        rows, cols, counts = [], [], []
        totals = np.array([max(len(t) - n + 1, 0) for t in stripped], dtype=np.float64)
        for i, text in enumerate(stripped):
            for gram, count in Counter(text[j:j + n] for j in range(len(text) - n + 1)).items():
                rows.append(i)
                cols.append(vocabulary.setdefault(gram, len(vocabulary)))
                counts.append(count)
        level = sparse.csr_matrix((np.array(counts, dtype=np.float32), (rows, cols)),
                                  shape=(size, max(len(vocabulary), 1)))
        matches = np.zeros((size, size), dtype=np.float64)
        while level.nnz:  # the n-grams whose count reaches t, for t = 1, 2, ...
            reached = level.copy()
            reached.data[:] = 1
            matches += (reached @ reached.T).toarray()
            level.data -= 1
            level.eliminate_zeros()
        # sacrebleu: a hypothesis's n-grams count only where the reference has some of that order
        hyp_total = totals[:, None] * (totals[None, :] > 0)
        ref_total = np.broadcast_to(totals[None, :], (size, size))
        counted = (hyp_total > 0) & (ref_total > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            precision += np.where(counted, matches / hyp_total, 0.0)
            recall += np.where(counted, matches / ref_total, 0.0)
        effective += counted
    factor = beta ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(effective > 0, precision / effective, 0.0)
        recall = np.where(effective > 0, recall / effective, 0.0)
        return np.where(precision + recall > 0,
                        (1 + factor) * precision * recall / (factor * precision + recall), 0.0)


@dataclass
class Selection:
    """One document's selection: the chosen candidate, and each candidate's expected utility (in input order)."""

    chosen: int
    expected: list[float] = field(default_factory=list)
    #: utility evaluations: document pairs compared by a transport (identical ones are 1 without it)
    transports: int = 0


def select(candidates: Sequence[Sequence[str]], similarity: Similarity | None = None, solver: str = "sinkhorn",
           weights: str = "uniform") -> Selection:
    """The candidate document with the highest mean utility against all candidates, itself included; the first such
    on a tie. ``similarity``: the sentence utility (default :class:`PooledChrf` over these candidates). Identical
    candidates share their utilities (each pair of distinct documents is solved once per direction)."""
    if not candidates:
        raise ValueError("document MBR needs at least one candidate")
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {', '.join(SOLVERS)}, got {solver!r}")
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTS)}, got {weights!r}")
    similarity = similarity or PooledChrf(candidates)
    distinct: dict[tuple, int] = {}
    keys = [distinct.setdefault(tuple(c), len(distinct)) for c in candidates]
    documents = [list(k) for k in distinct]
    solved: dict[tuple[int, int], float] = {}
    transports = 0
    for a in range(len(documents)):
        for b in range(len(documents)):
            solved[a, b] = 1.0 if a == b else document_utility(documents[a], documents[b], similarity, solver, weights)
            transports += a != b
    expected = [math.fsum(solved[keys[i], keys[j]] for j in range(len(candidates))) / len(candidates)
                for i in range(len(candidates))]
    best = max(expected)
    return Selection(expected.index(best), expected, transports)


# ---- pooled+docmbr: a selection over the strategies' translations of each document --------------------------
#: The sentence utilities of pooled+docmbr (its CLI's --utility; ``comet:NAME`` besides: a reference-based COMET
#: checkpoint of metrics.comet, scored by the selection's scorer in unbabel-comet's environment).
UTILITIES = {"chrf": "sentence chrF (sacrebleu's CHRF(), exact)"}


class PooledComet(PooledSentences):
    """COMET of sentence ``h`` (``mt``) against sentence ``r`` (``ref``) over one document's candidates, each distinct
    pair scored once in one request to the scorer (:class:`docnmt.decode.metric_client.MetricClient`, through
    :func:`docnmt.decode.selection.comet_pairwise`). The source of a pair is the test set's sentence at ``h``'s
    position in the document (the candidates are line-aligned; a sentence that several candidates put at several
    positions takes its first)."""

    def __init__(self, candidates: Sequence[Sequence[str]], sources: Sequence[str], scorer):
        self.sources, self.scorer = sources, scorer
        super().__init__(candidates)

    def pairwise(self, sentences: list[str]):
        import numpy as np

        from .selection import comet_pairwise

        sources = [self.sources[min(p, len(self.sources) - 1)] for p in self.position]
        return np.array(comet_pairwise(self.scorer, sentences, sources) if sentences else [],
                        dtype=np.float64).reshape(len(sentences), len(sentences))


#: The config's default solver: the exact assignment, 15 times faster than Sinkhorn on the demo's 100 documents of
#: 8 candidates (0.9 s against 14 s; docs/benchmarks.md).
DEFAULT_SOLVER = "assign"


def _docmbr_strategies(config: dict) -> list[str]:
    """The candidates' strategies of pooled+docmbr: docmbr.strategies in their order (``all``: every configured
    strategy that does not read the reference); none where that leaves fewer than two."""
    from .strategies import STRATEGIES

    chosen = config["docmbr"]["strategies"]
    if chosen == "all":
        chosen = [s for s in config["strategies"] if not STRATEGIES[s].reference]
    return list(chosen) if len(chosen) >= 2 else []


def check_config(config: dict) -> str | None:
    """What is wrong with a config's docmbr block (the config key and why), else None: a strategy listed that is not
    configured or reads the reference, or fewer than two (an empty list runs none)."""
    from .strategies import STRATEGIES

    chosen = config["docmbr"]["strategies"]
    if chosen == "all" or chosen == []:
        return None
    for name in chosen:
        if name not in config["strategies"]:
            return f"docmbr.strategies': {name!r} is not a configured strategy ({', '.join(config['strategies'])})"
        if STRATEGIES[name].reference:
            return (f"docmbr.strategies': {name!r} reads the reference: as a candidate it would leak the reference "
                    f"into the selection")
    if len(chosen) < 2:
        return f"docmbr.strategies': a selection needs at least two strategies, got {', '.join(chosen)}"
    return None


def _docmbr_options(config: dict, system: str) -> list[str]:
    block = config["docmbr"]
    return ["--utility", block["utility"], "--weights", block["weights"], "--solver", block["solver"]]


def _docmbr_learned(config: dict) -> str | None:
    from .mbr import Settings

    return Settings(utility=config["docmbr"]["utility"]).learned



#: ``pooled+docmbr``: for each document, the translation of the strategy (of docmbr.strategies) with the highest
#: expected MBR-OT utility against all of them, made by the rule select_document_mbr (this module's CLI).
VARIANT = Variant(kind="docmbr", suffix="+docmbr", label="document MBR", block="docmbr", order=40, pooled=True,
                  rule="select_document_mbr", module="docnmt.decode.document_mbr",
                  describe="document-level MBR by optimal transport over the strategies' translations of each "
                           "document (docmbr.strategies)",
                  strategies=_docmbr_strategies, options=_docmbr_options, check=check_config,
                  learned=_docmbr_learned)


def read_candidates(docids: list[str], named: dict, what: str) -> dict[str, list[str]]:
    """Each candidate file's lines, which must be the test set's: as many lines as its document ids (InputError
    naming the file)."""
    from ..textio import InputError, read_lines

    out = {}
    for name, path in named.items():
        lines = read_lines(path)
        if len(lines) != len(docids):
            raise InputError(path, f"{what} of {name} has {len(lines)} lines, the test set {len(docids)} (its "
                                   f"document ids): its documents differ from the test set's")
        out[name] = lines
    return out


def pooled_cost(sidecars: dict[str, dict]) -> dict:
    """The cost of the candidates, as Table 1 counts it: each candidate's own decoder positions, forward calls,
    requests and wall time, summed, plus the sentence-level first pass once where a candidate started from it and
    sentence-level is not a candidate itself (a first pass shared by 2-pass and parallel doc-trans is decoded once)."""
    keys = ("decoder_positions", "forward_calls", "requests", "repeated_requests", "sep_mismatch")
    total = {key: sum(sc.get(key, 0) for sc in sidecars.values()) for key in keys}
    total["seconds"] = round(math.fsum(sc.get("seconds", 0.0) for sc in sidecars.values()), 3)
    passes = [sc["first_pass"] for name, sc in sidecars.items() if sc.get("first_pass")]
    if passes and "sentence-level" not in sidecars:
        first = max(passes, key=lambda p: p.get("decoder_positions", 0))
        total["decoder_positions_with_first_pass"] = total["decoder_positions"] + first.get("decoder_positions", 0)
        total["seconds_with_first_pass"] = round(total["seconds"] + first.get("seconds", 0.0), 3)
    return total


@dataclass
class PooledSelection:
    """pooled+docmbr's choices over a test set, by document id: the strategy chosen (the first of those with the
    highest expected utility), the strategies whose translation of the document is the same text as the chosen one
    (the chosen one included: identical candidates tie), every candidate's expected utility, and the transports
    solved."""

    won_by: dict[str, str]
    same_as_chosen: dict[str, list[str]]
    expected: dict[str, dict[str, float]]
    transports: int

    def wins(self) -> dict[str, int]:
        """Documents won per strategy (a tie goes to the first)."""
        names = next(iter(self.expected.values()), {})
        return {name: sum(w == name for w in self.won_by.values()) for name in names}


def select_documents(docids: list[str], candidates: dict[str, list[str]], solver: str, weights: str,
                     similarity_of: Callable | None = None) -> PooledSelection:
    """For each document (consecutive lines of one id), the candidate strategy chosen among ``candidates`` (their
    translations of the whole test set, line-aligned, in the order that breaks ties); ``similarity_of(documents,
    start, stop)``: the sentence utility of one document's candidates (default: :class:`PooledChrf`)."""
    starts = [i for i in range(len(docids)) if i == 0 or docids[i] != docids[i - 1]] + [len(docids)]
    names = list(candidates)
    result = PooledSelection({}, {}, {}, 0)
    for start, stop in zip(starts, starts[1:]):
        documents = [candidates[n][start:stop] for n in names]
        similarity = similarity_of(documents, start, stop) if similarity_of is not None else None
        chosen = select(documents, similarity, solver=solver, weights=weights)
        docid = docids[start]
        result.won_by[docid] = names[chosen.chosen]
        result.same_as_chosen[docid] = [n for n, d in zip(names, documents) if d == documents[chosen.chosen]]
        result.expected[docid] = {n: round(u, 6) for n, u in zip(names, chosen.expected)}
        result.transports += chosen.transports
    return result


def _named(parser, option: str, items: list[str]) -> dict[str, str]:
    """``NAME=PATH`` options as {name: path} (:func:`docnmt.textio.parse_named`), in their order; a usage error
    naming the option where one is not."""
    try:
        return {name: str(path) for name, path in parse_named(items, option).items()}
    except InputError as err:
        parser.error(str(err))


def _main_parser():
    from ..manual import argument_parser

    parser = argument_parser("docnmt.decode.document_mbr", __doc__.split("\n\n")[0])
    parser.add_argument("--docids", required=True, help="the test set's document ids, a line per sentence")
    parser.add_argument("--candidate", action="append", required=True, metavar="NAME=TXT",
                        help="a strategy's detokenized translation of the test set (its order breaks ties)")
    parser.add_argument("--candidate-bpe", action="append", default=[], metavar="NAME=BPE",
                        help="the same strategy's BPE translation (written for the chosen documents)")
    parser.add_argument("--candidate-sidecar", action="append", default=[],
                        metavar="NAME=JSON", help="the same strategy's decode sidecar (the cost table's counts)")
    parser.add_argument("--utility", default="chrf",
                        help=f"the sentence utility: {', '.join(UTILITIES)}, or comet:NAME (with --comet-checkpoint "
                             "and --source); default: %(default)s")
    parser.add_argument("--source", help="comet:NAME: the test set's detokenized source, a line per sentence")
    from .mbr import add_comet_arguments

    add_comet_arguments(parser)
    parser.add_argument("--weights", choices=WEIGHTS, default="uniform", help="the sentences' masses")
    parser.add_argument("--solver", choices=SOLVERS, default=DEFAULT_SOLVER, help="the transport's solver")
    parser.add_argument("--output", required=True, help="the chosen translation (detokenized)")
    parser.add_argument("--output-bpe", help="the chosen translation (BPE)")
    parser.add_argument("--sidecar", required=True, help="the selection's record (JSON)")
    return parser


@cli_errors
def main(argv=None) -> int:
    """pooled+docmbr's CLI: every document's translation chosen among the strategies' by MBR-OT."""
    import json
    import time

    from ..textio import atomic_outputs, read_lines

    parser = _main_parser()
    args = parser.parse_args(argv)
    text = _named(parser, "--candidate", args.candidate)
    bpe = _named(parser, "--candidate-bpe", args.candidate_bpe)
    sidecar_paths = _named(parser, "--candidate-sidecar", args.candidate_sidecar)
    if len(text) < 2:
        parser.error("--candidate: document MBR needs at least two strategies' translations")
    for option, named in (("--candidate-bpe", bpe), ("--candidate-sidecar", sidecar_paths)):
        if named and set(named) != set(text):
            parser.error(f"{option}: one per --candidate (got {', '.join(named)}; candidates {', '.join(text)})")
    if args.output_bpe and not bpe:
        parser.error("--output-bpe needs --candidate-bpe for every candidate")
    settings = _utility(parser, args)
    docids = read_lines(args.docids)
    candidates = read_candidates(docids, text, "the translation")
    sources = read_candidates(docids, {"the test set": args.source}, "the source")["the test set"] \
        if settings.learned else None
    bpe_lines = read_candidates(docids, bpe, "the BPE translation") if bpe else {}
    from ..textio import load_json

    sidecars = {name: load_json(path, "decode sidecar") for name, path in sidecar_paths.items()}
    started = time.perf_counter()
    from .metric_client import from_args as scorer_from_args

    scorer = scorer_from_args(settings, args)
    try:
        similarity_of = None if scorer is None else (
            lambda documents, start, stop: PooledComet(documents, sources[start:stop], scorer))
        selection = select_documents(docids, candidates, args.solver, args.weights, similarity_of)
    finally:
        if scorer is not None:
            scorer.close()
    record = _record(args, list(text), sidecars, selection, time.perf_counter() - started)
    if scorer is not None:
        record["docmbr"]["metric"] = scorer.record()
    outputs = [args.output] + ([args.output_bpe] if args.output_bpe else []) + [args.sidecar]
    with atomic_outputs(outputs) as handles:
        for kind, handle in zip(("txt", "bpe") if args.output_bpe else ("txt",), handles):
            source = candidates if kind == "txt" else bpe_lines
            handle.writelines(source[selection.won_by[docid]][line] + "\n" for line, docid in enumerate(docids))
        handles[-1].write(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print(f"pooled+docmbr: {len(selection.won_by)} documents; won by "
          + ", ".join(f"{n} {c}" for n, c in selection.wins().items()))
    return 0


def _utility(parser, args):
    """The utility's settings (:class:`docnmt.decode.mbr.Settings`: a learned one names its checkpoint); a usage error
    for an unknown utility, or COMET without its checkpoint or the source."""
    from .mbr import Settings, SettingsError

    try:
        settings = Settings(utility=args.utility)
    except SettingsError:
        parser.error(f"--utility: expected {', '.join(UTILITIES)} or comet:NAME, got {args.utility!r}")
    if settings.utility not in UTILITIES and not settings.utility.startswith("comet:"):
        parser.error(f"--utility: expected {', '.join(UTILITIES)} or comet:NAME, got {args.utility!r}")
    if settings.learned:
        name, _, folder = (args.comet_checkpoint or "").partition("=")
        if name != settings.learned or not folder:
            parser.error(f"--utility {args.utility} needs --comet-checkpoint {settings.learned}=FOLDER")
        if args.source is None:
            parser.error(f"--utility {args.utility} needs --source (COMET reads the source)")
    return settings


def _record(args, names: list[str], sidecars: dict, selection: PooledSelection, seconds: float) -> dict:
    """The sidecar of pooled+docmbr: its settings, the winner and expected utilities per document, and the cost."""
    first = next(iter(sidecars.values()), {})
    cost = pooled_cost(sidecars) if sidecars else {}
    if cost:
        cost["seconds"] = round(cost["seconds"] + seconds, 3)
        if "seconds_with_first_pass" in cost:
            cost["seconds_with_first_pass"] = round(cost["seconds_with_first_pass"] + seconds, 3)
    return {"strategy": VARIANT.system(), "backend": first.get("backend"), "device": first.get("device"),
            "dtype": first.get("dtype"), "model": first.get("model"),
            "cost": "the candidates' + D·n² document transports",
            "docmbr": {"strategies": names, "utility": args.utility, "solver": args.solver, "weights": args.weights,
                       "utility_evaluations": selection.transports, "selection_seconds": round(seconds, 3)},
            "documents": len(selection.won_by), "wins": selection.wins(), "won_by": selection.won_by,
            "same_as_chosen": selection.same_as_chosen, "expected_utility": selection.expected, **cost}


if __name__ == "__main__":
    main()

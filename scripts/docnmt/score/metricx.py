"""MetricX-24 (Juraska et al., WMT 2024; google-research/metricx, ``metricx24``) on the stock mT5 class: a
translation's error score in [0, 25], lower being better, with a reference or without one (QE; the hybrid
models take both forms).

What ``metricx24.predict`` does, on transformers 5 (its own model class imports only on its pinned 4.30):

- the input is ``"source: {src} candidate: {hyp} reference: {ref}"``, or ``"source: {src} candidate: {hyp}"`` for QE;
- it is tokenized with truncation at ``max_input_length`` (1536) tokens, and its final ``</s>`` is dropped;
- the model reads it with the stock :class:`~transformers.MT5ForConditionalGeneration`: the encoder, then one decoder
  step from decoder input id 0; the score is the logit of token 250089 (``<extra_id_10>``), clipped to [0, 25].
  Only that one row of ``lm_head`` is multiplied (the same number as the whole vocabulary's projection, read there).
- Where the checkpoint's own ``config.json`` ties the word embeddings, the decoder's output is scaled by
  ``d_model ** -0.5`` first, as the official class does (and transformers 4's mT5). Released MetricX checkpoints do
  not tie them; transformers 5 writes ``tie_word_embeddings: true`` into every mT5 config it saves, so a checkpoint
  saved with it is read as tied.

Requests are batched by length (longest first, at most ``batch_size`` a batch) and scored in the model's dtype
(float32, or the task's on a GPU).

CLI (``docnmt-metricx``; what ``python -m metricx24.predict`` does)::

    docnmt-metricx --checkpoint DIR [--tokenizer DIR] --input in.jsonl [--output out.jsonl] [--qe]
        [--batch-size 16] [--max-input-length 1536] [--device cpu|cuda] [--dtype float32|bfloat16|float16]

reads MetricX's JSON lines (``source``, ``hypothesis`` and, unless ``--qe``, ``reference``) and writes each line
back with ``prediction`` added, to standard output unless ``--output`` is given (written atomically).

In the workflow (config ``metrics.metricx``; the seam's rule ``metricx``, :mod:`docnmt.score.metric`)::

    python -m docnmt.score.metricx workflow --source test.en --reference test.de --system NAME=PATH... \
        --checkpoint DIR [--mode reference] [--mode qe] [--baseline NAME...] [--bootstrap-samples 1000] \
        --output metricx.json

scores every system in each mode (columns ``MetricX`` and ``MetricX-QE``: the mean segment score, lower being
better), with paired bootstrap resampling of the mean against each baseline, as for COMET.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..manual import argument_parser
from ..textio import InputError, atomic_write, cli_errors, file_digest, json_lines
from .metric import Metric
from ..option_ranges import POSITIVE_INT

#: The token whose logit is the score: ``<extra_id_10>`` in mT5's vocabulary.
SCORE_TOKEN = 250089
#: metricx24's clipping of the score.
LOW, HIGH = 0.0, 25.0
#: metricx24's input length (its README: 1536 tokens for the 24 models).
MAX_INPUT_LENGTH = 1536
DTYPES = ("float32", "bfloat16", "float16")


def input_text(source: str, hypothesis: str, reference: str | None = None) -> str:
    """metricx24's input: with the reference, or without it (QE: ``reference`` None)."""
    text = f"source: {source} candidate: {hypothesis}"
    return text if reference is None else f"{text} reference: {reference}"


def checkpoint_config(checkpoint: Path) -> dict:
    """A MetricX-24 checkpoint folder's config.json, checked (no torch): an InputError naming the file where it is
    missing, not JSON, or its vocabulary lacks the score token."""
    config_file = Path(checkpoint) / "config.json"
    if not config_file.is_file():
        raise InputError(checkpoint, "expected a MetricX-24 checkpoint folder with config.json (an mT5 model)")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputError(config_file, f"expected an mT5 model's JSON config: {err}") from None
    vocab = config.get("vocab_size", 0) if isinstance(config, dict) else 0
    if not isinstance(vocab, int) or vocab <= SCORE_TOKEN:
        raise InputError(config_file, f"vocab_size {vocab}: a MetricX-24 model reads its score at token "
                                      f"{SCORE_TOKEN} (<extra_id_10>), which this vocabulary lacks")
    return config


class MetricX:
    """A MetricX-24 checkpoint (a local folder) and its tokenizer, ready to score."""

    def __init__(self, checkpoint: str | Path, tokenizer: str | Path | None = None, device: str | None = None,
                 dtype: str = "float32", max_input_length: int = MAX_INPUT_LENGTH):
        import torch
        from transformers import AutoTokenizer, MT5ForConditionalGeneration

        checkpoint = Path(checkpoint)
        config = checkpoint_config(checkpoint)
        if dtype not in DTYPES:
            raise InputError(dtype, f"expected a dtype of {', '.join(DTYPES)}")
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(str(tokenizer or checkpoint))
        self.model = MT5ForConditionalGeneration.from_pretrained(str(checkpoint), dtype=getattr(torch, dtype))
        self.model.to(self.device).eval()
        #: the official class scales the decoder's output where the checkpoint itself ties the embeddings
        self.scale = config["d_model"] ** -0.5 if config.get("tie_word_embeddings", False) else 1.0
        self.max_input_length = max_input_length
        self.dtype = dtype

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        """metricx24's tokenization: truncated at max_input_length, the final ``</s>`` dropped."""
        encoded = self.tokenizer(texts, max_length=self.max_input_length, truncation=True, padding=False)
        return [ids[:-1] for ids in encoded["input_ids"]]

    def score_ids(self, batch: list[list[int]]) -> list[float]:
        """The scores of one batch of token ids (right-padded, as the official collator pads)."""
        import torch

        width = max(len(ids) for ids in batch)
        pad = self.tokenizer.pad_token_id or 0
        input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids in batch], device=self.device)
        mask = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids in batch], device=self.device)
        with torch.no_grad():
            encoded = self.model.encoder(input_ids=input_ids, attention_mask=mask).last_hidden_state
            start = torch.zeros((len(batch), 1), dtype=torch.long, device=self.device)
            decoded = self.model.decoder(input_ids=start, encoder_hidden_states=encoded,
                                         encoder_attention_mask=mask).last_hidden_state[:, 0]
            row = self.model.lm_head.weight[SCORE_TOKEN]
            logits = (decoded * self.scale) @ row
        return torch.clamp(logits.float(), LOW, HIGH).tolist()

    def score(self, sources: list[str], hypotheses: list[str], references: list[str] | None = None,
              batch_size: int = 16) -> list[float]:
        """Each segment's MetricX-24 score (QE where ``references`` is None), in input order."""
        texts = [input_text(s, h, None if references is None else references[i])
                 for i, (s, h) in enumerate(zip(sources, hypotheses, strict=True))]
        ids = self.tokenize(texts)
        order = sorted(range(len(ids)), key=lambda i: -len(ids[i]))
        scores = [0.0] * len(ids)
        for start in range(0, len(order), batch_size):
            chunk = order[start:start + batch_size]
            for i, value in zip(chunk, self.score_ids([ids[i] for i in chunk])):
                scores[i] = value
        return scores


def read_jsonl(path: Path, qe: bool) -> list[dict]:
    """MetricX's input lines; InputError naming the line where one lacks a field the mode needs."""
    needed = ("source", "hypothesis") + (() if qe else ("reference",))
    rows = []
    for number, row in json_lines(path, blank_lines="skip"):
        missing = [k for k in needed if not isinstance(row, dict) or not isinstance(row.get(k), str)]
        if missing:
            raise InputError(path, f"expected the string fields {', '.join(needed)}"
                                   f"{' (--qe)' if qe else ''}; missing {', '.join(missing)}", number)
        rows.append(row)
    if not rows:
        raise InputError(path, "expected JSON lines with source and hypothesis, found none")
    return rows


# ---- the workflow's rule: every system on one evaluation set -------------------------------------------------
#: The score columns of the two modes.
MODES = {"reference": "MetricX", "qe": "MetricX-QE"}


def signature(checkpoint: Path, mode: str, max_input_length: int, dtype: str, batch_size: int) -> str:
    import transformers

    from .. import __version__

    return (f"{MODES[mode]}|model:{Path(checkpoint).name}|ckpt:{file_digest(checkpoint)[:12]}|mode:{mode}|"
            f"maxlen:{max_input_length}|dtype:{dtype}|batch:{batch_size}|transformers:{transformers.__version__}|"
            f"docnmt:{__version__}")


def workflow(argv) -> int:
    from .evalset import add_seam_arguments, load_args, write_score_file
    from .significance import ALPHA, mean_bootstrap_tests

    parser = argument_parser("docnmt.score.metricx", "MetricX-24 of every system on one evaluation set, with paired "
                                                     "bootstrap tests (the workflow's rule metricx)")
    add_seam_arguments(parser)
    parser.add_argument("--checkpoint", required=True, type=Path, help="the MetricX-24 model folder (mT5)")
    parser.add_argument("--tokenizer", type=Path, help="its tokenizer's folder (default: the checkpoint's)")
    parser.add_argument("--mode", action="append", choices=list(MODES),
                        help="reference (MetricX) and/or qe (MetricX-QE), repeatable; default: both")
    parser.add_argument("--batch-size", type=POSITIVE_INT, default=16)
    parser.add_argument("--max-input-length", type=POSITIVE_INT, default=MAX_INPUT_LENGTH)
    parser.add_argument("--device", help="cpu, cuda or cuda:N (default: cuda if available)")
    parser.add_argument("--dtype", default="float32", choices=DTYPES)
    args = parser.parse_args(argv)
    modes = list(dict.fromkeys(args.mode or list(MODES)))
    data = load_args(args)
    metric = MetricX(args.checkpoint, args.tokenizer, args.device, args.dtype, args.max_input_length)
    columns = [MODES[m] for m in modes]
    result = {"reference": str(args.reference), "sentences": len(data.reference), "columns": columns,
              "checkpoint": str(args.checkpoint), "signatures": {}, "systems": {s: {} for s in data.systems},
              "paired_bootstrap": {}, "alpha": ALPHA, "lower_is_better": True}
    segments = {}
    for mode, column in zip(modes, columns):
        sig = result["signatures"][column] = signature(args.checkpoint, mode, args.max_input_length, args.dtype,
                                                       args.batch_size)
        references = data.reference if mode == "reference" else None
        for name, hypotheses in data.systems.items():
            scores = metric.score(data.source, hypotheses, references, args.batch_size)
            segments.setdefault(column, {})[name] = scores
            result["systems"][name][column] = {"score": round(sum(scores) / len(scores), 6), "signature": sig}
        print(f"{column}: " + ", ".join(f"{n} {result['systems'][n][column]['score']:.4f}" for n in data.systems))
    result["paired_bootstrap"] = mean_bootstrap_tests(segments, args.baseline, args.bootstrap_samples,
                                                      result["signatures"])
    result["segments"] = {column: {name: [round(v, 6) for v in scores] for name, scores in by_system.items()}
                          for column, by_system in segments.items()}
    write_score_file(args.output, result)
    return 0


@cli_errors
def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["workflow"]:
        return workflow(argv[1:])
    parser = argument_parser("docnmt.score.metricx", __doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, type=Path, help="the MetricX-24 model folder (mT5)")
    parser.add_argument("--tokenizer", type=Path, help="its tokenizer's folder (default: the checkpoint's)")
    parser.add_argument("--input", required=True, type=Path,
                        help="JSON lines with source, hypothesis and (unless --qe) reference")
    parser.add_argument("--output", type=Path, help="the lines with prediction added (default: standard output)")
    parser.add_argument("--qe", action="store_true", help="score without the reference (quality estimation)")
    parser.add_argument("--batch-size", type=POSITIVE_INT, default=16)
    parser.add_argument("--max-input-length", type=POSITIVE_INT, default=MAX_INPUT_LENGTH)
    parser.add_argument("--device", help="cpu, cuda or cuda:N (default: cuda if available)")
    parser.add_argument("--dtype", default="float32", choices=DTYPES)
    args = parser.parse_args(argv)
    rows = read_jsonl(args.input, args.qe)
    metric = MetricX(args.checkpoint, args.tokenizer, args.device, args.dtype, args.max_input_length)
    scores = metric.score([r["source"] for r in rows], [r["hypothesis"] for r in rows],
                          None if args.qe else [r["reference"] for r in rows], args.batch_size)
    lines = [json.dumps({**row, "prediction": value}, ensure_ascii=False) + "\n" for row, value in zip(rows, scores)]
    if args.output is None:
        sys.stdout.write("".join(lines))
    else:
        with atomic_write(args.output) as handle:
            handle.write("".join(lines))
    return 0


def _check(config: dict) -> None:
    block = config["metrics"]["metricx"]
    try:
        checkpoint_config(Path(block["checkpoint"]))
        if block.get("tokenizer") and not Path(block["tokenizer"]).is_dir():
            raise InputError(block["tokenizer"], "expected the folder of a MetricX-24 checkpoint's tokenizer")
    except InputError as err:
        raise ValueError(f"config key 'metrics.metricx': {err}") from None


#: The seam's declaration (docnmt.score.metric).
METRIC = Metric(
    name="metricx", module=__name__, order=2, command=("workflow",),
    summary="MetricX-24 (hybrid: with the reference, and as QE without it) from a local checkpoint",
    columns=lambda config: [MODES[m] for m in config["metrics"]["metricx"]["mode"]],
    environment="main", conda="models.yaml", unit="sentence", needs=("source", "reference"),
    higher_is_better=False,
    signature="the checkpoint's folder name and sha256, the mode, input length, dtype, batch size, transformers' and "
              "docnmt's versions",
    enabled=lambda config: bool((config["metrics"].get("metricx") or {}).get("checkpoint")), check=_check,
    options={
        "checkpoint": {"description": "A local MetricX-24 checkpoint folder (an mT5 model as the released "
                                      "google/metricx-24-hybrid-* models are saved: config.json, weights, and its "
                                      "tokenizer unless tokenizer is set); null: no MetricX columns.",
                       "type": ["string", "null"], "default": None},
        "tokenizer": {"description": "The folder of its tokenizer (mT5's; null: the checkpoint's folder).",
                      "type": ["string", "null"], "default": None},
        "mode": {"description": "reference (column MetricX) and/or qe (column MetricX-QE, without the reference): "
                                "the hybrid model's two modes.",
                 "type": "array", "items": {"enum": list(MODES)}, "minItems": 1, "uniqueItems": True,
                 "default": list(MODES)},
        "batch_size": {"description": "Segments per forward pass (batched by length, longest first).",
                       "type": "integer", "minimum": 1, "default": 16},
        "max_input_length": {"description": "Tokens an input is cut at (metricx24's 1536 for the 24 models).",
                             "type": "integer", "minimum": 1, "default": MAX_INPUT_LENGTH},
    },
    arguments=lambda config: ["--dtype", config["decode"]["dtype"]],
    note="MetricX, MetricX-QE: the mean MetricX-24 segment score in [0, 25] with the reference and without it (QE), "
         "lower being better (docnmt.score.metricx, as metricx24.predict scores); significance: paired bootstrap of "
         "the mean, as for COMET. Test set only.",
    digits=2, gpu=True, threads=2, mem_mb=16000, runtime=(30, 240))


if __name__ == "__main__":
    raise SystemExit(main())

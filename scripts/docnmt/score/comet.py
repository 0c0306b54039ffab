"""Learned metrics of the COMET family from local checkpoints: COMET, Doc-COMET and reference-free QE (CometKiwi).

Runs in unbabel-comet's environment (``make comet``: ``.venv-comet``; ``envs/comet.yaml`` with ``--sdm conda``):
its pins conflict with the project's. Nothing is downloaded: ``HF_HUB_OFFLINE`` and ``TRANSFORMERS_OFFLINE`` are
set, and every checkpoint is a local folder as COMET saves it (a model hub's snapshot of ``Unbabel/wmt22-comet-da``
is one)::

    FOLDER/checkpoints/model.ckpt
    FOLDER/hparams.yaml              # class_identifier, pretrained_model: the encoder
    ENCODER/                         # pretrained_model: a local folder with the encoder's config and tokenizer

``hparams.yaml`` is read as the model's hyper-parameters (unbabel-comet's ``reload_hparams``), so a downloaded
checkpoint whose ``pretrained_model`` names a hub model (``xlm-roberta-large``) is pointed at a local folder by
editing that one key; where it is not a local folder, the error says so.

What each checkpoint scores (:func:`describe`):

- a reference-based model (``regression_metric``: wmt22-comet-da; ``unified_metric`` with ``ref`` among
  ``input_segments``): ``COMET[NAME]``, the mean of the segment scores;
- an ``xcomet_metric`` (XCOMET-XL, XCOMET-XXL): ``XCOMET[NAME]`` with the reference (``XCOMET-QE[NAME]`` where its
  ``input_segments`` lack ``ref``), and the error spans it tags in every hypothesis (text, start, end, severity and
  confidence, as ``predict`` gives them in ``metadata.error_spans``), written per segment with ``--error-spans``;
- a reference-free model (``referenceless_regression_metric``; ``unified_metric`` without ``ref``:
  wmt22-cometkiwi-da): ``QE[NAME]``, from source and hypothesis only;
- where the model supports unbabel-comet's ``enable_context`` (regression models with average pooling) also
  ``Doc-COMET[NAME]`` (or ``Doc-QE[NAME]``): Vernikos et al. (2022)'s document-level extension. Each sentence is
  encoded after the ``context`` previous sentences of its document, joined by the encoder's separator (``</s>``),
  and only the sentence's own tokens are pooled. The source's context is the source; the hypothesis's is the
  reference's previous sentences for a reference-based model (as Vernikos et al.), its own previous sentences
  for QE; the reference's is the reference.

Scores equal ``comet-score``'s on the same files (a test: ``--enable-context`` on files with the context already
joined): the model runs as comet-score runs it, in half precision with its sentence-embedding cache, on stripped
lines. Significance: paired bootstrap resampling of the segment scores' mean against each baseline, with
sacrebleu's resampling (seed 12345 unless ``SACREBLEU_SEED`` says otherwise), confidence interval and p-value.

CLIs::

    python -m docnmt.score.comet score --source test.en --reference test.de --docids test.docids \\
        --system doc-trans=dt.txt ... --checkpoint wmt22-comet-da=/models/wmt22-comet-da [--context 2] \\
        [--baseline sentence-level] --output comet.json --segments comet.segments.jsonl \
        [--error-spans comet.error_spans.jsonl]
    python -m docnmt.score.comet serve --checkpoint /models/wmt22-cometkiwi-da   # JSON lines on stdin/stdout
    python -m docnmt.score.comet env --output comet-env.json                    # where this environment is
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from .. import layout
from ..manual import argument_parser
from ..textio import InputError, atomic_outputs, atomic_write, cli_errors, file_digest
from ..installation import Environment
from .metric import Metric
from .significance import ALPHA, mean_bootstrap_tests
from ..option_ranges import NONNEGATIVE_INT, POSITIVE_INT
from .evalset import add_seam_arguments

#: unbabel-comet's model classes (hparams.yaml's class_identifier) that score without a reference.
REFERENCE_FREE = {"referenceless_regression_metric"}
#: The classes whose enable_context works (with average pooling): Doc-COMET.
CONTEXT_CLASSES = {"regression_metric", "referenceless_regression_metric"}
KNOWN_CLASSES = {"regression_metric", "referenceless_regression_metric", "ranking_metric", "unified_metric",
                 "xcomet_metric"}
#: The classes that tag error spans (``metadata.error_spans``): XCOMET.
SPAN_CLASSES = {"xcomet_metric"}
#: Previous sentences of the document a Doc-COMET segment is encoded after (Vernikos et al. 2022: 2).
DEFAULT_CONTEXT = 2
DEFAULT_BATCH_SIZE = 16


def offline() -> None:
    """Nothing from a model hub: transformers and huggingface-hub read local files only."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"


@dataclass(frozen=True)
class Checkpoint:
    """A local COMET checkpoint folder, checked (:func:`checkpoint`)."""

    name: str
    folder: Path
    ckpt: Path
    hparams_file: Path
    class_identifier: str
    encoder: str
    reference_free: bool
    context: bool

    @property
    def spans(self) -> bool:
        """Whether it tags error spans (XCOMET)."""
        return self.class_identifier in SPAN_CLASSES

    def columns(self, context: int) -> list[str]:
        """Its score columns: COMET[NAME], QE[NAME] or XCOMET[NAME] (XCOMET-QE[NAME]), and the Doc- one where it
        takes context."""
        if self.spans:
            return [f"XCOMET{'-QE' if self.reference_free else ''}[{self.name}]"]
        base = "QE" if self.reference_free else "COMET"
        return [f"{base}[{self.name}]"] + ([f"Doc-{base}[{self.name}]"] if self.context and context > 0 else [])

    @cached_property
    def digest(self) -> str:
        """The first 12 hex digits of the checkpoint file's sha256 (its signature's ``ckpt``): read once (a
        checkpoint may hold gigabytes), whatever the columns signed."""
        return file_digest(self.ckpt)[:12]


def checkpoint(name: str, path: os.PathLike | str) -> Checkpoint:
    """Check a checkpoint folder (or its ``checkpoints/model.ckpt``) before anything loads it: the files COMET
    saves, a known model class, and an encoder in a local folder. Each problem is one :class:`InputError` line."""
    path = Path(path)
    ckpt = path if path.suffix == ".ckpt" else path / "checkpoints" / "model.ckpt"
    folder = ckpt.parents[1]
    if not path.exists():
        raise InputError(path, f"COMET checkpoint {name!r} not found (expected a folder as COMET saves one: "
                               "checkpoints/model.ckpt and hparams.yaml; nothing is downloaded)")
    if not ckpt.is_file():
        raise InputError(ckpt, f"COMET checkpoint {name!r}: expected checkpoints/model.ckpt in {folder}, found none")
    hparams_file = folder / "hparams.yaml"
    if not hparams_file.is_file():
        raise InputError(hparams_file, f"COMET checkpoint {name!r}: expected hparams.yaml beside checkpoints/, "
                                       "found none")
    import yaml

    try:
        hparams = yaml.safe_load(hparams_file.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise InputError(hparams_file, f"expected YAML, found invalid YAML ({err})".replace("\n", " ")) from None
    if not isinstance(hparams, dict) or hparams.get("class_identifier") not in KNOWN_CLASSES:
        found = hparams.get("class_identifier") if isinstance(hparams, dict) else None
        raise InputError(hparams_file, f"expected class_identifier, one of {', '.join(sorted(KNOWN_CLASSES))}, "
                                       f"found {found!r}")
    encoder = str(hparams.get("pretrained_model", ""))
    if not os.path.isdir(encoder):
        raise InputError(hparams_file, f"pretrained_model {encoder!r} is not a local folder, and nothing is "
                                       "downloaded: save that encoder's config and tokenizer with save_pretrained "
                                       "to a folder and set pretrained_model: /absolute/path/to/it in this file")
    cls = hparams["class_identifier"]
    segments = hparams.get("input_segments") or ["mt", "src", "ref"]
    reference_free = cls in REFERENCE_FREE or (cls in ("unified_metric", "xcomet_metric") and "ref" not in segments)
    return Checkpoint(name, folder, ckpt, hparams_file, cls, encoder, reference_free,
                      context=cls in CONTEXT_CLASSES and hparams.get("pool", "avg") == "avg")


def load(point: Checkpoint):
    """The model, loaded offline with hparams.yaml as its hyper-parameters, and set up as comet-score sets it up:
    in evaluation mode, in half precision (on every device), with unbabel-comet's sentence-embedding cache."""
    offline()
    import logging

    from comet import load_from_checkpoint

    # after the import, which sets Lightning's loggers to INFO: no "GPU available" and tips at every predict
    for name in ("pytorch_lightning", "lightning", "lightning.pytorch", "lightning_fabric", "comet"):
        logging.getLogger(name).setLevel(logging.ERROR)

    model = load_from_checkpoint(str(point.ckpt), reload_hparams=True, local_files_only=True)
    model.eval()
    model.half()
    model.set_embedding_cache()
    return model


def predict(model, samples: list[dict], batch_size: int = DEFAULT_BATCH_SIZE, context: bool = False) -> list[float]:
    """Segment scores of ``samples`` (dicts of src, mt and, for a reference-based model, ref), as comet-score's."""
    return predict_spans(model, samples, batch_size, context)[0]


def predict_spans(model, samples: list[dict], batch_size: int = DEFAULT_BATCH_SIZE,
                  context: bool = False) -> tuple[list[float], list[list[dict]] | None]:
    """Segment scores and, for a model that tags them (XCOMET), each segment's error spans (text, start, end,
    severity, confidence: ``metadata.error_spans``; None for other models)."""
    if not samples:
        return [], []
    import torch

    model.use_context = False
    if context:
        model.enable_context()
    gpus = 1 if torch.cuda.is_available() else 0
    output = model.predict(samples, batch_size=batch_size, gpus=gpus, progress_bar=False,
                           accelerator="auto" if gpus else "cpu")
    model.use_context = False
    spans = getattr(output.metadata, "error_spans", None) if "metadata" in output else None
    if spans is not None:
        spans = [[{k: (float(v) if k == "confidence" else v) for k, v in span.items()} for span in segment]
                 for segment in spans]
    return [float(s) for s in output.scores], spans


def with_context(texts: list[str], docids: list[str], n: int, separator: str, context: list[str] | None = None):
    """Each text after the ``n`` previous sentences of its document (from ``context``, default ``texts``), joined by
    `` separator ``: Doc-COMET's input."""
    context = texts if context is None else context
    joined = []
    for i, text in enumerate(texts):
        start = i
        while start > 0 and i - start < n and docids[start - 1] == docids[i]:
            start -= 1
        joined.append(f" {separator} ".join(context[start:i] + [text]))
    return joined


def samples_for(point: Checkpoint, src: list[str], mt: list[str], ref: list[str] | None, docids: list[str] | None,
                context: int, separator: str) -> list[dict]:
    """The model's inputs, each text stripped as comet-score strips its lines; with ``docids`` and ``context`` > 0,
    Doc-COMET's (module docstring)."""
    src, mt = [t.strip() for t in src], [t.strip() for t in mt]
    ref = None if ref is None else [t.strip() for t in ref]
    if docids is not None and context > 0:
        src = with_context(src, docids, context, separator)
        mt = with_context(mt, docids, context, separator, context=mt if point.reference_free else ref)
        ref = None if ref is None else with_context(ref, docids, context, separator)
    if point.reference_free:
        return [{"src": s, "mt": m} for s, m in zip(src, mt)]
    return [{"src": s, "mt": m, "ref": r} for s, m, r in zip(src, mt, ref)]


def signature(point: Checkpoint, column: str, context: int, batch_size: int) -> str:
    from comet import __version__ as comet_version

    from .. import __version__

    return (f"{column.split('[')[0]}|model:{point.name}|class:{point.class_identifier}|"
            f"encoder:{os.path.basename(point.encoder.rstrip('/'))}|ckpt:{point.digest}|"
            f"context:{context if column.startswith('Doc-') else 0}|batch:{batch_size}|"
            f"comet:{comet_version}|docnmt:{__version__}")


# ---- score ---------------------------------------------------------------------------------------
def score_files(args) -> int:
    from . import evalset
    from .evalset import parse_systems, read_documents

    points = [checkpoint(name, path) for name, path in parse_systems(args.checkpoint, "checkpoint").items()]
    data = evalset.load(args.source, args.reference, parse_systems(args.system), args.select)
    src, ref, systems = data.source, data.reference, data.systems
    _, all_docids = read_documents(args.source, args.docids)
    docids = [all_docids[line] for line in data.lines]
    result = {"reference": str(args.reference), "sentences": len(src), "documents": len(set(docids)),
              "context": args.context, "metrics": {}, "columns": [], "signatures": {},
              "systems": {s: {} for s in systems}, "paired_bootstrap": {}, "alpha": ALPHA, "forward_passes": 0}
    segments: dict[str, dict[str, list[float]]] = {}
    spans: dict[str, dict[str, list[list[dict]]]] = {}
    for point in points:
        model = load(point)
        separator = model.encoder.tokenizer.sep_token
        result["metrics"][point.name] = {"checkpoint": str(point.folder), "class": point.class_identifier,
                                         "encoder": point.encoder, "reference_free": point.reference_free,
                                         "columns": point.columns(args.context)}
        for column in point.columns(args.context):
            result["columns"].append(column)
            doc = column.startswith("Doc-")
            result["signatures"][column] = signature(point, column, args.context, args.batch_size)
            for name, hyps in systems.items():
                samples = samples_for(point, src, hyps, None if point.reference_free else ref,
                                      docids if doc else None, args.context, separator)
                scores, found = predict_spans(model, samples, args.batch_size, context=doc)
                result["forward_passes"] += len(samples)
                segments.setdefault(column, {})[name] = scores
                if point.spans:
                    spans.setdefault(column, {})[name] = found
                result["systems"][name][column] = {"score": round(sum(scores) / len(scores), 6),
                                                   "signature": result["signatures"][column]}
            print(f"{column}: " + ", ".join(f"{n} {result['systems'][n][column]['score']:.4f}" for n in systems))
    result["paired_bootstrap"] = mean_bootstrap_tests(segments, args.baseline, args.bootstrap_samples,
                                                      result["signatures"])
    outputs = [args.output, args.segments] + ([args.error_spans] if args.error_spans else [])
    with atomic_outputs(outputs) as (out, seg, *tagged):
        json.dump(result, out, indent=1)
        out.write("\n")
        for column, by_system in segments.items():
            for name, scores in by_system.items():
                seg.write(json.dumps({"metric": column, "system": name, "scores": [round(s, 6) for s in scores]})
                          + "\n")
        for column, by_system in spans.items():
            for name, found in by_system.items():
                tagged[0].write(json.dumps({"metric": column, "system": name, "spans": found}, ensure_ascii=False)
                                + "\n")
    return 0


# ---- serve: scores for the selection of a decode in another environment (docnmt.decode.metric_client) ------
def serve(args, stdin=None, stdout=None) -> int:
    """Load one checkpoint, then answer JSON lines: ``{"src": [...], "mt": [...], "ref": [...] (reference-based)}``
    -> ``{"scores": [...]}`` (a bad request: ``{"error": "..."}``). The first line out says what it loaded.

    With ``--protocol-fds IN,OUT`` (:mod:`docnmt.decode.metric_client`) the requests and answers go through those
    file descriptors, and whatever the libraries print goes to stderr; otherwise through stdin and stdout."""
    if getattr(args, "protocol_fds", None):
        requests, answers = (int(fd) for fd in args.protocol_fds.split(","))
        stdin, stdout = open(requests, encoding="utf-8"), open(answers, "w", encoding="utf-8")
        sys.stdout = sys.stderr  # a stray print cannot reach the answers
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    point = checkpoint(args.name or Path(args.checkpoint).name, args.checkpoint)
    if args.qe and not point.reference_free:
        raise InputError(point.hparams_file, f"COMET checkpoint {point.name!r} is reference-based (class "
                                             f"{point.class_identifier}): QE needs a reference-free model, such as "
                                             "CometKiwi (unified_metric without ref) or COMET-QE")
    model = load(point)
    stdout.write(json.dumps({"ready": True, "name": point.name, "reference_free": point.reference_free,
                             "signature": signature(point, point.columns(0)[0], 0, args.batch_size)}) + "\n")
    stdout.flush()
    for line in stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            src, mt = request["src"], request["mt"]
            ref = None if point.reference_free else request["ref"]
            if len(src) != len(mt) or (ref is not None and len(ref) != len(mt)):
                raise ValueError("src, mt (and ref) must have the same length")
            answer = {"scores": predict(model, samples_for(point, src, mt, ref, None, 0, ""), args.batch_size)}
        except (ValueError, KeyError, TypeError) as err:
            answer = {"error": f"{type(err).__name__}: {err}"}
        stdout.write(json.dumps(answer) + "\n")
        stdout.flush()
    return 0


def describe_env(args) -> int:
    """Where this environment's Python is, and its unbabel-comet: the rules that score in it read this file."""
    import comet
    import torch

    with atomic_write(args.output) as handle:
        json.dump({"python": sys.executable, "unbabel-comet": getattr(comet, "__version__", "?"),
                   "torch": torch.__version__}, handle, indent=1)
        handle.write("\n")
    print(f"COMET environment: {sys.executable} (unbabel-comet {getattr(comet, '__version__', '?')})")
    return 0


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.score.comet", __doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    score = sub.add_parser("score", help="COMET, Doc-COMET and QE of every system, with paired bootstrap")
    add_seam_arguments(score, docids="the document id of each line (Doc-COMET's context, the documents counted)",
                       docids_required=True)
    score.add_argument("--checkpoint", action="append", required=True, metavar="NAME=FOLDER",
                       help="a local COMET checkpoint folder (repeatable)")
    score.add_argument("--context", type=NONNEGATIVE_INT, default=DEFAULT_CONTEXT,
                       help="Doc-COMET: previous sentences of the document (0: no Doc-COMET); default %(default)s")
    score.add_argument("--batch-size", type=POSITIVE_INT, default=DEFAULT_BATCH_SIZE)
    score.add_argument("--segments", required=True, type=Path, help="JSON lines: metric, system, segment scores")
    score.add_argument("--error-spans", type=Path,
                       help="JSON lines: metric, system and each segment's error spans, for the checkpoints that tag "
                            "them (XCOMET; empty where none does)")
    serve_parser = sub.add_parser("serve", help="score requests (JSON lines on stdin) with one checkpoint")
    serve_parser.add_argument("--checkpoint", required=True)
    serve_parser.add_argument("--name")
    serve_parser.add_argument("--qe", action="store_true", help="refuse a reference-based checkpoint")
    serve_parser.add_argument("--batch-size", type=POSITIVE_INT, default=DEFAULT_BATCH_SIZE)
    serve_parser.add_argument("--protocol-fds", metavar="IN,OUT",
                              help="read requests from file descriptor IN and write answers to OUT instead of stdin "
                                   "and stdout (the decode's client, docnmt.decode.metric_client, passes them)")
    env = sub.add_parser("env", help="write where this environment's Python is (JSON)")
    env.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    if args.command == "score":
        return score_files(args)
    return serve(args) if args.command == "serve" else describe_env(args)


LEARNED_NOTE = ("COMET[NAME], QE[NAME]: the mean segment score (x100) of the local checkpoint NAME, reference-based or "
                "reference-free (docnmt.score.comet; equal to comet-score's); Doc-: each sentence encoded after "
                "the previous sentences of its document (Vernikos et al. 2022; the hypothesis after the reference's, "
                "for QE its own); significance: paired bootstrap of the mean segment score, as for BLEU. Test set "
                "only.")


def _columns(config: dict) -> list[str]:
    context = config["metrics"]["context"]
    return [c for name, folder in config["metrics"]["comet"].items() for c in checkpoint(name, folder).columns(context)]


def _arguments(config: dict) -> list[str]:
    settings = config["metrics"]
    return ([arg for name, folder in settings["comet"].items() for arg in ("--checkpoint", f"{name}={folder}")]
            + ["--context", str(settings["context"]), "--batch-size", str(settings["batch_size"])])


#: unbabel-comet's environment: its pins (huggingface-hub<1, ...) conflict with the project's .venv.
ENVIRONMENT = Environment(venv=".venv-comet", make="make comet", requirements="requirements-comet.txt",
                          conda="../envs/comet.yaml", modules=("comet",), python_key="metrics.comet_python")

#: The seam's declaration (docnmt.score.metric): the checkpoints of metrics.comet, in unbabel-comet's environment.
METRIC = Metric(
    name="comet", module=__name__, order=1, command=("score",),
    summary="COMET, Doc-COMET and reference-free QE (CometKiwi) of every local checkpoint in metrics.comet",
    columns=_columns, environment=ENVIRONMENT, unit="sentence",
    needs=("source", "reference", "docids"), higher_is_better=True,
    signature="the metric, checkpoint name, class, encoder, the checkpoint's sha256, context, batch size, "
              "unbabel-comet's and docnmt's versions",
    enabled=lambda config: bool(config["metrics"]["comet"]), arguments=_arguments,
    outputs={"segments": layout.comet_segments, "error_spans": layout.comet_error_spans},
    scale=100.0, digits=2, note=LEARNED_NOTE, gpu=True, threads=2, mem_mb=16000, runtime=(30, 240))


if __name__ == "__main__":
    main()

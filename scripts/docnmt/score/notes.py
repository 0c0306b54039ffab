"""The notes under the tables: how a number was computed where it differs from the paper (precision, backend),
what MBR rows are, which decodes mapped a window's output back to its sentences, which strategies a task skipped."""

from __future__ import annotations

from ..decode.mbr import Settings
from ..decode.variants import parse_system
from ..decode.requests import SERVED_DTYPE


#: The precision of the paper's search and scoring (fairseq's default); any other is named in the notes.
PAPER_DTYPE = "float32"


def dtype_notes(records: dict[str, dict], what: str) -> list[str]:
    """A note naming the dtype of ``what`` wherever it is not float32 (``records``: label -> JSON with "dtype").

    A record without "dtype" comes from a version that did not write it (float16 was then the CUDA default):
    the note says so, since its precision is unknown.
    """
    by_dtype: dict[str, list[str]] = {}
    for label, record in records.items():
        by_dtype.setdefault(record.get("dtype") or "unrecorded", []).append(label)
    notes = []
    for dtype, labels in sorted(by_dtype.items()):
        if dtype == PAPER_DTYPE:
            continue
        where = ", ".join(labels)
        if dtype == SERVED_DTYPE:
            notes.append(f"{what[0].upper()}{what[1:]} in the server's own precision ({where}): an endpoint does not "
                         "report it.")
        elif dtype == "unrecorded":
            notes.append(f"Precision of {what} not recorded ({where}): score files from an older version, which "
                         "used float16 on CUDA; rerun them to record it.")
        else:
            notes.append(f"{what[0].upper()}{what[1:]} in {dtype}, not float32 as the paper ({where}; decode.dtype).")
    return notes


def backend_notes(records: dict[str, dict], what: str) -> list[str]:
    """A note naming the tasks whose ``what`` ran on a backend whose description has a note (Hugging Face models)
    (``records``: label ``task ...`` -> JSON with "backend"; a record without it is the default backend's, fairseq,
    as every record before the transformers backend)."""
    from ..decode.backend import DEFAULT, backend as described

    tasks: dict[str, dict[str, None]] = {}  # backend -> its tasks, in order, each once (with its prompt's template)
    for label, record in records.items():
        name = record.get("backend") or DEFAULT
        if described(name).note is not None:
            template = f" (template {record['template']})" if record.get("template") else ""
            tasks.setdefault(name, {})[label.split()[0] + template] = None
    return [f"{what[0].upper()}{what[1:]} on {backend} ({described(backend).note}) models for {', '.join(names)} "
            f"(task_settings.TASK.models.backend): {described(backend).note_detail}."
            for backend, names in sorted(tasks.items())]


def model_notes(records: dict[str, dict], what: str) -> list[str]:
    """The notes on how ``what`` was computed where it differs from the paper: the dtype, the backend."""
    return dtype_notes(records, what) + backend_notes(records, what)


def realigned_notes(records: dict[str, dict]) -> list[str]:
    """A note for each decode (``records``: label ``task system`` -> sidecar) whose windows' outputs were mapped back
    to their sentences (full-segment, docnmt.decode.realign), with the count of documents that needed it."""
    notes = []
    for label, record in records.items():
        count = record.get("realigned_documents")
        if count:
            guide = ("chrF against the sentence-level first pass and length" if record.get("realigned_guide")
                     == "first pass" else "length")
            notes.append(f"{label}: {count} of {record['documents']} documents had a window whose output had another "
                         f"count of sentences than the window; it was mapped back to them monotonically by {guide} "
                         "(docs/decoding.md, 'Back to sentences').")
    return notes


def mbr_notes(manifest: dict) -> list[str]:
    """What the MBR rows are (their settings and utility), where the tables have any."""
    settings = manifest.get("mbr")
    notes = []
    if settings and any(parse_system(s)[1] == "mbr" for s in manifest["strategies"]):
        described = Settings(**{k: settings[k] for k in ("candidates", "count", "utility", "epsilon", "seed")
                                if k in settings}).describe()
        notes.append(f"\"STRATEGY, MBR\": the strategy with minimum Bayes risk selection (not in the paper): "
                     f"{described}; each kept sentence is the candidate with the highest mean utility against all "
                     "candidates (doc-trans's is the next sentence's context; doc-trans-beam compares whole "
                     "documents). Test set only.")
    qe = manifest.get("qe_rerank")
    if qe and any(parse_system(s)[1] == "qe" for s in manifest["strategies"]):
        described = Settings(count=qe["count"], utility=f"qe:{qe['checkpoint']}").describe()
        notes.append(f"\"STRATEGY, QE reranked\": the strategy with {described} (not in the paper): each kept "
                     "sentence is the candidate with the highest reference-free score given its source (doc-trans's "
                     "is the next sentence's context). Test set only.")
    docmbr = manifest.get("docmbr")
    if docmbr and any(parse_system(s)[1] == "docmbr" for s in manifest["strategies"]):
        notes.append(f"\"pooled, document MBR\": each test document's translation chosen among the strategies' "
                     f"translations of it (docmbr.strategies; never one that reads the reference) by expected MBR-OT "
                     f"utility (Jinnai 2025; not in the paper): sentence utility chrF, solver "
                     f"{docmbr['solver']}, weights {docmbr['weights']}; which strategy won how many documents: table "
                     "docmbr_wins. No CXMI (each document has its own strategy's context). Test set only.")
    return notes


def skipped_notes(manifest: dict) -> list[str]:
    """Per task, the strategies it did not decode and why (a task whose models come from elsewhere may lack one)."""
    return [f"{task}: not decoded (\"-\"): " + "; ".join(f"{s} ({why})" for s, why in spec["skipped"].items()) + "."
            for task, spec in manifest["tasks"].items() if spec.get("skipped")]

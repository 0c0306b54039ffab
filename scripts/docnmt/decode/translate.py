"""Translate raw documents with any strategy: the workflow's tokenizer, BPE, search and detokenizer.

Input (``--input``), and output (``--output``) in the same layout:

- a text file: one sentence per line, one blank line between documents
  (blank lines at the end of the file are ignored; two blank lines in a row
  would make an empty document, which is an error naming the line);
- a folder: one document per file (every regular, non-hidden file, in name
  order), one sentence per line; the output folder gets the same file names;
- a WMT test set (:mod:`docnmt.corpora.testsets`; ``--format``, by default
  from the suffix): WMT XML (``.xml``; its source side, testsuite documents
  included), written back with a ``<hyp system=NAME lang=TGT>`` per document
  (``--system-name``, default ``docnmt-STRATEGY``; the language is the file's
  ``<ref lang>``, else ``--tgt-lang``), a submission that sacrebleu reads; or
  WMT24++ JSONL (``.jsonl``; every row, bad sources included), written back
  with a ``"hypothesis"`` field on each row.

An empty translation (the model ended the sentence at once) is written as an
empty line. In the file layout that line looks like a document boundary, so
their number is printed as a warning; the folder layout has no such
ambiguity.

The text goes through the same steps as the workflow's test sets: Moses
punctuation normalization and tokenization (``--tokenize moses``, or
``none`` for text that is already tokenized), subword-nmt BPE with
``--codes`` (or ``none`` for text that is already segmented), the search
strategy (:mod:`docnmt.decode.strategies`, the same code as
:mod:`docnmt.decode.cli`), BPE removal and Moses detokenization. The
models are fairseq checkpoints with their data folders (dictionaries),
trained by the workflow or elsewhere (``--separator``, ``--k``; check them
with :mod:`docnmt.decode.checks`, which this runs first). ``doc-trans`` is
the default strategy; ``sentence-level`` needs only the sentence-level model,
``2-pass`` needs both (the first pass is translated here), parallel
``doc-trans`` only the document-level model (round 1's contexts are its
own translations without context at beam 1: :mod:`docnmt.decode.fixed_point`),
``cheating`` needs a reference and is not offered.

A Hugging Face seq2seq model (``--backend transformers``: Marian/OPUS-MT,
NLLB, M2M100, mBART-50, each a ``save_pretrained`` folder given as
``--document-model`` or ``--sentence-model``, without a data folder) reads
plain text: its own tokenizer segments it, so there is no Moses or BPE step
(``--tokenize`` and ``--codes`` are refused). ``--src-lang`` and
``--tgt-lang`` are then the model's language codes (e.g. ``eng_Latn`` and
``deu_Latn`` for NLLB), needed only by the models with language tokens.
See ``docs/decoding.md``, "Hugging Face models (the transformers backend)".

A sentence longer than the model's positions (after tokenization and BPE)
is an error naming the input file and line: it is never truncated. Progress
goes to stderr, one line per search batch (requests searched, sentences per
second), and a summary at the end.

With ``--task NAME`` the models and their settings come from a task of the
workflow's config (``config.yaml``, updated by ``--configfile mine.yaml`` as
Snakemake does): a task with ``models:`` gives its checkpoints, data
folders, k, separator, BPE codes and tokenizer; one of the workflow's own
tasks gives the models it trained in ``--workdir``. Options given
explicitly win over the task's.

CLI::

    python -m docnmt.decode.translate --input talk.txt --output talk.de.txt --task mine --configfile mine.yaml
    python -m docnmt.decode.translate --input talk.txt --output talk.de.txt --src-lang en --tgt-lang de \
        --document-model doc.pt --document-data data-bin [--separator '<brk>'] [--k 3] \
        [--sentence-model sent.pt --sentence-data data-bin-sent] [--codes bpe.codes | --codes none] \
        [--tokenize moses | none] [--strategy doc-trans] [--doc-trans-mode sequential] [--beam 12] [--h 12]
    python -m docnmt.decode.translate --backend transformers --input talk.txt --output talk.de.txt \
        --document-model my-doc-model --separator '<brk>' [--src-lang eng_Latn --tgt-lang deu_Latn]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .. import SEP, layout
from ..corpora import testsets
from ..textio import InputError, atomic_outputs, cli_errors, read_lines
from ..preprocess.encode import TextPipeline
from .arguments import add_backend_argument, add_search_arguments, add_template_argument, check_cache_bytes, engine_args_of
from .documents import Document, context_k
from .strategies import DOC_TRANS_MODES, REGISTRY, STRATEGIES, Decoder, models_needed, not_for_backend
from ..manual import argument_parser

# ---- input and output ---------------------------------------------------------
#: --format: the text layouts (a file or a folder), or a test set's format (docnmt.corpora.testsets).
INPUT_FORMATS = ["text", *testsets.FORMATS]


def read_documents(path: Path, fmt: str | None = None, tgt_lang: str | None = None) -> tuple[list, object]:
    """``[(name, sentences, 1-based input lines, file)]`` and the layout: ``file`` or ``folder`` (format text), or
    the test set read (``fmt``, by default from the suffix: .xml, .jsonl), which writes the output in its format
    (``tgt_lang``: the XML's ``<hyp lang>`` where the file has no ``<ref lang>``)."""
    fmt = fmt or testsets.infer_format(path) or "text"
    if fmt != "text":
        testset = testsets.read_for_translation(path, fmt, tgt_lang)
        return testset.sources(), testset
    if not path.exists():
        raise InputError(path, "input not found (expected a text file or a folder of one-document files)")
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith("."))
        if not files:
            raise InputError(path, "expected one-document text files in the folder, found none")
        documents = []
        for file in files:
            lines = read_lines(file)
            if not lines:
                raise InputError(file, "expected a document (one sentence per line), found an empty file")
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    raise InputError(file, "expected a sentence, found an empty line (in a folder, each file holds "
                                           "one document, one sentence per line)", number)
            documents.append((file.name, lines, list(range(1, len(lines) + 1)), file))
        return documents, "folder"
    lines = read_lines(path)
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise InputError(path, "expected sentences to translate, found no text")
    documents, current, numbers = [], [], []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            current.append(line)
            numbers.append(number)
            continue
        if not current:
            raise InputError(path, "expected a sentence, found an empty document (a blank line at the start of the "
                                   "file, or two blank lines in a row; one blank line separates documents)", number)
        documents.append((f"doc-{len(documents) + 1}", current, numbers, path))
        current, numbers = [], []
    documents.append((f"doc-{len(documents) + 1}", current, numbers, path))
    return documents, "file"


def output_paths(output: Path, layout: str, documents) -> list[Path]:
    return [output] if layout == "file" else [output / name for name, *_ in documents]


def write_documents(output: Path, layout, documents, translations: list[list[str]], system: str = "docnmt") -> None:
    """The translations in the input's layout (a test set: its format, the XML's hyps named ``system``)."""
    if not isinstance(layout, str):
        layout.write(output, translations, system=system)
        return
    paths = output_paths(output, layout, documents)
    if layout == "folder":
        output.mkdir(parents=True, exist_ok=True)
    with atomic_outputs(paths) as handles:
        if layout == "file":
            handles[0].write("\n".join("".join(t + "\n" for t in doc) for doc in translations))
        else:
            for handle, doc in zip(handles, translations):
                handle.write("".join(t + "\n" for t in doc))


class Progress:
    """A searcher's progress hook (its ``on_batch``, :class:`docnmt.decode.requests.Counted`): a line to stderr per
    searched batch (requests searched, sentences/s)."""

    def __init__(self, name: str, sentences: int, stream=None):
        # the stream of the call (sys.stderr then, not when this module was imported)
        self._name, self._sentences = name, sentences
        self._stream = sys.stderr if stream is None else stream
        self.searched = self.batches = 0
        self.started = time.perf_counter()

    def __call__(self, requests: int) -> None:
        self.batches += 1
        self.searched += requests
        seconds = time.perf_counter() - self.started
        print(f"{self._name}: batch {self.batches}, {self.searched} requests searched for {self._sentences} "
              f"sentences, {self.searched / max(seconds, 1e-9):.1f} sentences/s", file=self._stream, flush=True)


# ---- a task's models ---------------------------------------------------------------
def task_options() -> tuple[str, ...]:
    """The options a task of the config gives (:func:`task_models`'s keys, with the load options that have flags of
    their own, ``base_url``); given on the command line, they win."""
    from .load_options import flagged_options

    return ("backend", "src_lang", "tgt_lang", "sentence_model", "sentence_data", "document_model", "document_data",
            "k", "separator", "tokenize", "codes", "template", "context", *flagged_options(), "engine_args")



def task_models(task: str, configfile: Path | None = None, workdir: Path = Path(".")) -> dict:
    """The translate options of a task of the workflow's config: models, data folders, k, separator, BPE, tokenizer."""
    from ..config import WORKFLOW_CONFIG, ConfigError, load_workflow

    try:
        config = load_workflow(configfile)
    except ConfigError as err:  # the message names the file where it is about one (config file not found, bad YAML)
        path = configfile or WORKFLOW_CONFIG
        raise InputError(path, str(err).removeprefix(f"{path}: ")) from None
    if task not in config["task_settings"]:
        raise InputError(configfile or "config.yaml", f"unknown task {task!r}; tasks in task_settings: "
                                                       f"{', '.join(sorted(config['task_settings']))}")
    settings = config["task_settings"][task]
    options = {"src_lang": settings["src"], "tgt_lang": settings["tgt"]}
    models = settings.get("models")
    if models is not None:
        from .load_options import flagged_options, models_load_options

        options["backend"] = models["backend"]
        engine = models_load_options(models)
        options.update({key: engine.pop(key) for key in flagged_options() if key in engine})
        options["engine_args"] = engine
        for level in ("sentence", "document"):
            if level in models and "model" in models[level]:  # a served model: its name on the server
                options[f"{level}_model"] = Path(models[level]["model"])
            elif level in models:
                options[f"{level}_model"] = Path(workdir) / models[level]["checkpoint"]
                if "data" in models[level]:
                    options[f"{level}_data"] = Path(workdir) / models[level]["data"]
        codes = models["bpe_codes"]
        options.update(k=models["k"], separator=models["separator"], tokenize=models["tokenize"],
                       codes=codes if codes == "none" else str(Path(workdir) / codes))
        if "language_codes" in models:  # a transformers model with language tokens
            options.update(src_lang=models["language_codes"]["src"], tgt_lang=models["language_codes"]["tgt"])
        if "template" in models:  # a causal LM's prompt
            options["template"] = models["template"]
        options["context"] = models.get("context", "window")
    else:  # the workflow's own models, where it keeps them (docnmt.layout, as the rules)
        for level in ("sentence", "document"):
            options[f"{level}_model"] = Path(workdir) / layout.model_file(task, level)
            options[f"{level}_data"] = Path(workdir) / layout.binarized(task, level)
        options.update(k=config["k"], separator=SEP, tokenize="moses", codes=str(Path(workdir) / layout.bpe_codes(task)))
    return options


# ---- translation -------------------------------------------------------------------
def translate(documents, pipeline: TextPipeline, strategy: str, document_model=None, sentence_model=None,
              k: int = 3, h: int = 12, beam: int = 12, lenpen: float = 1.0, batch_size: int = 64,
              doc_trans_mode: str = "sequential", input_name: str = "input", stream=None,
              max_len: int = 200, context: str = "window", max_tokens: int | None = None,
              cache_bytes: int | None = None, record=None, cad: float | None = None,
              refine: dict | None = None, verify_drafts: bool = True) -> list[list[str]]:
    """Detokenized translations of ``documents`` (``[(name, sentences, input lines, file)]``), in their order;
    ``record``: the decode's :class:`.record.DecodeRecord`, whose journal the searchers keep their chunks in;
    ``cad``: context-aware decoding's alpha (:mod:`.contrastive`; None: the strategy's own search); ``refine``:
    refine's ``draft`` (the strategy that translates it first), ``unit`` and ``rounds``; ``verify_drafts``: a greedy
    search verifies its drafts (:mod:`.verification`)."""
    from .backends import make_searcher

    bpe_docs, line = [], 0
    for name, sentences, numbers, where in documents:
        src = [pipeline.encode(s) for s in sentences]
        for text, number in zip(src, numbers):
            if SEP in text.split():
                raise InputError(where, f"expected a plain sentence, found the separator token {SEP!r}", number)
            for model in (m for m in (document_model, sentence_model) if m is not None):
                tokens = len(model.encode(text, source=True))
                if tokens > model.max_positions:
                    raise InputError(where, f"this sentence has {tokens} tokens after tokenization and BPE, more "
                                            f"than the model's {model.max_positions} positions ({model.checkpoint}); "
                                            "split it: it is never truncated", number)
        bpe_docs.append(Document(name, list(range(line, line + len(src))), src))
        line += len(src)
    total = line

    def searcher(model, name: str, at_beam: int | None = None):
        if model is None:
            return None
        made = make_searcher(model, beam=at_beam or beam, lenpen=lenpen, batch_size=batch_size, max_len=max_len,
                             max_tokens=max_tokens, cache_bytes=cache_bytes, verify_drafts=verify_drafts)
        made.on_batch = Progress(name, total, stream)
        if cad is not None:
            from .contrastive import set_alpha

            set_alpha(made, cad)
        return made if record is None else record.wrap(made)

    k = context_k(context, k, bpe_docs)
    sent_searcher = searcher(sentence_model, "sentence-level model")
    doc_searcher = searcher(document_model, "document-level model")
    if models_needed(strategy, doc_trans_mode, guessed=True) >= {"sentence", "document"}:  # 2-pass
        first = REGISTRY["sentence-level"](Decoder(sent_searcher, k=k, h=h), bpe_docs)
        for doc, hyps in zip(bpe_docs, first):
            doc.first_pass = hyps
    # parallel doc-trans: its round 1's contexts guessed by the document model at beam 1 (docnmt.decode.fixed_point)
    guess = (searcher(document_model, "document-level model, guess", at_beam=1)
             if STRATEGIES[strategy].guesses(doc_trans_mode) and document_model is not None else None)
    refine = refine or {"draft": "full-segment", "unit": "sentence", "rounds": 1}
    if STRATEGIES[strategy].drafted:  # refine: its draft translated first, by its draft strategy
        drafted = REGISTRY[refine["draft"]](Decoder(doc_searcher, k=k, h=h, source_name=input_name), bpe_docs)
        for doc, hyps in zip(bpe_docs, drafted):
            doc.draft = hyps
    decoder = Decoder(doc_searcher or sent_searcher, k=k, h=h, sentence_searcher=sent_searcher,
                      source_name=input_name, doc_trans_mode=doc_trans_mode, guess_searcher=guess,
                      contrastive=cad is not None, refine_unit=refine["unit"], refine_rounds=refine["rounds"])
    out = REGISTRY[strategy](decoder, bpe_docs)
    return [[pipeline.decode(h) for h in doc] for doc in out]


def shared_engine_args(args, described, needed, parser=None) -> dict:
    """The load options of the models: ``--engine-args`` (with ``--base-url`` ...), and, where the levels need two
    model folders of a backend whose engines reserve a share of the device's memory (vLLM's
    ``gpu_memory_utilization``), each engine's share of it (one line on stderr says so)."""
    engine = engine_args_of(args, parser)
    folders = {str(getattr(args, f"{level}_model")) for level in needed}
    option = described.memory_option
    if option is not None and len(folders) > 1:
        engine[option] = getattr(described.functions(), "memory_share")(len(folders), engine.get(option))
        print(f"{len(folders)} {described.name} models in this process: each engine takes {option}="
              f"{engine[option]:.3g}", file=sys.stderr)
    return engine


#: translate's arguments that are its inputs (by checksum in the journal's key) or say nothing of the translations
NOT_SETTINGS = ("input", "output", "journal", "no_journal", "document_model", "sentence_model", "document_data",
                "sentence_data", "codes", "task", "configfile", "workdir", "system_name")


def translation_record(args, models: dict):
    """The translation's record (:class:`.record.DecodeRecord`, as the decode CLI's): journaled at ``--journal``
    (default: the output's path with ``.journal`` added; none with ``--no-journal``) under the key of the input's,
    the models' and the BPE codes' checksums and the settings."""
    from .record import DecodeRecord, settings_of

    inputs = {"input": args.input, "codes": None if args.codes in (None, "none") else args.codes}
    for level in ("sentence", "document"):
        if level in models:
            inputs[f"{level}_model"] = getattr(args, f"{level}_model")
            data = getattr(args, f"{level}_data")
            inputs[f"{level}_data"] = None if data is None else (data, "dict.*.txt")
    template = next((m.template for m in models.values() if m.template is not None), None)
    inputs["template"] = None if template is None else template.path
    if STRATEGIES[args.strategy].drafted:  # refine: its template's file, by checksum
        inputs["refine_template"] = models["document"].refiner.template.path
    settings = settings_of(vars(args), NOT_SETTINGS)
    model = next(iter(models.values()))
    settings.update(device=str(model.device).split(":")[0], dtype=model.dtype)
    path = None if args.no_journal else args.journal or args.output.with_name(args.output.name + ".journal")
    return DecodeRecord.open(args.strategy, inputs, settings, path)


def parse_arguments(argv=None):
    """(parser, arguments): the command line, with a task's models and settings (``--task``) where the command line
    does not give them."""
    parser = argument_parser("docnmt.decode.translate", __doc__.split("\n\n")[0])
    parser.add_argument("--input", required=True, type=Path, help="a text file (blank line between documents), a "
                                                                  "folder of one-document files, or a WMT test set")
    parser.add_argument("--output", required=True, type=Path, help="where the translations go, in the same layout")
    parser.add_argument("--format", choices=INPUT_FORMATS, help="text (a file or folder), wmt-xml, wmt24pp-jsonl or "
                                                                "wmt25-jsonl (default: wmt-xml for .xml; for .jsonl, "
                                                                "wmt25-jsonl where the first row has src_text, else "
                                                                "wmt24pp-jsonl; else text)")
    parser.add_argument("--system-name", help="wmt-xml: the <hyp system> of the output (default: docnmt-STRATEGY)")
    parser.add_argument("--task", help="take the models and their settings from this task of the workflow's config")
    parser.add_argument("--configfile", type=Path, help="with --task: a config over the workflow's config.yaml")
    parser.add_argument("--workdir", type=Path, default=Path("."),
                        help="with --task: the workflow's working directory (relative paths start there)")
    add_backend_argument(parser)
    parser.add_argument("--src-lang", help="the source language (Moses rules); transformers: the model's source "
                                           "language code, where it has language tokens")
    parser.add_argument("--tgt-lang", help="the target language; transformers: the model's target language code")
    add_template_argument(parser)
    parser.add_argument("--strategy", default="doc-trans",
                        choices=[name for name, info in STRATEGIES.items() if not info.reference])
    parser.add_argument("--doc-trans-mode", default="sequential", choices=DOC_TRANS_MODES,
                        help="doc-trans: sequential (default) or parallel (the same translations in fewer, larger "
                             "batches; round 1's contexts guessed by the document model at beam 1)")
    parser.add_argument("--document-model", type=Path,
                        help="the document-level fairseq checkpoint (transformers: model folder)")
    parser.add_argument("--document-data", type=Path, help="fairseq: its data folder (dict.SRC.txt, dict.TGT.txt)")
    parser.add_argument("--sentence-model", type=Path,
                        help="the sentence-level fairseq checkpoint (transformers: model folder)")
    parser.add_argument("--sentence-data", type=Path, help="fairseq: its data folder")
    parser.add_argument("--codes", help="subword-nmt BPE codes, or none for text already segmented (default: none)")
    parser.add_argument("--tokenize", choices=["moses", "none"],
                        help="moses (the workflow's normalization and tokenization, default) or none")
    add_search_arguments(parser)
    from .contrastive import add_arguments as add_cad_argument

    add_cad_argument(parser)
    from .refinement import add_translate_arguments

    add_translate_arguments(parser)
    parser.add_argument("--journal", type=Path,
                        help="the resume journal (default: the output's path with .journal added); a killed run "
                             "rerun the same way resumes from it")
    parser.add_argument("--no-journal", action="store_true", help="write no resume journal (a rerun starts afresh)")
    # What a task can set has no default while parsing (None: not given, however the option was written: --k=2,
    # --k 2, an abbreviation); an option given wins over the task's value, the task's over the default.
    defaults = {key: parser.get_default(key) for key in task_options()}
    parser.set_defaults(**dict.fromkeys(task_options()))
    args = parser.parse_args(argv)
    if args.task is not None:
        for key, value in task_models(args.task, args.configfile, args.workdir).items():
            if getattr(args, key) is None:
                setattr(args, key, value)
    for key, default in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, default)
    return parser, args


@cli_errors
def main(argv=None) -> int:
    parser, args = parse_arguments(argv)
    from .backend import backend

    described = backend(args.backend)
    plain = described.plain_text  # plain text in and out: no Moses, no BPE
    if args.template is not None and not described.prompt_template:
        from .backend import names

        parser.error(f"--template is for {names(lambda other: other.prompt_template, ' or ')} models")
    if args.beam > 1 and not described.can("beam_search"):
        parser.error(f"--beam {args.beam}: {described.lacks(['beam_search'])}: use --beam 1 (greedy)")
    refused = not_for_backend(args.strategy, described.name)
    if refused:
        parser.error(refused)
    from .contrastive import check_args

    check_args(parser, args.strategy, described.name, args.cad)
    check_cache_bytes(parser, args)
    given_text = [f"--{o}" for o in ("tokenize", "codes") if getattr(args, o) not in (None, "none")] if plain else []
    given_data = [] if described.needs_data else \
        [f"--{level}-data" for level in ("sentence", "document") if getattr(args, f"{level}_data")]
    if given_text or given_data:
        parser.error(f"{', '.join(given_text + given_data)}: not for --backend {described.name}, "
                     f"{described.summary}")
    if plain:
        args.tokenize, args.codes = "none", "none"
    args.tokenize = args.tokenize or "moses"
    if not plain:
        for option in ("src_lang", "tgt_lang"):
            if getattr(args, option) is None:
                parser.error(f"--{option.replace('_', '-')} is required (or --task)")

    from ..startup import freeze_heap
    from .backends import check, checked_speculative, load_model

    needed = models_needed(args.strategy, args.doc_trans_mode, guessed=True)
    args.engine_args = engine_args_of(args, parser)  # read by its backend (the journal's key: typed)
    engine, speculative = shared_engine_args(args, described, needed, parser), checked_speculative(parser, args)
    models = {}
    for level in ("sentence", "document"):
        checkpoint, data = getattr(args, f"{level}_model"), getattr(args, f"{level}_data")
        if level in needed and (checkpoint is None or (data is None and described.needs_data)):
            parser.error(f"--strategy {args.strategy} needs --{level}-model"
                         + (f" and --{level}-data" if described.needs_data else ""))
        if level in needed:
            check(args.backend, checkpoint, data, level, args.separator, args.k if level == "document" else None,
                  args.src_lang, args.tgt_lang, template=args.template, engine=engine)
            same = [m for m in models.values() if m.checkpoint == str(checkpoint)]  # one model for both levels
            models[level] = same[0] if same else load_model(
                args.backend, checkpoint, data, device=args.device, dtype=args.dtype, separator=args.separator,
                src_lang=args.src_lang, tgt_lang=args.tgt_lang, template=args.template, engine=engine,
                speculative=speculative)
    if STRATEGIES[args.strategy].drafted:  # refine: its template loaded now: one line naming the file where it lacks a slot
        models["document"].refine_template = args.refine_template
        models["document"].refiner  # noqa: B018
    freeze_heap(argv)
    documents, layout = read_documents(args.input, args.format, args.tgt_lang)
    pipeline = TextPipeline(args.src_lang or "", args.tgt_lang or "", args.tokenize, args.codes)
    record = translation_record(args, models)
    started = time.perf_counter()
    translations = translate(documents, pipeline, args.strategy, models.get("document"), models.get("sentence"),
                             k=args.k, h=args.h, beam=args.beam, lenpen=args.lenpen, batch_size=args.batch_size,
                             doc_trans_mode=args.doc_trans_mode, input_name=str(args.input), max_len=args.max_len_b,
                             context=args.context, max_tokens=args.max_tokens, cache_bytes=args.cache_bytes,
                             record=record, cad=args.cad,
                             refine={"draft": args.refine_draft, "unit": args.refine_unit, "rounds": args.refine_rounds},
                             verify_drafts=not args.no_verify_drafts)
    seconds = time.perf_counter() - started
    write_documents(args.output, layout, documents, translations, system=args.system_name or f"docnmt-{args.strategy}")
    record.finish()
    empty = sum(not t for doc in translations for t in doc)
    if empty and layout == "file":
        print(f"warning: {empty} empty translations are written as empty lines, which look like document boundaries "
              "in the file layout; translate a folder of one-document files to keep them apart", file=sys.stderr)
    sentences = sum(len(doc[1]) for doc in documents)
    print(f"{args.strategy}: {len(documents)} documents, {sentences} sentences in {seconds:.1f} s "
          f"({sentences / max(seconds, 1e-9):.1f} sentences/s) -> {args.output}")
    return 0


if __name__ == "__main__":
    main()

"""The vllm side of the tests (tests/decode/test_vllm.py, test_openai.py, test_families.py), run in vLLM's
environment (.venv-vllm) as one process for the session (conftest's ``vllm_side_outputs``), so that every engine
pass shares one interpreter and one import of vLLM: a model folder loaded once with the backend vllm, then, on the
given documents, the strategies' translations at beam 1 (a window and the whole document as context), forced
scoring, a beam search's translations and epsilon samples, each with the searcher's cost counters, and the console
scripts on the same engine, and the greedy decodes on an engine with n-gram speculative decoding; then each family's check and greedy translations, one engine after the other; written
as JSON.

    python tests/vllm_side.py --model FOLDER [--plain-model FOLDER] --documents docs.json
        [--family NAME=FOLDER ... --family-documents docs.json] --output vllm.json

With ``--family`` alone (no ``--model``): the families' part only, as the output's ``families``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

#: the engine's options, as the CLIs take them (--engine-args): every load in this process reuses one engine
ENGINE = "gpu_memory_utilization=0.1,max_model_len=512,seed=0"

#: (name in the output, strategy, context, beam) of every decode run here
RUNS = [("sentence-level", "sentence-level", "window", 1), ("doc-trans", "doc-trans", "window", 1),
        ("doc-trans-document", "doc-trans", "document", 1), ("cheating", "cheating", "window", 1),
        ("source-primed", "source-primed", "window", 1), ("sentence-level-beam-3", "sentence-level", "window", 3)]


def decode(model, docs, strategy: str, context: str, beam: int, make_searcher) -> tuple[list[str], dict]:
    from docnmt.decode.documents import context_k
    from docnmt.decode.strategies import REGISTRY, Decoder

    searcher = make_searcher(model, beam=beam, max_len=40)
    started = time.perf_counter()
    out = REGISTRY[strategy](Decoder(searcher, k=context_k(context, 3, docs), h=2, sentence_searcher=searcher,
                                     doc_trans_mode="sequential"), docs)
    counters = {**searcher.prompt_counters(), "forward_calls": searcher.forward_calls,
                "seconds": time.perf_counter() - started}
    return [h for doc in out for h in doc], counters


def decode_run(model, documents: dict, name: str) -> tuple[list[str], dict]:
    """The decode ``name`` of :data:`RUNS` (its strategy, context and beam) with ``model`` on ``documents`` (src,
    docids, ref), as this process runs it: how the tests run the same decode with another backend's model."""
    from docnmt.decode.backends import make_searcher
    from docnmt.decode.documents import group

    (_, strategy, context, beam), = [run for run in RUNS if run[0] == name]
    docs = group(documents["src"], documents["docids"], ref=documents["ref"])
    return decode(model, docs, strategy, context, beam, make_searcher)


def families(folders: dict, documents: dict, where: Path) -> dict:
    """For each family's model folder (``folders``: name -> folder), docnmt-check-model's exit status and the greedy
    translations of sentence-level and doc-trans, one engine at a time (each shut down before the next starts,
    :func:`docnmt.decode.backends.vllm.model.close_engines`), and the check of an architecture vLLM lacks (a copy
    in ``where``)."""
    from docnmt.decode import checks
    from docnmt.decode.backends import load_model
    from docnmt.decode.backends.vllm import model as vllm_model
    from docnmt.decode.backend import backend
    from docnmt.decode.load_options import parse_load_options

    # the engines run eagerly, as from a checkout in a folder with a space (vllm_model.compiles): 2 s an engine after
    # the first instead of 14 s of compiling each; the compiled engine's outputs are the same (test_vllm.py)
    vllm_model.compiles = lambda: False
    result = {}
    for name, folder in folders.items():
        check = checks.main(["--backend", "vllm", "--model", folder, "--src-lang", "en", "--tgt-lang", "de",
                             "--level", "document", "--k", "3", "--engine-args", ENGINE])
        model = load_model("vllm", folder, src_lang="en", tgt_lang="de",
                           engine=parse_load_options(ENGINE, backend("vllm").options, "vllm"))
        result[name] = {"check": check, **{run: decode_run(model, documents, run)[0]
                                           for run in ("sentence-level", "doc-trans")}}
        vllm_model.close_engines()
    result["unknown-architecture"] = unknown_architecture(next(iter(folders.values())), where)
    return result


def exit_status(main, argv: list) -> int:
    """A console script's ``main(argv)`` run to its end: its exit status (a SystemExit's code, one of an error)."""
    try:
        return main(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)


def unknown_architecture(folder: str, where: Path) -> dict:
    """docnmt-check-model --backend vllm on a copy of ``folder`` whose config names an architecture vLLM has no
    implementation of: its exit status and what it printed on stderr."""
    import contextlib
    import io
    import shutil

    from docnmt.decode import checks

    copy = where / "unknown-architecture"
    shutil.copytree(folder, copy)
    config = json.loads((copy / "config.json").read_text(encoding="utf-8"))
    config["architectures"] = ["TinyUnknownForCausalLM"]
    (copy / "config.json").write_text(json.dumps(config), encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = exit_status(checks.main, ["--backend", "vllm", "--model", str(copy), "--src-lang", "en",
                                           "--tgt-lang", "de", "--level", "sentence"])
    return {"status": status, "stderr": err.getvalue()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", help="the model folder of every decode")
    parser.add_argument("--plain-model", help="also: a base model's folder (no chat template), searched at beam 4 "
                                              "with the plain part of the template translate")
    parser.add_argument("--documents", help="the documents of --model's decodes")
    parser.add_argument("--family", action="append", default=[], metavar="NAME=FOLDER",
                        help="then: each family's folder, decoded greedily with sentence-level and doc-trans")
    parser.add_argument("--family-documents", help="the documents of the families' decodes")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    if args.family and not args.family_documents or args.model and not args.documents:
        parser.error("--family needs --family-documents, and --model --documents")
    result = model_outputs(args) if args.model else {}
    if args.family:
        from docnmt.decode.backends.vllm import model as vllm_model

        vllm_model.close_engines()  # one engine at a time: the CPU's memory share is the machine's
        given = json.load(open(args.family_documents, encoding="utf-8"))
        result["families"] = families(dict(item.split("=", 1) for item in args.family), given,
                                      Path(args.output).parent)
    if args.model:
        from docnmt.decode.backends.vllm import model as vllm_model

        vllm_model.close_engines()  # one engine at a time: the CPU's memory share is the machine's
        result["speculative"] = speculative(args.model, json.load(open(args.documents, encoding="utf-8")),
                                            result["decodes"]["sentence-level"]["hypotheses"],
                                            Path(args.output).parent)
    json.dump(result, open(args.output, "w", encoding="utf-8"), ensure_ascii=False, indent=1)


def model_outputs(args) -> dict:
    """Everything the tests read of ``--model`` (and ``--plain-model``) on ``--documents``."""

    from docnmt.decode.backends import load_model, make_searcher
    from docnmt.decode.documents import group
    from docnmt.decode.requests import Request
    from docnmt.decode.backend import backend
    from docnmt.decode.load_options import parse_load_options

    given = json.load(open(args.documents, encoding="utf-8"))
    docs = group(given["src"], given["docids"], ref=given["ref"])
    started = time.perf_counter()
    model = load_model("vllm", args.model, src_lang="en", tgt_lang="de",
                       engine=parse_load_options(ENGINE, backend("vllm").options, "vllm"))
    result = {"start_seconds": time.perf_counter() - started, "device": model.device, "dtype": model.dtype,
              "decodes": {}}
    for name, strategy, context, beam in RUNS:
        hyps, counters = decode(model, docs, strategy, context, beam, make_searcher)
        result["decodes"][name] = {"hypotheses": hyps, "counters": counters}
    searcher = make_searcher(model, beam=1, max_len=40)
    requests = [Request(model.encode(s, source=True)) for s in given["src"]]
    targets = [model.encode(t, source=True) for t in given["ref"]]
    result["forced"] = [s.logprob for s in searcher.score_forced(requests, targets)]
    result["pairs"] = [s.logprob for s in model.score(given["pairs"]["src"], given["pairs"]["tgt"])]
    samples = [searcher.sample(requests[0], 4, 0.02, 7), searcher.sample(requests[0], 4, 0.02, 7),
               searcher.sample(requests[0], 4, 0.999, 7)]
    result["samples"] = [[model.decode(h.tokens) for h in drawn] for drawn in samples]
    beam = make_searcher(model, beam=4, max_len=30)
    nbest = beam.search(requests[:6])
    result["beam_4"] = {"nbest": [[model.decode(h.tokens) for h in hyps] for hyps in nbest],
                        "lengths": [[len(h.tokens) for h in hyps] for hyps in nbest],
                        "tokens_generated": beam.tokens_generated}
    # the paper's beam, whose steps ask for 36 log-probs (two end tokens), more than vLLM's default cap of 20
    result["beam_12"] = [[(model.decode(h.tokens), h.score) for h in hyps]
                         for hyps in make_searcher(model, beam=12, max_len=20).search(requests[:2])]
    result["clis"] = clis(args.model, given, Path(args.output).parent)
    with_drafts(docs, result["decodes"]["sentence-level"]["hypotheses"])
    result["refine"] = decode(model, docs, "refine", "window", 1, make_searcher)[0]
    if args.plain_model:  # a base model's plain template: its answers end at the template's end text
        from docnmt.decode.backends.vllm import model as vllm_model

        vllm_model.close_engines()  # one engine at a time: the CPU's memory share is the machine's
        plain = load_model("vllm", args.plain_model, src_lang="en", tgt_lang="de", template="translate",
                           engine=parse_load_options(ENGINE, backend("vllm").options, "vllm"))
        asked = [Request(plain.encode(s, source=True)) for s in given["src"][:4]]
        result["plain_beam_4"] = [[(plain.decode(h.tokens), h.score, h.complete) for h in hyps]
                                  for hyps in make_searcher(plain, beam=4, max_len=30).search(asked)]
    return result


def with_drafts(docs, drafts: list[str]) -> None:
    """``docs`` with ``drafts`` (one per sentence, in order) as their refine drafts."""
    flat = iter(drafts)
    for doc in docs:
        doc.draft = [next(flat) for _ in doc.src]


def speculative(folder: str, documents: dict, drafts: list[str], where: Path) -> dict:
    """decode.speculative: ngram: the model on an engine with vLLM's n-gram speculative decoding: the greedy decodes
    of :data:`RUNS` and refine over ``drafts`` (the sentence-level translations), and what epsilon sampling says
    there (vLLM runs no logits processor under speculative decoding), and docnmt-translate --speculative ngram on
    the talks of :func:`clis` (in ``where``) with the same engine. Started last: an engine after it in the same
    process does not start."""
    from docnmt.decode import translate
    from docnmt.decode.backends import load_model, make_searcher
    from docnmt.decode.backend import backend
    from docnmt.decode.documents import group
    from docnmt.decode.load_options import parse_load_options
    from docnmt.decode.requests import Request

    docs = group(documents["src"], documents["docids"], ref=documents["ref"])
    with_drafts(docs, drafts)
    spec = load_model("vllm", folder, src_lang="en", tgt_lang="de",
                      engine=parse_load_options(ENGINE, backend("vllm").options, "vllm"), speculative="ngram")
    out = {"decodes": {name: decode(spec, docs, strategy, context, beam, make_searcher)[0]
                       for name, strategy, context, beam in RUNS if beam == 1},
           "refine": decode(spec, docs, "refine", "window", 1, make_searcher)[0]}
    try:
        make_searcher(spec, beam=1, max_len=40).sample(Request(spec.encode(docs[0].src[0], source=True)), 2, 0.02, 7)
        out["sample"] = "drawn"
    except ValueError as err:
        out["sample"] = str(err)
    out["translate"] = translate.main(["--backend", "vllm", "--strategy", "doc-trans", "--sentence-model", folder,
                                       "--document-model", folder, "--src-lang", "en", "--tgt-lang", "de",
                                       "--engine-args", ENGINE, "--beam", "1", "--input", str(where / "talk.en"),
                                       "--output", str(where / "talk-speculative.de"), "--speculative", "ngram"])
    out["translated"] = (where / "talk-speculative.de").read_text(encoding="utf-8")
    return out


def clis(model: str, given: dict, folder: Path) -> dict:
    """The console scripts on the model, called in this process with the engine options of the model loaded above
    (--engine-args), so that they reuse its engine (docnmt.decode.backends.vllm.model.ENGINES): each one's exit
    status and what it wrote."""
    from docnmt.decode import checks, cli, translate
    from docnmt.score import cxmi, perplexity

    for name in ("src", "ref", "docids"):
        (folder / f"test.{name}").write_text("\n".join(given[name]) + "\n", encoding="utf-8")
    files = {name: str(folder / f"test.{name}") for name in ("src", "ref", "docids")}
    (folder / "talk.en").write_text("\n".join(given["src"][:4]) + "\n\n" + "\n".join(given["src"][4:7]) + "\n",
                                    encoding="utf-8")
    common = ["--backend", "vllm", "--model", model, "--src-lang", "en", "--tgt-lang", "de", "--engine-args", ENGINE]
    out = {
        "check": checks.main([*common, "--level", "document", "--k", "3", "--sample", files["src"],
                              "--output", str(folder / "check.json")]),
        "decode": cli.main(["--strategy", "doc-trans", *common, "--src", files["src"], "--docids", files["docids"],
                            "--beam", "1", "--output-bpe", str(folder / "dt.bpe"), "--output", str(folder / "dt.txt"),
                            "--sidecar", str(folder / "dt.json")]),
        "perplexity": perplexity.main([*common, "--level", "document", "--src", files["src"], "--docids",
                                       files["docids"], "--system", f"reference={files['ref']}",
                                       "--output", str(folder / "ppl.json")]),
        "cxmi": cxmi.main([*common, "--src", files["src"], "--ref", files["ref"], "--docids", files["docids"],
                           "--output", str(folder / "cxmi.json"), "--sentences", str(folder / "cxmi.tsv")]),
        "translate": translate.main(["--backend", "vllm", "--strategy", "doc-trans", "--sentence-model", model,
                                     "--document-model", model, "--src-lang", "en", "--tgt-lang", "de",
                                     "--engine-args", ENGINE, "--beam", "1", "--input", str(folder / "talk.en"),
                                     "--output", str(folder / "talk.de")]),
    }
    out["decoded"] = (folder / "dt.txt").read_text(encoding="utf-8").splitlines()
    out["translated"] = (folder / "talk.de").read_text(encoding="utf-8")
    out["perplexity_json"] = json.loads((folder / "ppl.json").read_text(encoding="utf-8"))
    out["cxmi_json"] = json.loads((folder / "cxmi.json").read_text(encoding="utf-8"))
    return out


if __name__ == "__main__":
    main()

"""Context-aware (contrastive) decoding (docnmt.decode.contrastive): which requests carry a contrast and what it is
(on the fake model, no training), and on each backend that has the capability (fairseq, transformers, causal-lm):
alpha 0 gives the strategy's own output byte for byte, and a hypothesis' score under alpha is the combination of
the two sides' forced scores, (1 + alpha) log p(y|x,c) - alpha log p(y|x), through its beam's reorderings."""

import pytest

from fakemodel import FakeModel, RecordingSearcher
from docnmt.decode import contrastive
from docnmt.decode.requests import request_tokens
from docnmt.decode.strategies import REGISTRY, Decoder

from test_strategy_requests import SOURCES, documents

#: The module's fixtures that train a model (conftest gives their tests the tier ``trains``).
TRAINING_FIXTURES = {"marian", "llama"}


def requests_of(strategy: str, contrastive_on: bool = True, **settings):
    searcher = RecordingSearcher(FakeModel())
    dec = Decoder(searcher, k=3, h=2, contrastive=contrastive_on, **settings)
    REGISTRY[strategy](dec, documents(first_pass=[[s.upper() for s in src] for src in SOURCES]))
    return [r for call in searcher.calls for r in call], searcher


@pytest.mark.parametrize("strategy", ["doc-trans", "2-pass", "cheating", "doc-trans-beam"])
def test_every_request_with_a_context_carries_the_current_sentence_alone(strategy):
    requests, searcher = requests_of(strategy)
    model = searcher.model
    for request in requests:
        window = model.sentences(request.source)
        if len(window) == 1 and not request.prefix:  # a document's first sentence: nothing to contrast
            assert request.contrast is None
            continue
        assert request.contrast is not None
        assert model.sentences(request.contrast.source) == window[-1:] and list(request.contrast.prefix) == []
        assert request.contrast.line == request.line
    assert any(r.contrast is not None for r in requests) and any(r.contrast is None for r in requests)
    plain, _ = requests_of(strategy, contrastive_on=False)
    assert all(r.contrast is None for r in plain)
    assert [(list(a.source), list(a.prefix)) for a in plain] == [(list(b.source), list(b.prefix)) for b in requests]


def test_a_requests_contrast_is_part_of_what_its_search_depends_on():
    requests, _ = requests_of("cheating")
    with_contrast = next(r for r in requests if r.contrast is not None)
    from dataclasses import replace

    assert request_tokens(with_contrast) != request_tokens(replace(with_contrast, contrast=None))
    assert request_tokens(with_contrast)[3:] == request_tokens(with_contrast.contrast)


def test_cad_applies_to_the_strategies_with_a_target_context_only():
    assert contrastive.contrastive_strategies() == ["2-pass", "doc-trans", "cheating", "doc-trans-beam",
                                                    "source-primed"]
    assert contrastive.refusal("doc-trans") is None
    assert contrastive.refusal("last-sentence").startswith("last-sentence decodes without a target context")


# ---- each backend ----------------------------------------------------------------------------------------------
def cad_search(searcher, requests, alpha):
    contrastive.set_alpha(searcher, alpha)
    return searcher.search(requests)


def combined_matches_forced_scores(searcher, requests, alpha, tolerance=2e-3, limit=None):
    """Each CAD hypothesis' log-prob (its combined step scores summed) against the two sides' forced scores (the
    hypotheses that ended before ``limit`` tokens: forced scoring scores an end the others do not have)."""
    found = cad_search(searcher, requests, alpha)
    checked = 0
    for request, hyps in zip(requests, found):
        for hyp in hyps[:3]:
            if limit is not None and len(hyp.tokens) >= limit - 1:
                continue
            checked += 1
            with_context = searcher.score_forced([request], [hyp.tokens])[0].logprob
            alone = searcher.score_forced([request.contrast], [hyp.tokens])[0].logprob
            assert hyp.logprob == pytest.approx((1 + alpha) * with_context - alpha * alone, abs=tolerance)
    assert checked >= len(requests)
    return found


def contrasted(requests):
    return [r for r in requests if r.contrast is not None]


@pytest.mark.demo
def test_fairseq_alpha_zero_is_the_strategy_and_alpha_combines_the_two_sides(demo_models):
    from docnmt.decode.backends.fairseq.model import Model
    from docnmt.decode.backends.fairseq.search import Searcher
    from docnmt.decode.documents import group
    from docnmt.textio import read_lines

    w = demo_models
    model = Model(w / "results/demo/models/document/checkpoint_best.pt", w / "data/demo/bin/document")
    docs = group(read_lines(w / "data/demo/bpe/test.en"), read_lines(w / "data/demo/corpus/test.docids"),
                 read_lines(w / "data/demo/bpe/test.de"))[:8]
    for strategy in ("cheating", "doc-trans"):
        base = REGISTRY[strategy](Decoder(Searcher(model, beam=4), k=3, h=4), docs)
        searcher = Searcher(model, beam=4)
        contrastive.set_alpha(searcher, 0.0)
        assert REGISTRY[strategy](Decoder(searcher, k=3, h=4, contrastive=True), docs) == base
    searcher = Searcher(model, beam=4)
    dec = Decoder(searcher, k=3, h=4, contrastive=True)
    requests = contrasted([dec.request(d.src[max(0, i - 2):i + 1], d.ref[max(0, i - 2):i]) for d in docs
                           for i in range(len(d))])[:12]
    combined_matches_forced_scores(searcher, requests, 1.0)


@pytest.fixture(scope="module")
def marian(hf_marian):
    from docnmt.decode.backends.transformers.model import HFModel

    return HFModel(hf_marian, separator="<brk>", device="cpu")


def test_transformers_alpha_zero_is_the_strategy_and_alpha_combines_the_two_sides(marian):
    import hfmodel

    from docnmt.decode.backends.transformers.model import HFSearcher

    from docnmt.decode.documents import group

    raw = hfmodel.demo_documents()[1][:3]
    docs = group([s for d in raw for s in d.src], [d.docid for d in raw for _ in d.src],
                 ref=[s for d in raw for s in d.tgt])
    base = REGISTRY["cheating"](Decoder(HFSearcher(marian, beam=3, max_new_tokens=40), k=3, h=3), docs)
    searcher = HFSearcher(marian, beam=3, max_new_tokens=40)
    contrastive.set_alpha(searcher, 0.0)
    assert REGISTRY["cheating"](Decoder(searcher, k=3, h=3, contrastive=True), docs) == base
    dec = Decoder(HFSearcher(marian, beam=3, max_new_tokens=40), k=3, h=3, contrastive=True)
    requests = contrasted([dec.request(d.src[max(0, i - 2):i + 1], d.ref[max(0, i - 2):i]) for d in docs
                           for i in range(len(d))])[:6]
    combined_matches_forced_scores(dec.searcher, requests, 0.5, limit=40)


@pytest.fixture(scope="module")
def llama(tiny_llama):
    from docnmt.decode.backends import load_model

    return load_model("causal-lm", tiny_llama, src_lang="en", tgt_lang="de", device="cpu")


@pytest.mark.parametrize("beam", [1, 3])
def test_causal_lm_alpha_zero_is_the_strategy_and_alpha_changes_the_search(llama, beam):
    import llmmodel

    from docnmt.decode.backends.causal_lm.model import CausalLMSearcher
    from docnmt.decode.documents import group

    _, raw = llmmodel.demo_documents()
    docs = group([s for d in raw[:2] for s in d.src][:8], [d.docid for d in raw[:2] for _ in d.src][:8],
                 ref=[t for d in raw[:2] for t in d.tgt][:8])
    base = REGISTRY["cheating"](Decoder(CausalLMSearcher(llama, beam=beam, max_new_tokens=30), k=3, h=3), docs)
    searcher = CausalLMSearcher(llama, beam=beam, max_new_tokens=30)
    contrastive.set_alpha(searcher, 0.0)
    assert REGISTRY["cheating"](Decoder(searcher, k=3, h=3, contrastive=True), docs) == base
    strong = CausalLMSearcher(llama, beam=beam, max_new_tokens=30)
    contrastive.set_alpha(strong, 4.0)
    dec = Decoder(strong, k=3, h=3, contrastive=True)
    out = REGISTRY["cheating"](dec, docs)
    assert [len(o) for o in out] == [len(d) for d in docs]
    assert out != base, "a strong contrast changes some translation"


@pytest.mark.demo
def test_the_decoding_pages_command_runs_as_written_and_records_alpha(demo_models, tmp_path):
    """docs/decoding.md's `docnmt-decode ... --cad 0.5`, as written, on the demo's first two test documents."""
    import json
    import subprocess

    from helpers import REPO, shell_commands, tool_env
    from docnmt.textio import read_lines

    (command,) = shell_commands(REPO / "docs/decoding.md", "## Context-aware decoding")
    assert "--cad 0.5" in command, command
    w = demo_models
    (tmp_path / "doc").mkdir()
    (tmp_path / "doc/checkpoint_best.pt").symlink_to(w / "results/demo/models/document/checkpoint_best.pt")
    (tmp_path / "doc-bin").symlink_to(w / "data/demo/bin/document", target_is_directory=True)
    ids = read_lines(w / "data/demo/corpus/test.docids")
    first_two = list(dict.fromkeys(ids))[:2]
    keep = [n for n, docid in enumerate(ids) if docid in first_two]
    src = read_lines(w / "data/demo/bpe/test.en")
    (tmp_path / "test.bpe.en").write_text("".join(src[n] + "\n" for n in keep), encoding="utf-8")
    (tmp_path / "test.docids").write_text("".join(ids[n] + "\n" for n in keep), encoding="utf-8")
    result = subprocess.run(command, shell=True, cwd=tmp_path, env=tool_env(), capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    sidecar = json.loads((tmp_path / "hyp.json").read_text())
    assert sidecar["cad"] == {"alpha": 0.5} and "|cad:0.5|" in sidecar["signature"]
    assert len(read_lines(tmp_path / "hyp.txt")) == len(keep)
    refused = subprocess.run(command.replace("--strategy doc-trans", "--strategy last-sentence"), shell=True,
                             cwd=tmp_path, env=tool_env(), capture_output=True, text=True, timeout=600)
    assert refused.returncode == 2 and "--cad: last-sentence decodes without a target context" in refused.stderr


@pytest.mark.demo
def test_docnmt_translate_with_cad_zero_is_its_own_translation_and_with_alpha_runs(demo_models, tmp_path):
    """docnmt-translate on raw text with the demo's models (--task demo): --cad 0 writes the translation without it,
    byte for byte; --cad 0.5 runs to the end."""
    import subprocess

    from helpers import tool_env
    from docnmt.textio import read_lines

    lines = read_lines(demo_models / "data/demo/corpus/test.en")[:9]
    source = tmp_path / "in.txt"
    source.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    outputs = {}
    for name, extra in (("plain", []), ("zero", ["--cad", "0"]), ("half", ["--cad", "0.5"])):
        outputs[name] = tmp_path / f"{name}.txt"
        result = subprocess.run(["docnmt-translate", "--task", "demo", "--workdir", str(demo_models), "--input",
                                 str(source), "--output", str(outputs[name]), "--beam", "4", "--no-journal", *extra],
                                cwd=tmp_path, env=tool_env(), capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stderr[-2000:]
    assert outputs["zero"].read_bytes() == outputs["plain"].read_bytes()
    assert len(read_lines(outputs["half"])) == len(lines)

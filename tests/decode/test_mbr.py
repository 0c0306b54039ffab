"""MBR selection (docnmt.decode.mbr) and epsilon sampling (docnmt.decode.sampling): the choice is the brute-force
argmax of the mean sacrebleu score, on hand-made lists and on the tiny Marian model's candidates for the demo's
test documents; one candidate is the strategy itself; the samples are reproducible under their seed; bad
settings are clear errors."""

import subprocess
import sys

import pytest
from sacrebleu.metrics import CHRF

from helpers import tool_env
from docnmt.decode import mbr
from docnmt.decode.selection import Selector
from docnmt.decode.requests import Request
from docnmt.decode.strategies import REGISTRY, Decoder

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("fastchrf")

SACREBLEU = {"chrf": CHRF(), "chrf++": CHRF(word_order=2)}
LISTS = [
    ["Der Hund bellt .", "Der Hund bellt laut .", "Ein Hund bellt .", "Die Katze schläft ."],
    ["Sie sagt es ihm .", "Sie sagt es ihm .", "Er sagt es ihr .", "", "Sie sagt ihm das ."],
    ["a", "b"],  # a tie: the first wins
    ["Nur einer ."],
    ["Hast du ihn gesehen ?", "Haben Sie ihn gesehen ?", "Haben Sie es gesehen ?", "Hast du es gesehen ?"],
]


def brute_force(texts, utility, logprobs=None):
    """argmax_i sum_j w_j sacrebleu(c_i, [c_j]), the first on a tie; w_j = 1/n, or p(c_j) / sum_k p(c_k) from the
    candidates' log-probabilities (a beam's n-best)."""
    import math

    metric = SACREBLEU[utility]
    weights = [1 / len(texts)] * len(texts) if logprobs is None else \
        [math.exp(lp) / sum(math.exp(other) for other in logprobs) for lp in logprobs]
    means = [sum(w * metric.sentence_score(h, [r]).score for w, r in zip(weights, texts)) for h in texts]
    return means.index(max(means)), means


@pytest.mark.parametrize("utility", list(mbr.UTILITIES))
def test_selection_is_the_argmax_of_the_mean_sacrebleu_score_on_small_lists(utility):
    selector = Selector(mbr.Settings(utility=utility))
    for texts in LISTS:
        chosen, means = brute_force(texts, utility)
        assert selector.select(texts) == chosen, (texts, means)
        if len(texts) > 1:
            assert selector.expected(texts) == pytest.approx(means, abs=1e-6)
    assert selector.selections == len(LISTS)
    assert selector.evaluations == sum(len(t) ** 2 for t in LISTS if len(t) > 1) * 2  # select + expected


def test_incomplete_candidates_are_left_out_of_the_selection_and_counted():
    """A causal LM's run-on answers (more lines than asked; chrF's recall favours them as they hold the consensus
    and more) and answers cut at the token limit are not complete: the selection compares the complete ones only,
    as candidates and as pseudo-references, and falls back to all where none is complete."""
    texts = ["Der Zug hatte wieder Verspätung.", "Der Zug hatte wieder Verspätung. Der Zug hatte wieder Verspätung.",
             "Der Zug hatte wieder Verspätung. Leider ist er schon kaputt.",
             "Der Zug hatte wieder Verspätung. Jetzt ist er im Wohnzimmer.", "Der Zug hat wieder Verspätung."]
    complete = [True, False, False, False, True]
    selector = Selector(mbr.Settings())
    assert selector.select(texts) == 2, "chrF's recall weighting picks a run-on answer among all five"
    assert selector.select(texts, complete=complete) == 0
    assert selector.select(texts, complete=[False] * 5) == 2, "none complete: all are compared"
    assert selector.select(texts, complete=[False, False, False, False, True]) == 4, "one complete: it, unscored"
    record = selector.record()
    assert (record["selections"], record["incomplete_left_out"], record["selections_without_complete"]) == (4, 7, 1)
    assert record["utility_evaluations"] == 25 + 4 + 25, "the incomplete are not compared"


def test_a_beams_candidates_weigh_by_their_probability_samples_alike():
    """A beam's n-best holds each candidate once: the expectation weighs each pseudo-reference by its probability
    under the model among the candidates. Samples are drawn by that probability already: their mean."""
    texts = ["Der Zug hatte Verspätung.", "Der Zug kam zu spät.", "Der Zug kam spät.", "Der Bus kam spät."]
    logprobs = [-0.2, -3.0, -2.5, -2.8]
    beam = Selector(mbr.Settings())
    assert beam.select(texts) == 2, "uniform: the consensus of the three improbable candidates"
    assert beam.select(texts, logprobs=logprobs) == brute_force(texts, "chrf", logprobs)[0] == 0
    assert beam.expected(texts, logprobs=logprobs) == pytest.approx(brute_force(texts, "chrf", logprobs)[1], abs=1e-6)
    sampled = Selector(mbr.Settings(candidates="sampling", seed=1))
    assert sampled.select(texts, logprobs=logprobs) == 2, "samples: the mean, whatever their log-probabilities"


@pytest.fixture(scope="module")
def marian(hf_marian):
    from docnmt.decode.backends.transformers.model import HFModel

    return HFModel(hf_marian, separator="<brk>", device="cpu")


@pytest.fixture(scope="module")
def docs():
    """The first three demo test documents, their first five sentences each."""
    import hfmodel
    from docnmt.decode.documents import group

    test = [d for d in hfmodel.demo_documents()[1][:3]]
    src = [s for d in test for s in d.src[:5]]
    return lambda: group(src, [d.docid for d in test for _ in d.src[:5]], [t for d in test for t in d.tgt[:5]])


def searcher(model, beam):
    from docnmt.decode.backends.transformers.model import HFSearcher

    return HFSearcher(model, beam=beam, early_stopping=True, max_new_tokens=60)


def test_fastchrf_equals_sacrebleus_sentence_chrf_on_the_demos_candidates(marian, docs):
    from fastchrf import pairwise_chrf

    requests = [Request(marian.encode(s, source=True)) for d in docs() for s in d.src]
    compared = 0
    for nbest in searcher(marian, 6).search(requests):
        texts = [marian.decode(h.tokens) for h in nbest]
        matrix = pairwise_chrf([texts], [texts])[0]
        for i, h in enumerate(texts):
            for j, r in enumerate(texts):
                assert matrix[i][j] == pytest.approx(SACREBLEU["chrf"].sentence_score(h, [r]).score, abs=1e-6)
                compared += 1
    assert compared == len(requests) * 36 and len(requests) >= 10


def test_a_strategy_with_mbr_keeps_the_brute_force_choice_among_its_beams_candidates(marian, docs):
    """sentence-level and cheating (every context known in advance): each kept sentence is the brute-force MBR
    choice among the n-best of the same search, each candidate weighted by its probability under the model among
    them (a beam's n-best holds each candidate once, whatever its probability)."""
    from docnmt.decode.documents import previous, window
    from docnmt.preprocess.windows import split

    selector = Selector(mbr.Settings(count=4))
    for strategy in ("sentence-level", "cheating"):
        documents = docs()
        out = REGISTRY[strategy](Decoder(searcher(marian, 4), k=3, h=1, mbr=selector), documents)
        plain = Decoder(searcher(marian, 4), k=3, h=1)
        for d, kept in zip(documents, out):
            for i, sentence in enumerate(kept):
                if strategy == "sentence-level":
                    request = Request(marian.encode(d.src[i], source=True))
                else:
                    request = plain.request(window(d, i - 2, i + 1), previous(d.ref, i, 3))
                nbest = plain.searcher.search([request])[0]
                texts = [marian.decode(h.tokens) for h in nbest]
                if strategy == "cheating":  # it keeps the continuation's first segment; sentence-level all of it
                    texts = [split(t)[0] for t in texts]
                chosen = brute_force(texts, "chrf", [h.logprob for h in nbest])[0]
                assert sentence == texts[chosen], (strategy, d.docid, i, texts)
    n = sum(len(d) for d in docs())
    assert selector.selections == 2 * n and selector.evaluations == 2 * n * 16


def test_doc_trans_with_mbr_over_one_candidate_is_doc_trans(marian, docs):
    one = Selector(mbr.Settings(count=1))
    with_mbr = REGISTRY["doc-trans"](Decoder(searcher(marian, 1), k=3, h=1, mbr=one), docs())
    assert with_mbr == REGISTRY["doc-trans"](Decoder(searcher(marian, 1), k=3, h=1), docs())
    assert one.evaluations == 0 and one.selections == sum(len(d) for d in docs())


def test_parallel_doc_trans_with_mbr_reaches_sequential_doc_trans_with_mbr(marian, docs):
    """MBR's choice depends only on the request, so the fixed point is still the sequential result."""
    selector = Selector(mbr.Settings(count=3))
    first = [s for d in REGISTRY["sentence-level"](Decoder(searcher(marian, 3), k=3, h=1), docs()) for s in d]
    sequential = REGISTRY["doc-trans"](Decoder(searcher(marian, 3), k=3, h=1, mbr=selector), docs())
    documents = docs()
    for d in documents:
        d.first_pass = [first[line] for line in d.lines]
    decoder = Decoder(searcher(marian, 3), k=3, h=1, doc_trans_mode="parallel", mbr=selector)
    assert REGISTRY["doc-trans"](decoder, documents) == sequential and decoder.stats.converged


def test_doc_trans_beam_with_mbr_chooses_among_its_document_hypotheses(marian, docs):
    selector = Selector(mbr.Settings(count=2))
    out = REGISTRY["doc-trans-beam"](Decoder(searcher(marian, 2), k=3, h=2, mbr=selector), docs())
    assert [len(o) for o in out] == [len(d) for d in docs()]
    assert selector.selections == 3, "one document-level choice per document"
    h1 = Selector(mbr.Settings(count=2))
    assert REGISTRY["doc-trans-beam"](Decoder(searcher(marian, 2), k=3, h=1, mbr=h1), docs()) == \
        REGISTRY["doc-trans"](Decoder(searcher(marian, 2), k=3, h=1), docs()), "h=1: one document, doc-trans"


def sampled(sampler, requests):
    return [[tuple(h.tokens) for h in nbest] for nbest in sampler.search(requests)]


def while_another_thread_draws(work):
    """``work()``'s value, computed while another thread reseeds torch's global generator and draws from it."""
    import threading

    import torch

    stop = threading.Event()

    def draw() -> None:
        seed = 0
        while not stop.is_set():
            seed += 1
            torch.manual_seed(seed)
            torch.rand(64)

    thread = threading.Thread(target=draw, daemon=True)
    thread.start()
    try:
        return work()
    finally:
        stop.set()
        thread.join()


def test_epsilon_samples_are_reproducible_under_their_seed_whatever_the_batch(marian, docs, toy):
    import torch

    from docnmt.decode.sampling import Sampler
    from docnmt.decode.backends.fairseq.search import Searcher

    _, _, toy_model = toy
    cases = [(searcher(marian, 1), [Request(marian.encode(s, source=True)) for s in docs()[0].src[:3]]),
             (Searcher(toy_model, beam=1), [Request(toy_model.encode("s3 s7 s11", source=True)),
                                            Request(toy_model.encode("s1 s2", source=True),
                                                    toy_model.encode("t2 t1 <sep>", source=False)[:-1])])]
    for base, requests in cases:
        first = sampled(Sampler(base, count=6, epsilon=0.02, seed=1), requests)
        # torch's global generator plays no part: reseeded, or seeded and drawn from by another thread meanwhile
        # (as when a library or a caller's thread draws from it), the samples stay the same
        torch.manual_seed(12345)
        assert first == sampled(Sampler(base, count=6, epsilon=0.02, seed=1), requests)
        assert first == while_another_thread_draws(lambda: sampled(Sampler(base, count=6, epsilon=0.02, seed=1),
                                                                   requests))
        assert first[-1:] == sampled(Sampler(base, count=6, epsilon=0.02, seed=1), requests[-1:]), "batch-independent"
        assert all(len(s) == 6 for s in first)
        others = [sampled(Sampler(base, count=6, epsilon=0.0, seed=seed), requests) for seed in (2, 3)]
        assert any(o != first for o in others), "another seed draws other samples"
        # epsilon near 1 leaves only the most probable token: every sample is the greedy translation
        greedy = [[tuple(nbest[0].tokens)] * 6 for nbest in base.search(requests)]
        assert sampled(Sampler(base, count=6, epsilon=0.999, seed=5), requests) == greedy


@pytest.mark.parametrize("settings,message", [
    ({"count": 0}, "the MBR candidate count must be an integer >= 1, got 0"),
    ({"candidates": "sampling"}, "MBR with sampled candidates needs a seed"),
    ({"utility": "bleurt"}, "the MBR utility must be one of chrf, chrf++ or comet:NAME, got 'bleurt'"),
    ({"candidates": "sampling", "seed": 1, "epsilon": 1.5}, "epsilon must be in [0, 1), got 1.5"),
])
def test_bad_settings_are_clear_errors(settings, message):
    with pytest.raises(mbr.SettingsError) as err:
        mbr.Settings(**settings)
    assert message in str(err.value)


def test_a_utility_that_is_not_installed_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "fastchrf", None)  # import fastchrf raises ImportError
    with pytest.raises(mbr.SettingsError, match=r"needs the package fastchrf, which is not installed \(pip install "
                                                r"fastchrf==0\.2\.1; make setup installs it\)"):
        Selector(mbr.Settings(utility="chrf"))


@pytest.mark.full  # the backends' own environments (.venv-vllm): make test-full makes them
def test_every_backends_own_environment_has_mbrs_utilities():
    """A backend whose decodes run in an environment of their own (vllm's .venv-vllm) runs its MBR rows there: each
    of MBR's utilities imports in it. make demo-llm BACKEND=vllm stopped at its first MBR row, doc-trans+mbr, with
    "the MBR utility chrf needs the package fastchrf": .venv-vllm lacked it."""
    from pathlib import Path

    from docnmt.decode.backend import REGISTRY

    repo = Path(__file__).resolve().parents[2]
    pythons = {repo / REGISTRY[name].environment.venv / "bin/python" for name in REGISTRY
               if REGISTRY[name].environment is not None}
    present = sorted(p for p in pythons if p.exists())
    if not present:
        pytest.skip(f"none of the backends' own environments is made ({', '.join(map(str, sorted(pythons)))})")
    check = ("from docnmt.decode.mbr import UTILITIES\nfrom docnmt.decode.selection import pairwise_function\n"
             "for utility in UTILITIES: print(utility, pairwise_function(utility)(['Der Hund .', 'Ein Hund .'])[0][0])")
    for python in present:
        result = subprocess.run([str(python), "-c", check], capture_output=True, text=True, env=tool_env())
        assert result.returncode == 0, f"{python}: {result.stderr[-2000:]}"
        assert result.stdout.split() == ["chrf", "100.0", "chrf++", "100.0"], result.stdout


@pytest.mark.parametrize("extra,message", [
    (["--mbr-count", "0"], "argument --mbr-count: expected a whole number of at least 1, got '0'"),
    (["--mbr-candidates", "sampling"], "MBR with sampled candidates needs a seed (--mbr-seed)"),
])
def test_the_decode_cli_refuses_bad_mbr_settings_before_loading_anything(tmp_path, extra, message):
    result = subprocess.run(
        [sys.executable, "-m", "docnmt.decode.cli", "--strategy", "doc-trans", "--model", str(tmp_path / "none.pt"),
         "--src", str(tmp_path / "none"), "--docids", str(tmp_path / "none"), "--tgt-lang", "de", "--output-bpe",
         str(tmp_path / "o.bpe"), "--output", str(tmp_path / "o.txt"), "--sidecar", str(tmp_path / "o.json"),
         "--mbr", *extra], capture_output=True, text=True, env=tool_env())
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert not list(tmp_path.glob("o.*"))


def test_the_decode_cli_samples_its_candidates_again_under_the_same_seed(toy, tmp_path):
    """The CLI's MBR over epsilon samples: the same seed gives the same output; the sidecar records the settings,
    the selections and the utility evaluations, and the signature names them."""
    import json

    root, checkpoint, _ = toy
    (tmp_path / "test.src").write_text("s3 s7 s11\ns1 s2\ns5 s9 s4 s8\n", encoding="utf-8")
    (tmp_path / "test.docids").write_text("a\na\nb\n", encoding="utf-8")
    outputs = []
    for run in ("one", "two"):
        result = subprocess.run(
            [sys.executable, "-m", "docnmt.decode.cli", "--strategy", "doc-trans", "--model", str(checkpoint),
             "--data", str(root / "bin"), "--src", str(tmp_path / "test.src"), "--docids", str(tmp_path / "test.docids"),
             "--k", "2", "--tgt-lang", "de", "--mbr", "--mbr-candidates", "sampling", "--mbr-count", "5",
             "--mbr-seed", "3", "--output-bpe", str(tmp_path / f"{run}.bpe"), "--output", str(tmp_path / f"{run}.txt"),
             "--sidecar", str(tmp_path / f"{run}.json")], capture_output=True, text=True, env=tool_env())
        assert result.returncode == 0, result.stderr[-3000:]
        outputs.append((tmp_path / f"{run}.bpe").read_text(encoding="utf-8"))
    assert outputs[0] == outputs[1] and len(outputs[0].splitlines()) == 3
    sidecar = json.loads((tmp_path / "one.json").read_text())
    assert sidecar["mbr"] == {"candidates": "sampling", "count": 5, "utility": "chrf", "epsilon": 0.02, "seed": 3,
                              "selections": 3, "utility_evaluations": 3 * 25,
                              "incomplete_left_out": 0, "selections_without_complete": 0}
    assert "|mbr:sampling-5-chrf-eps0.02-seed3|" in sidecar["signature"]


def test_the_decode_cli_samples_with_its_epsilon(toy, tmp_path):
    """--mbr-epsilon 0.999 leaves only the most probable token to draw: each of the 3 samples is the greedy
    translation, so MBR over them keeps doc-trans's translation with a beam of 1 (the Python API's), where the
    default epsilon's samples give other translations; the sidecar and the signature record the epsilon."""
    import json

    from docnmt.decode import cli as decode_cli
    from docnmt.decode.backends.fairseq.search import Searcher
    from docnmt.decode.documents import group
    from docnmt.decode.sampling import Sampler

    root, checkpoint, model = toy
    src, docids = ["s3 s7 s11", "s1 s2", "s5 s9 s4 s8", "s6 s10", "s12 s0 s13"], ["a", "a", "a", "b", "b"]
    (tmp_path / "test.src").write_text("".join(s + "\n" for s in src), encoding="utf-8")
    (tmp_path / "test.docids").write_text("".join(d + "\n" for d in docids), encoding="utf-8")
    assert decode_cli.main(["--strategy", "doc-trans", "--model", str(checkpoint), "--data", str(root / "bin"),
                            "--src", str(tmp_path / "test.src"), "--docids", str(tmp_path / "test.docids"),
                            "--k", "2", "--max-len-b", "20", "--tgt-lang", "de", "--mbr", "--mbr-candidates",
                            "sampling", "--mbr-count", "3", "--mbr-seed", "4", "--mbr-epsilon", "0.999",
                            "--output-bpe", str(tmp_path / "out.bpe"), "--output", str(tmp_path / "out.txt"),
                            "--sidecar", str(tmp_path / "out.json")]) == 0
    greedy = REGISTRY["doc-trans"](Decoder(Searcher(model, beam=1, max_len_b=20), k=2, h=12), group(src, docids))
    assert (tmp_path / "out.bpe").read_text(encoding="utf-8").splitlines() == [h for doc in greedy for h in doc]
    # the default epsilon (0.02) under the same seed draws other tokens than the greedy ones
    settings = mbr.Settings(candidates="sampling", count=3, seed=4)
    sampled = REGISTRY["doc-trans"](Decoder(Sampler(Searcher(model, beam=3, max_len_b=20), count=3,
                                                    epsilon=settings.epsilon, seed=4), k=2, h=12,
                                            mbr=Selector(settings)), group(src, docids))
    assert settings.epsilon == 0.02 and sampled != greedy
    sidecar = json.loads((tmp_path / "out.json").read_text())
    assert (sidecar["mbr"]["epsilon"], sidecar["mbr"]["count"], sidecar["mbr"]["selections"]) == (0.999, 3, 5)
    assert "|mbr:sampling-3-chrf-eps0.999-seed4|" in sidecar["signature"]

"""Scoring on the trained demo models: perplexity against fairseq, the tables target, and the demo's outcome."""

import json
import math
import os
import re
import subprocess
import sys

import pytest

from helpers import tool_env
from docnmt.corpora.corpus import read_docids
from docnmt.textio import read_lines
from docnmt.score import findings

pytestmark = pytest.mark.workflow

#: The paper's two findings and their margins are docnmt.score.findings's, which `make demo` checks at its end.
CONTEXT_STRATEGIES, BLIND_STRATEGIES, CONTEXT_MARGIN = (findings.CONTEXT_STRATEGIES, findings.BLIND_STRATEGIES,
                                                        findings.CONTEXT_MARGIN)


def fairseq_reference_scores(workdir, level):
    """Per test line: fairseq-generate --score-reference target tokens and base-2 positional scores."""
    out = subprocess.run(
        [sys.executable, "-m", "fairseq_cli.generate", str(workdir / f"data/demo/bin/{level}"),
         "--path", str(workdir / f"results/demo/models/{level}/checkpoint_best.pt"), "--gen-subset", "test",
         "--score-reference", "--batch-size", "64", "--required-batch-size-multiple", "1", "--cpu"],
        capture_output=True, text=True, env=dict(tool_env(), TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1"), check=True,
    ).stdout
    targets = {int(m[1]): m[2].split() for m in re.finditer(r"^T-(\d+)\t(.*)$", out, re.M)}
    scores = {int(m[1]): [float(x) for x in m[2].split()] for m in re.finditer(r"^P-(\d+)\t(.*)$", out, re.M)}
    assert len(scores) == len(targets) > 0
    return targets, scores


def our_scores(workdir, level):
    from docnmt.decode.backends.fairseq.model import Model
    from docnmt.score.perplexity import requests_and_targets
    from docnmt.decode.backends.fairseq.search import Searcher
    from docnmt.decode.strategies import Decoder

    model = Model(workdir / f"results/demo/models/{level}/checkpoint_best.pt", workdir / f"data/demo/bin/{level}")
    searcher = Searcher(model)
    decoder = Decoder(searcher, k=3, h=1)
    src = read_lines(workdir / "data/demo/bpe/test.en")
    ref = read_lines(workdir / "data/demo/bpe/test.de")
    requests, targets = requests_and_targets(decoder, src, read_docids(workdir / "data/demo/corpus/test.docids"),
                                             ref, level, 3)
    return searcher.score_forced(requests, targets)


@pytest.mark.parametrize("level", ["sentence", "document"])
def test_reference_perplexity_equals_fairseq_score_reference(trained_demo, level):
    """Sentence level: whole targets. Document level: fairseq scores each k-window; the tokens after its last
    <sep> (with </s>) are the sentence our definition scores in its reference context."""
    targets, scores = fairseq_reference_scores(trained_demo, level)
    ours = our_scores(trained_demo, level)
    assert len(ours) == len(scores)
    total_fairseq, total_tokens = 0.0, 0
    for line, scored in enumerate(ours):
        tokens = targets[line] + ["</s>"]
        last = max((i for i, t in enumerate(tokens) if t == "<sep>"), default=-1)
        part = scores[line][last + 1:]
        assert scored.tokens == len(part), f"line {line + 1}"
        assert scored.logprob / math.log(2) == pytest.approx(sum(part), abs=2e-3), f"line {line + 1}"
        total_fairseq += sum(part)
        total_tokens += len(part)
    ppl_fairseq = 2 ** (-total_fairseq / total_tokens)
    ppl_ours = math.exp(-sum(s.logprob for s in ours) / sum(s.tokens for s in ours))
    assert ppl_ours == pytest.approx(ppl_fairseq, rel=1e-4)


@pytest.fixture(scope="module")
def scored_demo(trained_demo):
    """The demo as `make demo` runs it (the trained_demo fixture: every table and plot, and its report)."""
    return trained_demo


def test_the_findings_check_prints_each_finding_and_fails_where_one_does_not_show(scored_demo, tmp_path, capsys):
    """`python -m docnmt.score.findings`, which `make demo` ends with: on the demo, both findings hold, a line each
    with its numbers; on a copy whose cheating scores doc-trans's gender F1, finding 2 does not show, the line says
    which check failed, and it exits 1; on a folder without the scores, it names the missing file."""
    from docnmt import layout

    assert findings.main(["--workdir", str(scored_demo)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" (")[0] for line in lines] == ["finding 1", "finding 2"]
    assert all("): holds." in line for line in lines), lines
    assert "cheating " in lines[1] and "CXMI " in lines[1] and "ctxpro formality accuracy " in lines[0], lines
    for task_file in ({layout.score_file("demo", evalset, name) for evalset, name in
                       [("test", "pronouns"), ("test", "cxmi"), ("ctxpro-demo-test", "ctxpro"),
                        ("contrapro", "pronouns"), ("contrapro", "accuracy.sentence"),
                        ("contrapro", "accuracy.document")]}):
        (tmp_path / task_file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / task_file).write_bytes((scored_demo / task_file).read_bytes())
    pronouns = tmp_path / layout.score_file("demo", "test", "pronouns")
    scores = json.loads(pronouns.read_text())
    scores["systems"]["cheating"]["gender"]["f1"] = scores["systems"]["doc-trans"]["gender"]["f1"]
    pronouns.write_text(json.dumps(scores))
    assert findings.main(["--workdir", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert "finding 1 (" in out and "): holds." in out.splitlines()[0]
    assert "finding 2 (" in out and "DOES NOT SHOW: test gender F1 cheating " in out.splitlines()[1]
    assert "does not show the paper's findings" in err
    with pytest.raises(SystemExit):
        findings.main(["--workdir", str(tmp_path / "nothing")])
    assert "expected the demo's score file" in capsys.readouterr().err
    pronouns.write_text('{"systems": ', encoding="utf-8")  # cut short
    with pytest.raises(SystemExit):
        findings.main(["--workdir", str(tmp_path)])
    assert f"{pronouns}: expected the JSON of a score file, found invalid JSON" in capsys.readouterr().err


def test_tables_target_builds_every_table_in_three_formats(scored_demo):
    for name in ("perplexity", "quality", "bleu_ter", "pronoun_f1", "pronoun_classes", "contrapro_accuracy", "decoding_cost",
                 "ctxpro_accuracy", "ctxpro_rules"):
        for ext in ("md", "csv", "tex"):
            for folder in ("results/tables/demo", "results/demo/tables"):  # the configuration's, the task's
                assert (scored_demo / f"{folder}/{name}.{ext}").stat().st_size > 0, f"{folder}/{name}.{ext}"
    bleu = (scored_demo / "results/tables/demo/quality.md").read_text()
    # test: BLEU, chrF++, TER, d-BLEU; ContraPro (BLEU, chrF++, TER): "-", full-segment does not apply there
    assert re.search(r"^\| full-segment \|( [\d.]+\S* \|){4} - \| - \| - \|( [\d.]+\S* \|){3}$", bleu, re.M), bleu
    report = (scored_demo / "report.html").read_text(errors="replace")
    assert "bleu.png" in report and "decoding_cost.csv" in report
    for item in ("cxmi.png", "context_usage.csv", "context_split.csv", "context_sentences.csv", "mbr.png"):
        assert item in report, f"the report lacks {item}"


def test_the_demo_prints_mbr_rows_with_chrf_d_bleu_and_their_cost(scored_demo):
    """`make demo`'s tables: sentence-level, doc-trans and cheating with MBR selection (config mbr), chrF++ and
    d-BLEU in Table 3, the utility evaluations in Table 1; the curve's decodes in the score file only."""
    bleu = (scored_demo / "results/tables/demo/quality.md").read_text()
    first = next(line for line in bleu.splitlines() if line.startswith("| strategy"))
    header = [c.strip() for c in first.strip("|").split("|")]
    assert header[:5] == ["strategy", "demo test BLEU", "demo test chrF++", "demo test TER", "demo test d-BLEU"]
    cost = (scored_demo / "results/tables/demo/decoding_cost.md").read_text()
    cells = {line.split("|")[1].strip(): [c.strip() for c in line.strip().strip("|").split("|")]
             for line in cost.splitlines() if line.startswith("| ")}
    evaluations = cells["strategy"].index("demo utility evaluations")
    for strategy in ("sentence-level", "doc-trans", "cheating"):
        row = re.search(rf"^\| {strategy}, MBR \| ([\d.]+)\S* \| ([\d.]+)\S* \| [\d.]+\S* \| ([\d.]+)\S* \|", bleu, re.M)
        assert row, f"no MBR row for {strategy} in Table 3:\n{bleu}"
        assert int(cells[f"{strategy}, MBR"][evaluations]) > 0, cost
    scores = json.loads((scored_demo / "results/demo/scores/test/bleu_ter.json").read_text())["systems"]
    assert {"doc-trans+mbr-1", "doc-trans+mbr-4"} <= set(scores) and "doc-trans, MBR (4)" not in bleu
    sidecar = json.loads((scored_demo / "results/demo/decode/test/doc-trans+mbr.json").read_text())
    assert sidecar["mbr"]["count"] == 12 and sidecar["beam"] == 12 and sidecar["mbr"]["selections"] >= sidecar["sentences"]


def test_demo_outcome_context_strategies_translate_pronoun_gender_better(scored_demo):
    """Finding 1: the demo's pronouns depend on earlier sentences, so every strategy that sees them wins clearly."""
    result = json.loads((scored_demo / "results/demo/scores/test/pronouns.json").read_text())
    f1 = {name: s["gender"]["f1"] for name, s in result["systems"].items()}
    assert result["systems"]["doc-trans"]["gender"]["reported"], result["systems"]["doc-trans"]["gender"]["examples"]
    assert None not in f1.values(), f"the fork's F1 is NaN (no match at all) somewhere: {f1}"
    finding = findings.context_finding(scored_demo, "demo", "ctxpro-demo-test")
    assert finding.holds, finding.line()
    table = (scored_demo / "results/tables/demo/pronoun_f1.md").read_text()
    assert "Pronoun F1 (demo test, demo ContraPro): rule set blonde-de; German tagger " in table
    assert "; English source tagger " in table


def test_demo_outcome_better_context_gives_better_pronouns(scored_demo):
    """Finding 2: with the reference as context (cheating) a pronoun after an ambiguous noun follows the
    reference's choice of translation; with its own earlier translation (doc-trans) only where that choice matched."""
    result = json.loads((scored_demo / "results/demo/scores/test/pronouns.json").read_text())
    f1 = {name: s["gender"]["f1"] for name, s in result["systems"].items()}
    finding = findings.reference_finding(scored_demo, "demo")
    assert finding.holds, finding.line()
    assert f1["cheating"] > f1["doc-trans"] and result["subsets"]["ambiguous-antecedent"]["sentences"] >= 25, f1
    table = (scored_demo / "results/tables/demo/pronoun_f1.md").read_text()
    assert "demo test, subset ambiguous-antecedent (" in table and "gender F1 sentence-level" in table


def test_demo_outcome_context_strategies_get_the_demos_ctxpro_set_right(scored_demo):
    """The demo's own ctxpro set (its pronouns' gender and its du/Sie register as ctxpro examples, each a document of
    its context and its sentence): every strategy that sees the context beats those that do not, by at least half
    the gap `make demo` measured, as ctxpro counts; cheating has no reference context there and is not decoded."""
    scores = json.loads((scored_demo / "results/demo/scores/ctxpro-demo-test/ctxpro.json").read_text())
    assert scores["set"] == "en-de/demo/test" and scores["examples"] >= 150
    assert "cheating" not in scores["systems"] and "no reference" in scores["skipped"]["cheating"]
    ctxpro_checks = [text for _, text in findings.context_finding(scored_demo, "demo", "ctxpro-demo-test").checks
                     if text.startswith("ctxpro ")]
    assert len(ctxpro_checks) == 3, "all examples, gender, formality"
    for phenomenon, margin in findings.CTXPRO_MARGINS.items():
        accuracy = {name: s["accuracy"] if phenomenon is None else s["phenomena"][phenomenon]["accuracy"]
                    for name, s in scores["systems"].items()}
        for context in CONTEXT_STRATEGIES[:-1]:
            for blind in BLIND_STRATEGIES:
                assert accuracy[context] >= accuracy[blind] + margin, (phenomenon, context, blind, accuracy)
    sidecars = {name: json.loads((scored_demo / f"results/demo/decode/ctxpro-demo-test/{name}.json").read_text())
                for name in ("no-context", "doc-trans")}
    assert sidecars["no-context"]["requests"] == scores["examples"], "no-context translates the examples alone"
    assert sidecars["doc-trans"]["sentences"] == scores["examples"] + scores["context_sentences"]
    table = (scored_demo / "results/tables/demo/ctxpro_accuracy.md").read_text()
    assert re.search(r"^\| cheating \| - \| - \| - \| - \| - \|$", table, re.M), table
    assert "signature ctxpro:en-de/demo/test|md5:a97a6ae30b0f512d622d21e8a66984c1|scorer:ctxpro-0.0.5|" in table
    assert "ctxpro.png" in (scored_demo / "report.html").read_text(errors="replace")


def test_demo_outcome_first_sentence_stays_poor_on_contrapro(scored_demo):
    """ContraPro's antecedent is on the left, next to the pronoun: the first sentence alone is not enough."""
    result = json.loads((scored_demo / "results/demo/scores/contrapro/pronouns.json").read_text())
    f1 = {name: s["gender"]["f1"] for name, s in result["systems"].items()}
    assert findings.first_sentence_stays_blind(f1["first-sentence"], max(f1[blind] for blind in BLIND_STRATEGIES),
                                               f1["doc-trans"]), f1
    assert f1["doc-trans"] >= f1["first-sentence"] + CONTEXT_MARGIN, f1


def test_contrapro_accuracy_document_model_beats_sentence_model(scored_demo):
    """Forced scoring of the demo's contrastive pronoun set (the workflow's accuracy rule): the gender of 'it' is only
    recoverable from the previous sentences, which only the document model sees."""
    acc = {lvl: json.loads((scored_demo / f"results/demo/scores/contrapro/accuracy.{lvl}.json").read_text())
           ["overall"]["accuracy"] for lvl in ("sentence", "document")}
    assert acc["document"] >= findings.CONTRAPRO_ACCURACY, \
        f"document-level accuracy {acc['document']:.3f}: the context model must resolve them"
    assert acc["document"] >= acc["sentence"] + findings.CONTRAPRO_ACCURACY_GAP, f"expected a clear advantage: {acc}"


# ---- context usage (CXMI) -----------------------------------------------------------------------------------


def test_demo_cxmi_is_highest_where_the_antecedent_is_ambiguous(scored_demo):
    result = json.loads((scored_demo / "results/demo/scores/test/cxmi.json").read_text())
    subset = result["subsets"]["ambiguous-antecedent"]
    assert subset["in"]["sentences"] >= 25
    assert subset["in"]["cxmi"] >= subset["rest"]["cxmi"] + findings.CXMI_MARGIN, subset
    assert result["reference"]["cxmi"] > 0 and result["reference_sentence_model"]["cxmi"] is not None
    strategies = result["strategies"]
    assert strategies["sentence-level"]["cxmi"] == 0.0 and strategies["no-context"]["cxmi"] == 0.0
    assert all(entry["exact"] for entry in strategies.values()), "last-sentence recorded its generated context"
    usage = json.loads((scored_demo / "results/demo/scores/test/context_usage.json").read_text())
    assert len(usage["top"]) == 20 and usage["top_sentences"] == 52
    # the sentences that need context most: cheating (the reference as context) beats the context-blind baseline
    split = usage["split"]
    # measured 1.000 against 0.164 (gap 0.84); the margin is about half the gap
    assert split["cheating"]["top"]["gender_f1"] >= split["sentence-level"]["top"]["gender_f1"] + 0.4, split
    table = (scored_demo / "results/tables/demo/context_usage.md").read_text()
    assert table.startswith("**Context usage: CXMI") and "| CXMI of hyp doc-trans |" in table


def fairseq_sequence_scores(workdir, pairs):
    """Natural-log positional scores of (source, target) BPE pairs by fairseq's own reference scoring: the
    SequenceScorer that fairseq-generate --score-reference runs, on a LanguagePairDataset with its collater."""
    import torch
    from fairseq import checkpoint_utils
    from fairseq.data import LanguagePairDataset
    from fairseq.sequence_scorer import SequenceScorer

    data = workdir / "data/demo/bin/document"
    models, _, task = checkpoint_utils.load_model_ensemble_and_task(
        [str(workdir / "results/demo/models/document/checkpoint_best.pt")], arg_overrides={"data": str(data)})
    for model in models:
        model.eval()
    sd, td = task.source_dictionary, task.target_dictionary
    src = [sd.encode_line(s, add_if_not_exist=False, append_eos=True).long() for s, _ in pairs]
    tgt = [td.encode_line(t, add_if_not_exist=False, append_eos=True).long() for _, t in pairs]
    dataset = LanguagePairDataset(src, [len(s) for s in src], sd, tgt, [len(t) for t in tgt], td)
    scorer = SequenceScorer(td)
    out = [None] * len(pairs)
    for start in range(0, len(pairs), 64):
        sample = dataset.collater([dataset[i] for i in range(start, min(start + 64, len(pairs)))])
        with torch.no_grad():
            hypos = scorer.generate(models, sample)
        for index, hypo in zip(sample["id"].tolist(), hypos):
            out[index] = (hypo[0]["tokens"].tolist(), hypo[0]["positional_scores"].tolist(), td.index("<sep>"))
    return out


def test_cxmi_equals_fairseq_score_reference_on_the_same_windows(scored_demo):
    """Every reference P-CXMI of the demo test set from fairseq's reference scoring of the two inputs: the k-window
    with the reference context as target prefix (the tokens after its last <sep>), and the sentence alone."""
    from docnmt.score.sentence_file import read_sentences
    from docnmt.preprocess.windows import make_windows

    os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    src = read_lines(scored_demo / "data/demo/bpe/test.en")
    ref = read_lines(scored_demo / "data/demo/bpe/test.de")
    docids = read_docids(scored_demo / "data/demo/corpus/test.docids")
    pairs = []  # the k=3 windows as the workflow builds them for training, and each sentence alone
    for i, (src_window, ref_window) in enumerate(zip(make_windows(src, docids, 3), make_windows(ref, docids, 3))):
        pairs += [(src_window, ref_window), (src[i], ref[i])]
    scored = fairseq_sequence_scores(scored_demo, pairs)

    def after_last_sep(tokens, scores, sep):
        last = max((n for n, t in enumerate(tokens) if t == sep), default=-1)
        return sum(scores[last + 1:])

    rows = read_sentences(scored_demo / "results/demo/scores/test/cxmi.sentences.tsv")
    assert len(rows) == len(src)
    for row in rows:
        line = row["line"] - 1
        expected = after_last_sep(*scored[2 * line]) - after_last_sep(*scored[2 * line + 1])
        assert row["p_cxmi"] == pytest.approx(expected, abs=1e-4), f"line {row['line']}"


def test_the_demos_mbr_decode_is_the_brute_force_choice_among_the_sentence_models_12_best(scored_demo):
    """sentence-level+mbr on the demo's first two test documents: each line is the candidate of the sentence model's
    12-best with the highest expected sacrebleu sentence chrF against all 12 (subword joins removed), each
    pseudo-reference weighted by its probability renormalized over the 12 (docnmt.decode.mbr)."""
    import math

    from sacrebleu.metrics import CHRF

    from docnmt.decode.backends.fairseq.model import Model
    from docnmt.decode.backends.fairseq.search import Searcher
    from docnmt.decode.requests import Request
    from docnmt.preprocess.bpe import remove_bpe

    ids = read_docids(scored_demo / "data/demo/corpus/test.docids")
    first_two = list(dict.fromkeys(ids))[:2]
    lines = [i for i, d in enumerate(ids) if d in first_two]
    src = read_lines(scored_demo / "data/demo/bpe/test.en")
    kept = read_lines(scored_demo / "results/demo/decode/test/sentence-level+mbr.bpe")
    model = Model(scored_demo / "results/demo/models/sentence/checkpoint_best.pt", scored_demo / "data/demo/bin/sentence")
    chrf = CHRF()
    # every test sentence in one search, as the decode rule does (the same batches, so the same n-best lists)
    nbests = Searcher(model, beam=12).search([Request(model.encode(s, source=True)) for s in src])
    for line in lines:
        nbest = nbests[line]
        texts = [model.decode(h.tokens) for h in nbest]
        words = [remove_bpe(t) for t in texts]
        mass = [math.exp(h.logprob - max(h.logprob for h in nbest)) for h in nbest]
        expected = [sum(m / sum(mass) * chrf.sentence_score(h, [r]).score for m, r in zip(mass, words))
                    for h in words]
        assert kept[line] == texts[expected.index(max(expected))], (line, texts, expected)
    assert len(lines) >= 10

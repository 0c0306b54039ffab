"""A small test set in the workflow's formats for the comparison page's tests: three documents, five systems with
their decode sidecars (sentence-level, last-sentence with its recorded context, 2-pass naming its first pass by
sha256, cheating, refine naming its draft by sha256), XCOMET's error spans, a ContraPro-style set and a ctxpro set with their translations."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

SOURCE = ["Anna bought a lamp.", "It is red.", "She likes it.",
          "Good morning, Mr. Weber.", "Do you have time?", "Your car is outside.",
          "The box was heavy.", "We opened it."]
REFERENCE = ["Anna hat eine Lampe gekauft.", "Sie ist rot.", "Sie mag sie.",
             "Guten Morgen, Herr Weber.", "Haben Sie Zeit?", "Ihr Auto steht draußen.",
             "Die Kiste war schwer.", "Wir haben sie geöffnet."]
DOCIDS = ["d1", "d1", "d1", "d2", "d2", "d2", "d3", "d3"]
OUTPUTS = {
    "sentence-level": ["Anna hat eine Lampe gekauft.", "Es ist rot.", "Sie mag es.",
                       "Guten Morgen, Herr Weber.", "Hast du Zeit?", "Dein Auto ist draußen.",
                       "Die Kiste war schwer.", "Wir haben es geöffnet."],
    "last-sentence": ["Anna hat eine Lampe gekauft.", "Sie ist rot.", "Sie mag sie.",
                      "Guten Morgen, Herr Weber.", "Haben Sie Zeit?", "Dein Auto steht draußen.",
                      "Die Kiste war schwer.", "Wir haben sie geöffnet."],
    "2-pass": ["Anna hat eine Lampe gekauft.", "Sie ist rot.", "Sie mag es.",
               "Guten Morgen, Herr Weber.", "Haben Sie Zeit?", "Ihr Auto ist draußen.",
               "Die Kiste war schwer.", "Wir haben es geöffnet."],
    "cheating": list(REFERENCE),
    # sentence-level's translation refined: its pronouns and register made to agree with the document
    "refine": ["Anna hat eine Lampe gekauft.", "Sie ist rot.", "Sie mag sie.",
               "Guten Morgen, Herr Weber.", "Haben Sie Zeit?", "Ihr Auto ist draußen.",
               "Die Kiste war schwer.", "Wir haben sie geöffnet."],
}
STRATEGIES = {"sentence-level": "sentence-level", "last-sentence": "last-sentence", "2-pass": "2-pass",
              "cheating": "cheating", "refine": "refine"}
#: XCOMET's spans (comet.error_spans.jsonl) on sentence-level's line 2 ("Es ist rot."): "Es", critical
SPAN = {"text": "Es", "confidence": 0.9, "severity": "critical", "start": 0, "end": 2}


def write_lines(path: Path, lines) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def make_inputs(root: Path, pronouns: bool = False) -> dict:
    """The files, and the docnmt-compare arguments that name them (``args``); ``pronouns``: the pronoun scorer's
    scores and per-sentence counts of every system in the scores folder too (HanTa, the source's words, every
    class reported), as the workflow writes them."""
    root.mkdir(parents=True, exist_ok=True)
    src, ref, docids = (write_lines(root / "test.en", SOURCE), write_lines(root / "test.de", REFERENCE),
                        write_lines(root / "test.docids", DOCIDS))
    decode = root / "decode"
    decode.mkdir(exist_ok=True)
    systems = {}
    for name, lines in OUTPUTS.items():
        systems[name] = write_lines(decode / f"{name}.txt", lines)
        write_lines(decode / f"{name}.bpe", lines)
    first_pass = hashlib.sha256((decode / "sentence-level.bpe").read_bytes()).hexdigest()
    generated = [[], [OUTPUTS["last-sentence"][0]], OUTPUTS["last-sentence"][:2], [], ["Guten Morgen, Herr Weber."],
                 ["Guten Morgen, Herr Weber.", "Haben Sie Zeit?"], [], ["Die Kiste war schwer."]]
    for name in OUTPUTS:
        sidecar = {"strategy": STRATEGIES[name], "k": 3}
        if name == "last-sentence":
            sidecar["generated_context"] = generated
        if name == "2-pass":
            sidecar["first_pass_sha256"] = first_pass
        if name == "refine":  # its draft: sentence-level's file, by its sha256
            sidecar["refine"] = {"unit": "sentence", "rounds": 1, "draft_sha256": first_pass}
        (decode / f"{name}.json").write_text(json.dumps(sidecar), encoding="utf-8")
    scores = root / "scores"
    scores.mkdir(exist_ok=True)
    spans = [[] for _ in SOURCE]
    spans[1] = [SPAN]
    # XCOMET scored every system; it found a span in sentence-level's line 2 only
    (scores / "comet.error_spans.jsonl").write_text("".join(json.dumps(
        {"metric": "XCOMET[tiny]", "system": name, "spans": spans if name == "sentence-level" else
         [[] for _ in SOURCE]}) + "\n" for name in OUTPUTS), encoding="utf-8")
    comet = {"columns": ["COMET[tiny]"], "signatures": {"COMET[tiny]": "tiny"}, "systems": {}}
    (scores / "comet.json").write_text(json.dumps(comet), encoding="utf-8")
    with open(scores / "comet.segments.jsonl", "w", encoding="utf-8") as handle:
        for number, name in enumerate(OUTPUTS):
            segment = [round(0.5 + 0.05 * number + 0.01 * i, 6) for i in range(len(SOURCE))]
            handle.write(json.dumps({"metric": "COMET[tiny]", "system": name, "scores": segment}) + "\n")
    # a ctxpro set: the test set's own lines, the expected form of each example
    examples = [{"line": 1, "context": 1, "src segment": SOURCE[1], "ref segment": REFERENCE[1], "expected": "sie",
                 "rule": "NOM.FEM.SING", "phenomenon": "gender", "ante distance": 1},
                {"line": 4, "context": 1, "src segment": SOURCE[4], "ref segment": REFERENCE[4], "expected": "sie",
                 "rule": "NOM.FORM", "phenomenon": "formality", "ante distance": 1}]
    ctxpro = root / "ctxpro.examples.jsonl"
    ctxpro.write_text("".join(json.dumps(e) + "\n" for e in examples), encoding="utf-8")
    args = ["--source", str(src), "--reference", str(ref), "--docids", str(docids)]
    for name, path in systems.items():
        args += ["--system", f"{name}={path}"]
    args += ["--scores", str(scores), "--context-set", f"ctxpro={ctxpro}", "--context-source", f"ctxpro={src}"]
    for name, path in systems.items():
        if name != "cheating":
            args += ["--context-system", f"ctxpro:{name}={path}"]
    if pronouns:
        from docnmt.score import pronouns as scorer

        scorer.main(["--source", str(src), "--reference", str(ref), *[f"--system={n}={p}" for n, p in systems.items()],
                     "--tagger", "hanta", "--source-tagger", "words", "--min-examples", "1",
                     "--output", str(scores / "pronouns.json"), "--sentences", str(scores / "pronouns.sentences.jsonl")])
    return {"root": root, "src": src, "ref": ref, "docids": docids, "systems": systems, "scores": scores,
            "ctxpro": ctxpro, "args": args}

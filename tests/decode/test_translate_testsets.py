"""docnmt-translate on the field's test sets (docnmt.corpora.testsets): a WMT XML file in, a submission out (a
<hyp> per document with its source's segments); WMT24++ JSONL in, every row with its "hypothesis" out. The
translations are those of the same documents in the text layout (the toy model of tests/toymodel.py)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from docnmt.decode.translate import main
from docnmt.textio import InputError

#: Documents of the toy task's words: (doc id, paragraphs of source sentences).
DOCS = [("d1", [["s3 s7 s11", "s1 s2"], ["s5 s9 s4 s8"]]), ("d2", [["s6 s10", "s12 s0 s13"]])]


def wmt_xml() -> str:
    """DOCS as WMT XML with references (lang de), plus a testsuite document without any."""
    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<dataset id="toy">', '  <collection id="general">']
    for docid, paragraphs in DOCS + [("suite", [["s2 s2 s14"]])]:
        testsuite = ' testsuite="toy"' if docid == "suite" else ""
        lines.append(f'    <doc id="{docid}" origlang="en"{testsuite}>')
        for tag, lang in (("src", "en"),) if testsuite else (("src", "en"), ("ref", "de")):
            translator = ' translator="A"' if tag == "ref" else ""
            lines.append(f'      <{tag} lang="{lang}"{translator}>')
            number = 0
            for paragraph in paragraphs:
                segs = []
                for sentence in paragraph:
                    number += 1
                    segs.append(f'<seg id="{number}">{sentence if tag == "src" else "t0"}</seg>')
                lines.append(f"        <p>{''.join(segs)}</p>")
            lines.append(f"      </{tag}>")
        lines.append("    </doc>")
    return "\n".join(lines + ["  </collection>", "</dataset>", ""])


#: WMT24++ rows of DOCS: d2's rows first, d1's interleaved after them, segment ids out of file order; a bad source.
ROWS = [
    {"document_id": "d2", "segment_id": 4, "source": "s12 s0 s13", "is_bad_source": False},
    {"document_id": "d1", "segment_id": 1, "source": "s1 s2", "is_bad_source": False},
    {"document_id": "d2", "segment_id": 3, "source": "s6 s10", "is_bad_source": False},
    {"document_id": "d1", "segment_id": 0, "source": "s3 s7 s11", "is_bad_source": True},
]


@pytest.fixture
def toy_args(toy):
    root, checkpoint, _ = toy
    return ["--document-model", str(checkpoint), "--document-data", str(root / "bin"), "--k", "2", "--beam", "2",
            "--src-lang", "en", "--tgt-lang", "de", "--codes", "none", "--tokenize", "none", "--device", "cpu"]


def text_translations(documents, toy_args, tmp_path) -> list[list[str]]:
    """The documents translated in the text layout (a blank line between documents)."""
    (tmp_path / "in.txt").write_text("\n".join("".join(s + "\n" for s in doc) for doc in documents), encoding="utf-8")
    assert main(["--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "out.txt"), *toy_args]) == 0
    return [block.splitlines() for block in (tmp_path / "out.txt").read_text(encoding="utf-8").split("\n\n")]


def test_an_xml_test_set_gets_a_hyp_per_document_with_the_sources_segments(toy_args, tmp_path):
    (tmp_path / "test.xml").write_text(wmt_xml(), encoding="utf-8")
    assert main(["--input", str(tmp_path / "test.xml"), "--output", str(tmp_path / "out.xml"), *toy_args]) == 0
    root = ET.parse(tmp_path / "out.xml").getroot()
    expected = text_translations([[s for p in paragraphs for s in p] for _, paragraphs in DOCS] + [["s2 s2 s14"]],
                                 toy_args, tmp_path)
    for doc, translations in zip(root.iter("doc"), expected, strict=True):
        (src,), (hyp,) = doc.findall("src"), doc.findall("hyp")
        assert hyp.attrib == {"system": "docnmt-doc-trans", "lang": "de"}, doc.get("id")
        assert [[s.get("id") for s in p] for p in hyp.findall("p")] == [[s.get("id") for s in p] for p in src.findall("p")]
        assert [s.text or "" for s in hyp.iter("seg")] == translations, doc.get("id")
    assert main(["--input", str(tmp_path / "test.xml"), "--output", str(tmp_path / "named.xml"), "--system-name",
                 "mine", "--strategy", "sentence-level", "--sentence-model", toy_args[1], "--sentence-data",
                 toy_args[3], *toy_args]) == 0
    assert {h.get("system") for h in ET.parse(tmp_path / "named.xml").getroot().iter("hyp")} == {"mine"}


def test_a_wmt24pp_file_gets_a_hypothesis_on_every_row_in_input_order(toy_args, tmp_path):
    (tmp_path / "en-de_DE.jsonl").write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    assert main(["--input", str(tmp_path / "en-de_DE.jsonl"), "--output", str(tmp_path / "out.jsonl"), *toy_args]) == 0
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [{k: v for k, v in row.items() if k != "hypothesis"} for row in rows] == ROWS
    d2, d1 = text_translations([["s6 s10", "s12 s0 s13"], ["s3 s7 s11", "s1 s2"]], toy_args, tmp_path)
    assert [row["hypothesis"] for row in rows] == [d2[1], d1[1], d2[0], d1[0]], "bad sources are translated too"


def test_an_xml_without_references_needs_the_target_language_for_its_hyps(tmp_path):
    from docnmt.decode.translate import read_documents

    text = wmt_xml()
    without = "\n".join(line for line in text.splitlines() if "<ref" not in line and "</ref>" not in line and
                        not (line.strip().startswith("<p>") and "t0" in line))
    (tmp_path / "src.xml").write_text(without, encoding="utf-8")
    with pytest.raises(InputError, match=r"src.xml: expected a target language for the <hyp lang>"):
        read_documents(tmp_path / "src.xml")
    documents, testset = read_documents(tmp_path / "src.xml", tgt_lang="de")
    assert [name for name, *_ in documents] == ["d1", "d2", "suite"] and testset.hyp_lang == "de"


def test_format_reads_a_test_set_whatever_its_files_name(toy_args, tmp_path):
    """--format wmt-xml and --format wmt24pp-jsonl read files named .txt (which alone would be the text layout) as
    those test sets, and write the output in their format: an XML hyp per document, a hypothesis on every row, the
    translations of the same documents in the text layout."""
    (tmp_path / "xml.txt").write_text(wmt_xml(), encoding="utf-8")
    assert main(["--input", str(tmp_path / "xml.txt"), "--output", str(tmp_path / "out-xml.txt"), "--format",
                 "wmt-xml", *toy_args]) == 0
    (tmp_path / "rows.txt").write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    assert main(["--input", str(tmp_path / "rows.txt"), "--output", str(tmp_path / "out-rows.txt"), "--format",
                 "wmt24pp-jsonl", *toy_args]) == 0
    expected = text_translations([[s for p in paragraphs for s in p] for _, paragraphs in DOCS] + [["s2 s2 s14"]],
                                 toy_args, tmp_path)
    root = ET.parse(tmp_path / "out-xml.txt").getroot()
    assert [[s.text or "" for s in doc.find("hyp").iter("seg")] for doc in root.iter("doc")] == expected
    rows = [json.loads(line) for line in (tmp_path / "out-rows.txt").read_text(encoding="utf-8").splitlines()]
    assert [{k: v for k, v in row.items() if k != "hypothesis"} for row in rows] == ROWS
    d2, d1 = text_translations([["s6 s10", "s12 s0 s13"], ["s3 s7 s11", "s1 s2"]], toy_args, tmp_path)
    assert [row["hypothesis"] for row in rows] == [d2[1], d1[1], d2[0], d1[0]]


def test_a_wmt25_file_is_translated_a_paragraph_a_line_into_wmt25s_submission(toy_args, tmp_path):
    """WMT25 JSONL in (found by its first row's src_text): each document's paragraphs translated as a document of the
    text layout, one line each; out: WMT25's submission, {"doc_id", "hypothesis"} a document, its paragraphs joined
    by a blank line; a document into another language is not translated."""
    rows = [{"doc_id": docid, "domain": "news", "src_lang": "en", "tgt_lang": "de_DE",
             "src_text": "\n\n".join(" ".join(p) for p in paragraphs), "refs": {}} for docid, paragraphs in DOCS]
    rows.insert(1, {**rows[0], "doc_id": "cs", "tgt_lang": "cs_CZ"})
    (tmp_path / "wmt25.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert main(["--input", str(tmp_path / "wmt25.jsonl"), "--output", str(tmp_path / "sub.jsonl"), *toy_args]) == 0
    written = [json.loads(line) for line in (tmp_path / "sub.jsonl").read_text(encoding="utf-8").splitlines()]
    expected = text_translations([[" ".join(p) for p in paragraphs] for _, paragraphs in DOCS], toy_args, tmp_path)
    assert written == [{"doc_id": docid, "hypothesis": "\n\n".join(hyps)} for (docid, _), hyps in zip(DOCS, expected)]

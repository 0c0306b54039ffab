"""docnmt.corpora.testsets: WMT XML and WMT24++ JSONL test sets, written here in their exact formats, read into
the common document format, written back with translations (an XML submission that sacrebleu's own parser
reads), and a prepared task whose test split comes from one (the rule testset_corpus, planned)."""

from __future__ import annotations

import json
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import pytest

from docnmt.corpora import testsets
from docnmt.corpora.corpus import read_split
from docnmt.textio import InputError, read_lines
from docnmt.workflow.tasks import SPLITS
from helpers import run_snakemake

#: collection -> documents: (doc id, attributes, paragraphs of segments (source, translator A, translator B)).
#: None as the references: a testsuite document, which has no <ref>.
DATASET = {
    "general": [
        ("news-1", {"origlang": "en", "domain": "news"}, [
            [("The cat sat on the mat.", "Die Katze saß auf der Matte.", "Die Katze saß auf dem Teppich."),
             ("It was\n      tired & hungry.", "Sie war müde & hungrig.", "Sie war müde und hungrig.")],
            [("Then it slept <quietly>.", "Dann schlief sie <leise>.", "Danach schlief sie <ruhig>.")],
        ]),
        ("news-2", {"origlang": "de", "domain": "news"}, [
            [("The mayor spoke.", "Der Bürgermeister sprach.", "Der Bürgermeister redete."),
             ("He was brief.", "Er fasste sich kurz.", "Er war kurz.")],
        ]),
        ("suite-1", {"origlang": "en", "testsuite": "pronouns"}, [[("She left it there.", None, None)]]),
    ],
    "speech": [
        ("talk-1", {"origlang": "en", "domain": "speech"}, [
            [("Hello everyone.", "Hallo zusammen.", "Hallo allerseits.")],
            [("Thank you.", "Danke.", "Vielen Dank."), ("Goodbye.", "Auf Wiedersehen.", "Tschüss.")],
        ]),
    ],
}


def side(tag: str, attributes: str, paragraphs, column: int) -> list[str]:
    lines = [f"      <{tag} {attributes}>"]
    number = 0
    for paragraph in paragraphs:
        lines.append("        <p>")
        for segment in paragraph:
            number += 1
            lines.append(f'          <seg id="{number}">{escape(segment[column])}</seg>')
        lines.append("        </p>")
    return lines + [f"      </{tag}>"]


def wmt_xml(dataset=DATASET, src="en", tgt="de") -> str:
    """A WMT XML test set (2021 onward), laid out as the WMT releases are."""
    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<dataset id="wmttest2099">']
    for collection, docs in dataset.items():
        lines.append(f'  <collection id="{collection}">')
        for docid, attributes, paragraphs in docs:
            attrs = " ".join(f"{k}={quoteattr(v)}" for k, v in attributes.items())
            lines.append(f'    <doc id="{docid}" {attrs}>')
            lines += side("src", f'lang="{src}"', paragraphs, 0)
            if paragraphs[0][0][1] is not None:
                for column, translator in ((1, "A"), (2, "B")):
                    lines += side("ref", f'lang="{tgt}" translator="{translator}"', paragraphs, column)
            lines.append("    </doc>")
        lines.append("  </collection>")
    return "\n".join(lines + ["</dataset>", ""])


def expected(column: int) -> list[tuple[str, list[str], list[str]]]:
    """(doc id, sources, references of one translator) of the documents with references, in order."""
    return [(docid, [" ".join(s[0].split()) for p in paragraphs for s in p], [s[column] for p in paragraphs for s in p])
            for docs in DATASET.values() for docid, _, paragraphs in docs if paragraphs[0][0][1] is not None]


@pytest.fixture
def xml_file(tmp_path) -> Path:
    path = tmp_path / "wmttest2099.en-de.xml"
    path.write_text(wmt_xml(), encoding="utf-8")
    return path


def edited(path: Path, old: str, new: str, count: int = 1) -> Path:
    """``path`` with ``old`` replaced by ``new`` (the first ``count`` times; it must occur)."""
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is not in {path.name}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")
    return path


def line_of(path: Path, needle: str) -> int:
    return next(n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if needle in line)


# ---- WMT XML -----------------------------------------------------------------------------------------------------
def test_wmt_xml_reads_each_document_with_the_first_translators_reference_and_leaves_testsuites_out(xml_file):
    documents, left_out = testsets.read_test_split(xml_file, "wmt-xml", "en", "de")
    assert [(d.docid, d.src, d.tgt) for d in documents] == expected(1)
    assert documents[0].src[1] == "It was tired & hungry.", "a line break inside a segment becomes one space"
    assert left_out == ["1 testsuite documents (no reference)",
                        "the line breaks inside 1 segments (each run of white space that holds one is one space)"]


def test_wmt_xml_reference_b_is_chosen_by_its_translator(xml_file):
    documents, _ = testsets.read_test_split(xml_file, "wmt-xml", "en", "de", reference="B")
    assert [(d.docid, d.src, d.tgt) for d in documents] == expected(2)


def test_a_document_id_repeated_in_two_collections_is_prefixed_with_its_collection(tmp_path):
    path = tmp_path / "repeated.xml"
    path.write_text(wmt_xml().replace('<doc id="talk-1"', '<doc id="news-1"'), encoding="utf-8")
    documents, _ = testsets.read_test_split(path, "wmt-xml", "en", "de")
    assert [d.docid for d in documents] == ["general/news-1", "general/news-2", "speech/news-1"]
    assert documents[0].src != documents[2].src, "two documents with one id stay two documents"


def test_malformed_xml_is_an_error_naming_the_file_and_line(xml_file):
    line = line_of(xml_file, "Der Bürgermeister sprach.")
    edited(xml_file, "Der Bürgermeister sprach.</seg>", "Der Bürgermeister sprach.</sag>")
    with pytest.raises(InputError, match=r"expected well-formed XML, found an error: mismatched tag") as err:
        testsets.read_test_split(xml_file, "wmt-xml", "en", "de")
    assert str(err.value).startswith(f"{xml_file}:{line}: "), str(err.value)


@pytest.mark.parametrize("old, new, message", [
    ('<src lang="en">', '<src lang="fr">', r"expected <src lang> en \(the task's src\), found 'fr'"),
    ('lang="de" translator="A"', 'lang="cs" translator="A"', r"expected <ref lang> de \(the task's tgt\), found 'cs'"),
])
def test_a_language_that_is_not_the_tasks_is_an_error_naming_the_file(xml_file, old, new, message):
    edited(xml_file, old, new)
    with pytest.raises(InputError, match=message) as err:
        testsets.read_test_split(xml_file, "wmt-xml", "en", "de")
    assert str(err.value).startswith(f"{xml_file}:{line_of(xml_file, new)}: document 'news-1'"), str(err.value)


def test_a_translator_missing_in_a_document_is_an_error_naming_the_file_and_document(xml_file):
    edited(xml_file, 'translator="B"', 'translator="C"', count=2)  # news-1 and news-2: C; talk-1 keeps B
    with pytest.raises(InputError, match=r"document 'talk-1': expected a <ref> by translator 'C', found "
                                         r"translators 'A', 'B'") as err:
        testsets.read_test_split(xml_file, "wmt-xml", "en", "de", reference="C")
    assert str(err.value).startswith(f"{xml_file}:{line_of(xml_file, 'talk-1')}:"), str(err.value)


def test_a_named_translator_that_a_document_lacks_is_an_error(xml_file):
    with pytest.raises(InputError, match=r"wmttest2099.en-de.xml:\d+: document 'news-1': expected a <ref> by "
                                         r"translator 'Z', found translators 'A', 'B'"):
        testsets.read_test_split(xml_file, "wmt-xml", "en", "de", reference="Z")


def test_a_document_without_any_reference_is_left_out_and_reported_as_sacrebleu_leaves_it_out(xml_file):
    edited(xml_file, ' testsuite="pronouns"', "")
    documents, left_out = testsets.read_test_split(xml_file, "wmt-xml", "en", "de")
    assert [d.docid for d in documents] == ["news-1", "news-2", "talk-1"]
    assert left_out[0] == "1 documents without reference text (no <ref> has text for any of their segments)"


def test_a_segment_id_the_reference_lacks_is_an_error_naming_file_document_and_segment(xml_file):
    edited(xml_file, '<seg id="2">Er fasste sich kurz.', '<seg id="7">Er fasste sich kurz.')
    with pytest.raises(InputError, match=r"document 'news-2': source segment 2 has no segment in the reference "
                                         r"\(translator 'A'\)") as err:
        testsets.read_test_split(xml_file, "wmt-xml", "en", "de")
    assert str(err.value).startswith(f"{xml_file}:{line_of(xml_file, 'He was brief.')}:")


#: A document as the WMT 2023 general test set holds one (speech domain): its <src> and <ref>s only empty <p/>s.
EMPTY_DOCUMENT = """    <doc id="14" origlang="en" domain="speech">
      <src lang="en">
        <p/>
        <p/>
      </src>
      <ref lang="de" translator="A"><p/><p/></ref>
      <ref lang="de" translator="B"><p/><p/></ref>
    </doc>
"""


def with_empty_document(path: Path) -> Path:
    """``path`` with :data:`EMPTY_DOCUMENT` between news-2 and suite-1."""
    return edited(path, '    <doc id="suite-1"', EMPTY_DOCUMENT + '    <doc id="suite-1"')


def test_a_document_with_only_empty_paragraphs_is_left_out_and_reported_the_others_intact(xml_file):
    """The WMT 2023 file that was refused whole ("document '14': expected <seg>s in its <src>, found none")."""
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    with_empty_document(xml_file)
    documents, left_out = testsets.read_test_split(xml_file, "wmt-xml", "en", "de")
    assert [(d.docid, d.src, d.tgt) for d in documents] == expected(1)
    assert "1 documents without segments (no <seg> in their <src>)" in left_out, left_out
    assert "14" not in WMTXMLDataset._unwrap_wmt21_or_later(str(xml_file))["docid"], "sacrebleu leaves it out too"


def test_a_document_without_segments_is_not_translated_and_gets_an_empty_hyp_that_sacrebleu_reads(xml_file, tmp_path):
    """A missing <hyp> would leave a system without the document in wmt-format-tools; an empty one (the source's
    empty paragraphs) is what the document has to translate, and sacrebleu extracts the others' hypotheses."""
    import xml.etree.ElementTree as ET
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    testset = testsets.read_for_translation(with_empty_document(xml_file), "wmt-xml")
    sources = testset.sources()
    assert [name for name, *_ in sources] == ["news-1", "news-2", "suite-1", "talk-1"]
    testset.write(tmp_path / "out.xml", [[s.upper() for s in sentences] for _, sentences, _, _ in sources], "sys")
    empty = next(doc for doc in ET.parse(tmp_path / "out.xml").getroot().iter("doc") if doc.get("id") == "14")
    (hyp,) = empty.findall("hyp")
    assert [len(p) for p in hyp] == [0, 0] and hyp.attrib == {"system": "sys", "lang": "de"}
    fields = WMTXMLDataset._unwrap_wmt21_or_later(str(tmp_path / "out.xml"))
    assert fields["sys"] == [s.upper() for d in expected(1) for s in d[1]]


def test_a_segments_white_space_is_kept_as_the_file_has_it_but_line_breaks(xml_file):
    """Inner runs of spaces, tabs, no-break spaces and white space at either end stay, as sacrebleu's extraction
    has them (it used to be collapsed); a run with a line break is one space, and counted."""
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    edited(xml_file, "He was brief.</seg>", " He  was\tbrief\u00a0!\u3000</seg>")
    edited(xml_file, "Er fasste sich kurz.</seg>", "Er fasste\r\n   sich &#13;&#10; kurz.\u2028</seg>")
    documents, left_out = testsets.read_test_split(xml_file, "wmt-xml", "en", "de")
    assert (documents[1].src[1], documents[1].tgt[1]) == (" He  was\tbrief\u00a0!\u3000", "Er fasste sich kurz. ")
    fields = WMTXMLDataset._unwrap_wmt21_or_later(str(xml_file))
    assert fields["src"][4] == documents[1].src[1], "as sacrebleu extracts it"
    assert fields["ref:A"][4] == "Er fasste\n   sich \r\n kurz.\u2028", "the line breaks are the difference"
    assert left_out[-1] == "the line breaks inside 2 segments (each run of white space that holds one is one space)"


@pytest.mark.parametrize("inner, what", [("<!-- note -->", "a comment"), ("<b>bold</b>", "an element <b>")])
def test_a_segment_that_holds_more_than_text_is_an_error_naming_file_and_line(xml_file, inner, what):
    """sacrebleu would read only the text before it (seg.text): "Er" of "Er<b>bold</b> fasste sich kurz."."""
    edited(xml_file, "Er fasste sich kurz.</seg>", f"Er{inner} fasste sich kurz.</seg>")
    with pytest.raises(InputError, match=rf"document 'news-2': in its <ref>, segment 2 holds {what}; expected text "
                                         r"only") as err:
        testsets.read_test_split(xml_file, "wmt-xml", "en", "de")
    assert str(err.value).startswith(f"{xml_file}:{line_of(xml_file, 'fasste sich')}: "), str(err.value)


def test_a_segment_no_reference_has_text_for_is_left_out_and_counted_as_sacrebleu_leaves_it_out(xml_file):
    for text in ("Er fasste sich kurz.", "Er war kurz."):
        edited(xml_file, f'<seg id="2">{text}</seg>', '<seg id="2"/>')
    documents, left_out = testsets.read_test_split(xml_file, "wmt-xml", "en", "de")
    assert (documents[1].src, documents[1].tgt) == (["The mayor spoke."], ["Der Bürgermeister sprach."])
    assert "1 segments without reference text (no <ref> of their document has text for them)" in left_out


def test_a_document_blank_on_both_sides_is_left_out_and_counted_where_sacrebleu_keeps_it(xml_file):
    """A reference of white space only is text to sacrebleu (its segment is kept); the common format holds no
    all-blank document: the one difference in what is read, and the log says it."""
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    for text in ("The mayor spoke.", "He was brief.", "Der Bürgermeister sprach.", "Er fasste sich kurz."):
        edited(xml_file, f">{text}</seg>", "> </seg>")
    documents, left_out = testsets.read_test_split(xml_file, "wmt-xml", "en", "de")
    assert [d.docid for d in documents] == ["news-1", "talk-1"]
    assert "1 documents whose segments are all blank (white space only), which the common format cannot hold" \
        in left_out, left_out
    assert WMTXMLDataset._unwrap_wmt21_or_later(str(xml_file))["docid"].count("news-2") == 2


def test_segment_ids_that_decrease_are_an_error_as_sacrebleu_would_reorder_them(xml_file):
    edited(xml_file, '<seg id="2">He was brief.', '<seg id="0">He was brief.')
    with pytest.raises(InputError, match=r"document 'news-2': in its <src>, segment id 0 follows 1; expected "
                                         r"increasing segment ids") as err:
        testsets.read_test_split(xml_file, "wmt-xml", "en", "de")
    assert str(err.value).startswith(f"{xml_file}:{line_of(xml_file, 'He was brief.')}: "), str(err.value)


def test_an_xml_submission_reads_back_with_sacrebleus_parser_and_gives_the_same_bleu(xml_file, tmp_path):
    """Our common-format files (reference B) and the submission we write: sacrebleu's WMTXMLDataset extracts the
    same sources, references, document ids and hypotheses (its text cleaning applied, as its extraction does),
    and corpus BLEU on its extraction equals BLEU on our files."""
    import sacrebleu
    from sacrebleu.dataset.base import Dataset
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    assert testsets.main(["convert", "--input", str(xml_file), "--src", "en", "--tgt", "de", "--reference", "B",
                          "--outdir", str(tmp_path / "corpus")]) == 0
    ours = read_split(*(tmp_path / f"corpus/test.{ext}" for ext in ("en", "de", "docids")))
    testset = testsets.read_for_translation(xml_file, "wmt-xml")
    sources = testset.sources()
    assert [name for name, *_ in sources] == ["news-1", "news-2", "suite-1", "talk-1"], "testsuites are translated"
    translations = [[s.upper().rstrip(".") + " ." for s in sentences] for _, sentences, _, _ in sources]
    translations[0][0] = "Die Katze saß auf dem Teppich."
    testset.write(tmp_path / "submission.xml", translations, system="docnmt-doc-trans")

    fields = WMTXMLDataset._unwrap_wmt21_or_later(str(tmp_path / "submission.xml"))
    clean = {name: [Dataset._clean(text) for text in values] for name, values in fields.items()}
    assert clean["src"] == [s for d in ours for s in d.src]
    assert clean["ref:B"] == [t for d in ours for t in d.tgt]
    assert clean["docid"] == [d.docid for d in ours for _ in d.src]
    hyps = [t for (name, *_), doc in zip(sources, translations) if name != "suite-1" for t in doc]
    assert clean["docnmt-doc-trans"] == hyps
    theirs = sacrebleu.corpus_bleu(clean["docnmt-doc-trans"], [clean["ref:B"]])
    mine = sacrebleu.corpus_bleu(hyps, [read_lines(tmp_path / "corpus/test.de")])
    assert theirs.score == mine.score and theirs.score > 0, (theirs, mine)


def test_the_submission_keeps_the_input_and_adds_one_hyp_per_document_like_its_source(xml_file, tmp_path):
    import xml.etree.ElementTree as ET

    testset = testsets.read_for_translation(xml_file, "wmt-xml")
    translations = [[f"h{i}" for i, _ in enumerate(sentences)] for _, sentences, _, _ in testset.sources()]
    testset.write(tmp_path / "out.xml", translations, system="sys")
    testset.write(tmp_path / "out.xml", translations, system="sys")  # rewritten, not appended to
    root = ET.parse(tmp_path / "out.xml").getroot()
    for doc in root.iter("doc"):
        (src,), (hyp,) = doc.findall("src"), doc.findall("hyp")
        assert hyp.attrib == {"system": "sys", "lang": "de"}
        assert [len(p) for p in hyp.findall("p")] == [len(p) for p in src.findall("p")], doc.get("id")
        assert [s.get("id") for s in hyp.iter("seg")] == [s.get("id") for s in src.iter("seg")]
    again = testsets.read_test_split(tmp_path / "out.xml", "wmt-xml", "en", "de")
    assert again == testsets.read_test_split(xml_file, "wmt-xml", "en", "de"), "the input is kept as it was"


# ---- WMT24++ JSONL -----------------------------------------------------------------------------------------------
def wmt24pp_row(docid, segid, source, target, bad=False, domain="news", lp="en-de_DE") -> dict:
    return {"lp": lp, "domain": domain, "document_id": docid, "segment_id": segid, "is_bad_source": bad,
            "source": source, "target": target, "original_target": target + "!"}


#: Rows in file order: the two documents interleave, lit-b's segments come 5 before 4; one bad source.
ROWS = [
    wmt24pp_row("news-a", 0, "The minister resigned.", "Der Minister trat zurück."),
    wmt24pp_row("lit-b", 5, "She closed the door.\n\nIt was late.", "Sie schloss die Tür.\n\nEs war spät.",
                domain="literary"),
    wmt24pp_row("news-a", 1, "Nobody knows why.", "Niemand weiß, warum."),
    wmt24pp_row("lit-b", 4, "The night was cold.", "Die Nacht war kalt.", domain="literary"),
    wmt24pp_row("news-a", 2, "@@@ ### !!!", "@@@ ### !!!", bad=True),
]


@pytest.fixture
def jsonl_file(tmp_path) -> Path:
    path = tmp_path / "en-de_DE.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in ROWS), encoding="utf-8")
    return path


def test_wmt24pp_documents_group_their_rows_order_segments_and_leave_bad_sources_out(jsonl_file):
    documents, left_out = testsets.read_test_split(jsonl_file, "wmt24pp-jsonl", "en", "de")
    assert [(d.docid, d.src, d.tgt) for d in documents] == [
        ("news-a", ["The minister resigned.", "Nobody knows why."], ["Der Minister trat zurück.", "Niemand weiß, warum."]),
        ("lit-b", ["The night was cold.", "She closed the door. It was late."],
         ["Die Nacht war kalt.", "Sie schloss die Tür. Es war spät."]),
    ]
    assert left_out == ["1 rows marked is_bad_source",
                        "the line breaks inside 1 segments (each run of white space that holds one is one space)"]
    original, _ = testsets.read_test_split(jsonl_file, "wmt24pp-jsonl", "en", "de", reference="original_target")
    assert original[0].tgt == ["Der Minister trat zurück.!", "Niemand weiß, warum.!"]


@pytest.mark.parametrize("line, text, message", [
    (3, '{"lp": "en-de_DE", "document_id": "news-a",', r"expected a JSON object, found invalid JSON"),
    (2, json.dumps({k: v for k, v in ROWS[1].items() if k != "segment_id"}), r"expected the field 'segment_id'"),
    (4, json.dumps({k: v for k, v in ROWS[3].items() if k != "target"}), r"expected the field 'target'"),
    (1, json.dumps({**ROWS[0], "lp": "en-fr_FR"}), r"expected lp en-de \(the task's languages, as en-de_DE\), "
                                                   r"found 'en-fr_FR'"),
    (5, json.dumps({**ROWS[4], "segment_id": 1}), r"document 'news-a': segment_id 1 occurs twice \(first at line 3\)"),
])
def test_bad_jsonl_rows_are_errors_naming_the_file_and_line(jsonl_file, line, text, message):
    lines = jsonl_file.read_text(encoding="utf-8").splitlines()
    lines[line - 1] = text
    jsonl_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=message) as err:
        testsets.read_test_split(jsonl_file, "wmt24pp-jsonl", "en", "de")
    assert str(err.value).startswith(f"{jsonl_file}:{line}: "), str(err.value)


def test_wmt24pp_translations_add_a_hypothesis_to_every_row_in_input_order(jsonl_file, tmp_path):
    testset = testsets.read_for_translation(jsonl_file, "wmt24pp-jsonl")
    sources = testset.sources()
    assert [(name, lines) for name, _, lines, _ in sources] == [("news-a", [1, 3, 5]), ("lit-b", [4, 2])], \
        "every row is translated, bad sources included"
    testset.write(tmp_path / "out.jsonl", [[f"{name}:{s}" for s in sentences] for name, sentences, _, _ in sources])
    rows = [json.loads(line) for line in read_lines(tmp_path / "out.jsonl")]
    assert [{k: v for k, v in row.items() if k != "hypothesis"} for row in rows] == ROWS
    assert [row["hypothesis"] for row in rows] == [f"{row['document_id']}:{testsets.flat(row['source'])}"
                                                   for row in ROWS]


def test_a_wmt_xml_test_split_by_paragraph_is_a_line_per_p_its_segments_joined(xml_file, tmp_path, capsys):
    """unit paragraph (as WMT25 translates and scores): a line per <p> of the source, its kept segments joined by a
    space on both sides, the reference's matched by segment id; through the CLI's --unit too. WMT24++ has no
    paragraphs: asking for them is one line naming the file."""
    documents, _ = testsets.read_test_split(xml_file, "wmt-xml", "en", "de", reference="B", unit="paragraph")
    assert [(d.docid, d.src, d.tgt) for d in documents] == [
        (docid, [" ".join(" ".join(s[0].split()) for s in p) for p in paragraphs],
         [" ".join(s[2] for s in p) for p in paragraphs])
        for docs in DATASET.values() for docid, _, paragraphs in docs if paragraphs[0][0][1] is not None]
    assert documents[0].src == ["The cat sat on the mat. It was tired & hungry.", "Then it slept <quietly>."]
    assert testsets.main(["convert", "--input", str(xml_file), "--src", "en", "--tgt", "de", "--unit", "paragraph",
                          "--outdir", str(tmp_path / "out")]) == 0
    assert read_lines(tmp_path / "out" / "test.de")[:2] == ["Die Katze saß auf der Matte. Sie war müde & hungrig.",
                                                             "Dann schlief sie <leise>."]
    assert "(wmt-xml): 3 documents, 5 paragraphs" in capsys.readouterr().out
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps(ROWS[0]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"rows.jsonl: a wmt24pp-jsonl test set has a line per segment, not per "
                                         r"paragraph"):
        testsets.read_test_split(rows, "wmt24pp-jsonl", "en", "de", unit="paragraph")


# ---- WMT25 JSONL ---------------------------------------------------------------------------------------------------
def wmt25_row(doc_id, src_lang, tgt_lang, src_text, ref=None, domain="news"):
    """A row of wmt25-genmt.jsonl, its fields as humeval/01-prepare_waves.py reads them (refs empty without one)."""
    return {"doc_id": doc_id, "domain": domain, "src_lang": src_lang, "tgt_lang": tgt_lang, "src_text": src_text,
            "video": None, "screenshot": None, "refs": {} if ref is None else {"refA": {"ref": ref}}}


WMT25_ROWS = [
    wmt25_row("en-de_DE_#_news_#_a", "en", "de_DE", "The minister resigned.\n\nNobody knows why.\nNot even she.",
              "Der Minister trat zurück.\n\nNiemand weiß, warum.\nNicht einmal sie."),
    wmt25_row("en-cs_CZ_#_news_#_a", "en", "cs_CZ", "The minister resigned.", "Ministr odstoupil."),
    wmt25_row("en-de_DE_#_speech_#_b", "en", "de_DE", "Okay. Let's move on.", None, domain="speech"),
    wmt25_row("en-de_DE_#_literary_#_c", "en", "de_DE", "She closed the door.\n\nIt was late.\n\nThe end.",
              "Sie schloss die Tür.\n\nEs war spät.\n\nEnde.", domain="literary"),
]


@pytest.fixture
def wmt25_file(tmp_path) -> Path:
    path = tmp_path / "wmt25-genmt.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in WMT25_ROWS), encoding="utf-8")
    return path


def test_wmt25_documents_are_a_line_per_paragraph_of_the_tasks_pair_with_a_reference(wmt25_file):
    assert testsets.infer_format(wmt25_file) == "wmt25-jsonl"
    documents, left_out = testsets.read_test_split(wmt25_file, "wmt25-jsonl", "en", "de")
    assert [(d.docid, d.src, d.tgt) for d in documents] == [
        ("en-de_DE_#_news_#_a", ["The minister resigned.", "Nobody knows why. Not even she."],
         ["Der Minister trat zurück.", "Niemand weiß, warum. Nicht einmal sie."]),
        ("en-de_DE_#_literary_#_c", ["She closed the door.", "It was late.", "The end."],
         ["Sie schloss die Tür.", "Es war spät.", "Ende."])]
    assert left_out == ["1 documents of other language pairs", "1 documents without the reference",
                        "the line breaks inside 2 paragraphs (each run of white space that holds one is one space)"]


@pytest.mark.parametrize("line, row, message", [
    (1, {**WMT25_ROWS[0], "refs": {"refA": {"ref": "Der Minister trat zurück. Niemand weiß, warum."}}},
     r"document 'en-de_DE_#_news_#_a': 2 source paragraphs but 1 in refs.refA.ref \(WMT25 splits both on blank "
     r"lines and requires as many\)"),
    (2, {k: v for k, v in WMT25_ROWS[1].items() if k != "src_text"}, r"expected the string field 'src_text'"),
    (4, {**WMT25_ROWS[3], "doc_id": WMT25_ROWS[0]["doc_id"]}, r"doc_id 'en-de_DE_#_news_#_a' occurs twice "
                                                              r"\(first at line 1\)"),
])
def test_bad_wmt25_rows_are_errors_naming_the_file_and_line(wmt25_file, line, row, message):
    lines = wmt25_file.read_text(encoding="utf-8").splitlines()
    lines[line - 1] = json.dumps(row, ensure_ascii=False)
    wmt25_file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=message) as err:
        testsets.read_test_split(wmt25_file, "wmt25-jsonl", "en", "de")
    assert str(err.value).startswith(f"{wmt25_file}:{line}: "), str(err.value)


def test_wmt25_translations_are_the_submission_a_document_a_line_its_paragraph_count_checked(wmt25_file, tmp_path):
    testset = testsets.read_for_translation(wmt25_file, "wmt25-jsonl", tgt_lang="de")
    sources = testset.sources()
    assert [(name, len(paragraphs)) for name, paragraphs, _, _ in sources] == [
        ("en-de_DE_#_news_#_a", 2), ("en-de_DE_#_speech_#_b", 1), ("en-de_DE_#_literary_#_c", 3)], \
        "every document into German is translated, those without a reference too"
    testset.write(tmp_path / "sub.jsonl", [[p.upper() for p in paragraphs] for _, paragraphs, _, _ in sources])
    rows = [json.loads(line) for line in read_lines(tmp_path / "sub.jsonl")]
    assert rows[0] == {"doc_id": "en-de_DE_#_news_#_a", "hypothesis": "THE MINISTER RESIGNED.\n\nNOBODY KNOWS WHY. "
                                                                      "NOT EVEN SHE."}
    assert [len(r["hypothesis"].split("\n\n")) for r in rows] == [2, 1, 3]
    broken = [[p for p in paragraphs] for _, paragraphs, _, _ in sources]
    broken[2][1] = "Es war\n\nspät."
    with pytest.raises(ValueError, match=r"wmt25-genmt.jsonl:4: document 'en-de_DE_#_literary_#_c': the "
                                         r"translation has 4 paragraphs, the source 3"):
        testset.write(tmp_path / "none.jsonl", broken)
    assert not (tmp_path / "none.jsonl").exists()


# ---- the CLI -----------------------------------------------------------------------------------------------------
def test_convert_writes_the_three_files_of_the_common_format(jsonl_file, tmp_path, capsys):
    out = tmp_path / "corpus"
    assert testsets.main(["convert", "--input", str(jsonl_file), "--src", "en", "--tgt", "de",
                          "--outdir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "(wmt24pp-jsonl): 2 documents, 4 segments" in printed and "left out: 1 rows marked is_bad_source" in printed
    documents = read_split(out / "test.en", out / "test.de", out / "test.docids")  # the format's checks pass
    assert [d.docid for d in documents] == ["news-a", "lit-b"] and sorted(p.name for p in out.iterdir()) == \
        ["test.de", "test.docids", "test.en"]


def test_convert_writes_one_file_of_the_split_as_the_rule_asks(xml_file, tmp_path):
    assert testsets.main(["convert", "--format", "wmt-xml", "--input", str(xml_file), "--src", "en", "--tgt", "de",
                          "--docids-out", str(tmp_path / "test.docids")]) == 0
    assert read_lines(tmp_path / "test.docids") == [d for d, src, _ in expected(1) for _ in src]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([xml_file.name, "test.docids"])


def test_convert_leaves_no_output_on_an_error(xml_file, tmp_path, capsys):
    out = tmp_path / "corpus"
    out.mkdir()
    with pytest.raises(SystemExit) as exit_:
        testsets.main(["convert", "--input", str(xml_file), "--src", "en", "--tgt", "fr", "--outdir", str(out)])
    assert exit_.value.code == 1
    assert "expected <ref lang> fr (the task's tgt), found 'de'" in capsys.readouterr().err
    assert list(out.iterdir()) == [], "no file, no temporary"


# ---- the workflow ------------------------------------------------------------------------------------------------
def test_a_prepared_task_reads_its_test_split_from_the_test_set_in_a_dry_run(xml_file, tmp_path):
    """A task with models: and corpus.test (no corpus folder): testset_corpus makes test.en, test.de and
    test.docids, prepared_corpus nothing; a task trained by the workflow gets train and valid from its folder."""
    models = {"k": 3, "bpe_codes": "none", "tokenize": "none"}
    for level in ("sentence", "document"):
        (tmp_path / level).mkdir()
        (tmp_path / level / "checkpoint.pt").write_bytes(b"")
        models[level] = {"checkpoint": str(tmp_path / level / "checkpoint.pt"), "data": str(tmp_path / level)}
    (tmp_path / "own").mkdir()
    for split in ("train", "valid"):
        for ext in ("en", "de", "docids"):
            (tmp_path / "own" / f"{split}.{ext}").write_text("x\n", encoding="utf-8")
    test = {"format": "wmt-xml", "file": str(xml_file), "reference": "B"}
    config = {"tasks": ["mine"], "task_settings": {
        "mine": {"src": "en", "tgt": "de", "corpus": {"type": "prepared", "test": test}, "models": models},
        "own": {"src": "en", "tgt": "de", "bpe_merges": 10, "dropout": 0.1, "label_smoothing": 0.1,
                "corpus": {"type": "prepared", "dir": str(tmp_path / "own"), "test": test}},
    }}
    (tmp_path / "mine.yaml").write_text(json.dumps(config), encoding="utf-8")
    work = tmp_path / "work"
    targets = ["data/mine/corpus/test.stats.json", *(f"data/own/corpus/{split}.stats.json" for split in SPLITS)]
    result = run_snakemake(work, *targets, "-n", "-p", "--configfile", str(tmp_path / "mine.yaml"))
    jobs = dict((parts[0], int(parts[1])) for parts in (line.split() for line in result.stdout.splitlines())
                if len(parts) == 2 and parts[1].isdigit())
    assert jobs.get("testset_corpus") == 6 and jobs.get("prepared_corpus") == 6, jobs
    command = next(line for line in result.stdout.splitlines() if "--tgt-out data/mine/corpus/test.de" in line)
    assert "docnmt.corpora.testsets convert --format wmt-xml --src en --tgt de --reference B --input" in command
    assert str(xml_file) in command
    full = run_snakemake(work, "-n", "--configfile", str(tmp_path / "mine.yaml"))  # the task's whole DAG resolves
    assert "testset_corpus" in full.stdout and "decode_doc_trans" in full.stdout


def test_a_prepared_task_reads_a_wmt25_file_a_line_per_paragraph(wmt25_file, tmp_path):
    """corpus.test with wmt25-jsonl through the data stage (testset_corpus, check_corpus): the task's pair, a line
    per paragraph, the paragraphs of the reference beside them."""
    (tmp_path / "own").mkdir()
    for split in ("train", "valid"):
        for ext, lines in (("en", ["Hello.", "Good bye."]), ("de", ["Hallo.", "Tschüss."]), ("docids", ["d1", "d1"])):
            (tmp_path / "own" / f"{split}.{ext}").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    config = {"tasks": ["own"], "task_settings": {"own": {
        "src": "en", "tgt": "de", "bpe_merges": 10, "dropout": 0.1, "label_smoothing": 0.1,
        "corpus": {"type": "prepared", "dir": str(tmp_path / "own"),
                   "test": {"format": "wmt25-jsonl", "file": str(wmt25_file), "unit": "paragraph"}}}}}
    (tmp_path / "own.yaml").write_text(json.dumps(config), encoding="utf-8")
    work = tmp_path / "work"
    run_snakemake(work, "data/own/corpus/test.stats.json", "--cores", "2", "--configfile", str(tmp_path / "own.yaml"))
    corpus = work / "data/own/corpus"
    documents, _ = testsets.read_test_split(wmt25_file, "wmt25-jsonl", "en", "de")
    assert read_lines(corpus / "test.en") == [p for d in documents for p in d.src]
    assert read_lines(corpus / "test.de") == [p for d in documents for p in d.tgt]
    assert read_lines(corpus / "test.docids") == [d.docid for d in documents for _ in d.src]
    assert len(read_lines(corpus / "test.en")) == 5


def test_the_data_pages_test_set_block_runs_as_written_in_a_prepared_task(tmp_path):
    """docs/data.md's `corpus:` block (WMT test sets), as written, under a prepared task of a config the test builds
    (its keys above the block, the block indented as it is); only its roots, `/path/to/folder` and `/data/`, are
    replaced by folders here. The data stage makes train and valid from `dir`, and test from the XML test set with
    its first reference (`reference: null`), as sacrebleu's reading of the file gives them."""
    from helpers import REPO, doc_blocks

    (block,) = doc_blocks(REPO / "docs/data.md", "yaml", "## WMT test sets (XML, JSONL)")
    assert block.startswith("    corpus:\n") and "/data/wmttest2023.en-de.all.xml" in block, block
    folder, data = tmp_path / "path/to/folder", tmp_path / "data"
    folder.mkdir(parents=True)
    data.mkdir()
    for split in ("train", "valid"):
        for ext, lines in (("en", ["Hello.", "Good bye."]), ("de", ["Hallo.", "Tschüss."]), ("docids", ["d1", "d1"])):
            (folder / f"{split}.{ext}").write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    (data / "wmttest2023.en-de.all.xml").write_text(wmt_xml(), encoding="utf-8")
    task = ("tasks: [mine]\ntask_settings:\n  mine:\n    src: en\n    tgt: de\n    bpe_merges: 10\n    dropout: 0.1\n"
            "    label_smoothing: 0.1\n")
    config = tmp_path / "mine.yaml"
    config.write_text(task + block.replace("/path/to/folder", str(folder)).replace("/data/", f"{data}/"),
                      encoding="utf-8")
    work = tmp_path / "work"
    run_snakemake(work, *(f"data/mine/corpus/{split}.stats.json" for split in SPLITS), "--cores", "2",
                  "--configfile", str(config))
    corpus = work / "data/mine/corpus"
    docs = expected(1)
    assert read_lines(corpus / "test.docids") == [docid for docid, src, _ in docs for _ in src]
    assert read_lines(corpus / "test.en") == [s for _, src, _ in docs for s in src]
    assert read_lines(corpus / "test.de") == [t for _, _, ref in docs for t in ref], "reference null: the first <ref>"
    for split in ("train", "valid"):
        assert read_lines(corpus / f"{split}.de") == ["Hallo.", "Tschüss."]
    stats = json.loads((corpus / "test.stats.json").read_text())
    assert stats["sentences"] == sum(len(src) for _, src, _ in docs), stats

"""Parsers of the real corpus formats (docnmt.corpora.parsers), on fixtures in the exact real layouts.

Fixtures come from tests/realformat.py; the real-sample tests read the genuine
IWSLT17 tst2017 En-De XML from ../shared/real-samples when it is there.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

import realformat as rf
from helpers import REAL_SAMPLES, REPO, tool_env
from docnmt.corpora import iwslt_tags, mteval, news, opus
from docnmt.corpora.corpus import Document, read_split
from docnmt.textio import InputError

# --------------------------------------------------------------------------
# Fixture documents (src = English, tgt = German/Italian)
# --------------------------------------------------------------------------

NEWS_DOCS = [
    Document("d1", ["The cat sat.", "It was happy."], ["Die Katze saß.", "Sie war glücklich."]),
    Document("d2", ["Prices rose.", "Nobody knew why.", "Then they fell."],
             ["Die Preise stiegen.", "Niemand wusste warum.", "Dann fielen sie."]),
    Document("d3", ["One sentence only."], ["Nur ein Satz."]),
]

# Text with every character the SGML/XML fixtures escape: & < > " '
TRICKY_DOCS = [
    Document("abcnews.151477", ['Tom & Jerry said "hi".', "It's 3 < 4 > 2."],
             ['Tom & Jerry sagten "hallo".', "Es ist 3 < 4 > 2."]),
    Document("bbc.12", ["R and D."], ["F und E."]),
]

TED_DOCS = [
    Document("ted-535", ["Thank you so much.", "It's great to be here."], ["Grazie mille.", "È bello essere qui."]),
    Document("ted-1200", ["So, imagine this.", "You & I.", "(Applause)"],
             ["Allora, immaginate.", "Tu & io.", "(Applausi)"]),
]


def os_docs(sizes, start=1000):
    """OpenSubtitles-like documents of the given sizes (German file paths as ids)."""
    docs = []
    for index, size in enumerate(sizes):
        docid = rf.os_docid(1990 + index % 20, 100000 + index, start + index)
        docs.append(Document(docid, [f"en {index}.{i}" for i in range(size)], [f"de {index}.{i}" for i in range(size)]))
    return docs


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def wmt_files(tmp_path, docs_src=TRICKY_DOCS, docs_ref=None, year=2018):
    archive = rf.wmt_test_tgz(tmp_path / "test.tgz", year, docs_src, docs_ref)
    dest = rf.extract(archive, tmp_path / "wmt")
    src, ref = rf.wmt_member_names(year)
    return dest / src, dest / ref


# --------------------------------------------------------------------------
# NEWS: News Commentary TSV
# --------------------------------------------------------------------------


@pytest.mark.parametrize("separator", ["", "\t", " \t "], ids=["empty-line", "tab-only-line", "whitespace-line"])
def test_nc_blank_line_variants_separate_documents(tmp_path, separator):
    path = rf.news_commentary_tsv_gz(tmp_path / "news-commentary-v14.de-en.tsv.gz", NEWS_DOCS, separator)
    docs = news.news_commentary_tsv(path)
    assert [len(d) for d in docs] == [2, 3, 1]


def test_nc_second_column_is_english_and_ids_are_numbered(tmp_path):
    path = rf.news_commentary_tsv_gz(tmp_path / "nc.tsv.gz", NEWS_DOCS)
    docs = news.news_commentary_tsv(path)
    assert [d.docid for d in docs] == ["nc-v14-00001", "nc-v14-00002", "nc-v14-00003"]
    assert [(d.src, d.tgt) for d in docs] == [(d.src, d.tgt) for d in NEWS_DOCS]


def test_nc_reads_plain_uncompressed_tsv(tmp_path):
    path = write(tmp_path / "nc.tsv", rf.news_commentary_tsv_text(NEWS_DOCS))
    assert len(news.news_commentary_tsv(path)) == 3


def test_nc_one_column_line_is_an_error_with_its_line(tmp_path):
    path = write(tmp_path / "nc.tsv", "Die Katze.\tThe cat.\nNur Deutsch ohne Tab\n")
    with pytest.raises(InputError) as err:
        news.news_commentary_tsv(path)
    assert (err.value.path, err.value.line) == (str(path), 2)
    assert "expected 2 tab-separated columns (de, en), found 1" in str(err.value)


def test_nc_lines_with_one_empty_side_are_kept_and_counted(tmp_path):
    path = write(tmp_path / "nc.tsv", "Eins.\tOne.\n\tOnly English.\nNur Deutsch.\t\n")
    report = {}
    docs = news.news_commentary_tsv(path, report)
    assert docs[0].src == ["One.", "Only English.", ""] and docs[0].tgt == ["Eins.", "", "Nur Deutsch."]
    assert report["one_side_empty"] == 2


# --------------------------------------------------------------------------
# NEWS: WMT newstest SGML
# --------------------------------------------------------------------------


def test_wmt_test_tgz_has_the_real_member_layout(tmp_path):
    archive = rf.wmt_test_tgz(tmp_path / "test.tgz", 2015, NEWS_DOCS)
    with tarfile.open(archive) as tar:
        names = tar.getnames()
    assert "test/newstest2015-ende-src.en.sgm" in names and "test/newstest2015-ende-ref.de.sgm" in names


def test_wmt_sgml_aligns_documents_and_unescapes_entities(tmp_path):
    src, ref = wmt_files(tmp_path)
    assert "&amp;" in src.read_text() and "&quot;" in src.read_text() and "&#39;" in src.read_text()
    docs = mteval.wmt_sgml(src, ref)
    assert [d.docid for d in docs] == ["abcnews.151477", "bbc.12"]
    assert docs[0].src == ['Tom & Jerry said "hi".', "It's 3 < 4 > 2."]
    assert docs[0].tgt == ['Tom & Jerry sagten "hallo".', "Es ist 3 < 4 > 2."]


def test_wmt_sgml_keeps_a_raw_ampersand_and_normalizes_whitespace(tmp_path):
    sgm = ('<srcset setid="newstest2019" srclang="any">\n<doc sysid="ref" docid="x" genre="news" origlang="de">\n'
           '<p>\n<seg id="1">  R&D  costs\t&amp; more </seg>\n</p>\n</doc>\n</srcset>\n')
    src = write(tmp_path / "src.sgm", sgm)
    ref = write(tmp_path / "ref.sgm", sgm.replace("srcset", "refset"))
    assert mteval.wmt_sgml(src, ref)[0].src == ["R&D costs & more"]


def test_wmt_sgml_misaligned_segment_ids_name_the_document(tmp_path):
    src, ref = wmt_files(tmp_path)
    write(ref, ref.read_text().replace('<seg id="2">', '<seg id="7">'))
    with pytest.raises(InputError) as err:
        mteval.wmt_sgml(src, ref)
    assert "document 'abcnews.151477'" in str(err.value) and "segment ids differ" in str(err.value)


def test_wmt_sgml_document_missing_from_reference_is_named(tmp_path):
    src, ref = wmt_files(tmp_path, TRICKY_DOCS, TRICKY_DOCS[:1])
    with pytest.raises(InputError, match="expected document 'bbc.12'"):
        mteval.wmt_sgml(src, ref)


def test_wmt_sgml_unclosed_segment_is_an_error_at_its_line(tmp_path):
    src, ref = wmt_files(tmp_path)
    lines = src.read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith('<seg id="1">'))
    lines[index] = lines[index].replace("</seg>", "")
    write(src, "\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        mteval.wmt_sgml(src, ref)
    assert "unclosed <seg>" in str(err.value) and f"opened at line {index + 1}" in str(err.value)
    assert err.value.path == str(src) and err.value.line == index + 2


def test_wmt_sgml_segment_outside_a_document_is_an_error_at_its_line(tmp_path):
    path = write(tmp_path / "x.sgm", '<srcset setid="t" srclang="any">\n<seg id="1">stray</seg>\n</srcset>\n')
    with pytest.raises(InputError) as err:
        mteval.wmt_sgml(path, path)
    assert err.value.line == 2 and "outside any document" in str(err.value)


def test_wmt_sgml_without_documents_is_an_error(tmp_path):
    path = write(tmp_path / "x.sgm", '<srcset setid="t" srclang="any">\n</srcset>\n')
    with pytest.raises(InputError, match="expected at least one <doc"):
        mteval.wmt_sgml(path, path)


def test_wmt_sgml_unclosed_document_is_an_error(tmp_path):
    src, ref = wmt_files(tmp_path)
    write(src, src.read_text().replace("</doc>\n</srcset>", "</srcset>"))
    with pytest.raises(InputError, match="expected </doc> to close document 'bbc.12'"):
        mteval.wmt_sgml(src, ref)


def test_wmt_sgml_text_outside_a_segment_is_an_error_at_its_line(tmp_path):
    src, ref = wmt_files(tmp_path)
    write(src, src.read_text().replace("<p>\n", "<p>\nloose text\n", 1))
    with pytest.raises(InputError) as err:
        mteval.wmt_sgml(src, ref)
    assert err.value.line == 4 and "found text in document 'abcnews.151477'" in str(err.value)


# --------------------------------------------------------------------------
# TED: IWSLT XML and train.tags
# --------------------------------------------------------------------------


def ted_train_files(tmp_path, credits="header", train=TED_DOCS):
    archive = rf.iwslt17_train_tgz(tmp_path / "DeEnItNlRo-DeEnItNlRo.tgz", train, TED_DOCS[:1], TED_DOCS[1:],
                                   credits=credits)
    dest = rf.extract(archive, tmp_path / "ted")
    return {key: dest / name for key, name in rf.iwslt17_train_names().items()}


def test_iwslt17_train_tgz_has_the_real_member_layout(tmp_path):
    with tarfile.open(rf.iwslt17_train_tgz(tmp_path / "a.tgz", TED_DOCS, TED_DOCS, TED_DOCS)) as tar:
        names = set(tar.getnames())
    assert {"DeEnItNlRo-DeEnItNlRo/train.tags.en-it.en", "DeEnItNlRo-DeEnItNlRo/train.tags.en-it.it",
            "DeEnItNlRo-DeEnItNlRo/IWSLT17.TED.dev2010.en-it.en.xml",
            "DeEnItNlRo-DeEnItNlRo/IWSLT17.TED.tst2010.en-it.it.xml"} <= names


def test_iwslt_xml_drops_meta_lines_and_unescapes_segments(tmp_path):
    files = ted_train_files(tmp_path)
    docs = mteval.iwslt_xml(files["tst2010_src"], files["tst2010_ref"])
    assert [d.docid for d in docs] == ["ted-1200"]
    assert docs[0].src == ["So, imagine this.", "You & I.", "(Applause)"]
    assert docs[0].tgt == ["Allora, immaginate.", "Tu & io.", "(Applausi)"]


def test_iwslt_xml_misaligned_segment_ids_name_the_document(tmp_path):
    files = ted_train_files(tmp_path)
    ref = files["dev2010_ref"]
    write(ref, ref.read_text().replace('<seg id="2">', '<seg id="3">'))
    with pytest.raises(InputError, match="document '535': segment ids differ"):
        mteval.iwslt_xml(files["dev2010_src"], ref)


def test_iwslt_xml_malformed_segment_is_an_error_at_its_line(tmp_path):
    files = ted_train_files(tmp_path)
    src = files["dev2010_src"]
    lines = src.read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith('<seg id="2">'))
    lines[index] = "<seg>no id</seg>"
    write(src, "\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        mteval.iwslt_xml(src, files["dev2010_ref"])
    assert err.value.line == index + 1 and "without an id" in str(err.value)


def test_mted_test_reference_comes_from_the_reverse_direction_archive(tmp_path):
    a, b = rf.iwslt17_mted_test_tgz(tmp_path / "en-it.tgz", tmp_path / "it-en.tgz", TED_DOCS)
    rf.extract(a, tmp_path / "t")
    rf.extract(b, tmp_path / "t")
    src_name, ref_name = rf.iwslt17_mted_test_names()
    assert src_name == "en-it/IWSLT17.TED.tst2017.mltlng.en-it.en.xml"
    assert ref_name == "it-en/IWSLT17.TED.tst2017.mltlng.it-en.it.xml"
    docs = mteval.iwslt_xml(tmp_path / "t" / src_name, tmp_path / "t" / ref_name)
    assert [(d.docid, d.src, d.tgt) for d in docs] == [(d.docid, d.src, d.tgt) for d in TED_DOCS]


@pytest.mark.parametrize("credits", ["header", "end", "none"])
def test_train_tags_talks_without_meta_lines(tmp_path, credits):
    files = ted_train_files(tmp_path, credits)
    docs = iwslt_tags.iwslt_train_tags(files["train_src"], files["train_tgt"])
    assert [(d.docid, d.src, d.tgt) for d in docs] == [(d.docid, d.src, d.tgt) for d in TED_DOCS]


def test_train_tags_with_doc_wrappers(tmp_path):
    src = write(tmp_path / "t.en", rf.train_tags_text(TED_DOCS, "src", doc_wrapper=True))
    tgt = write(tmp_path / "t.it", rf.train_tags_text(TED_DOCS, "ref", doc_wrapper=True))
    docs = iwslt_tags.iwslt_train_tags(src, tgt)
    assert [(d.docid, len(d)) for d in docs] == [("ted-535", 2), ("ted-1200", 3)]


def test_train_tags_mismatched_talk_counts_name_the_talk_and_both_files(tmp_path):
    files = ted_train_files(tmp_path)
    tgt = files["train_tgt"]
    write(tgt, tgt.read_text().replace("Tu & io.\n", ""))
    with pytest.raises(InputError) as err:
        iwslt_tags.iwslt_train_tags(files["train_src"], tgt)
    message = str(err.value)
    assert "talk '1200'" in message and "3 sentence lines" in message and "2 in" in message
    assert str(files["train_src"]) in message and str(tgt) in message


def test_train_tags_text_before_any_talk_header_is_an_error(tmp_path):
    src = write(tmp_path / "t.en", "Hello.\n" + rf.train_tags_text(TED_DOCS, "src"))
    tgt = write(tmp_path / "t.it", rf.train_tags_text(TED_DOCS, "ref"))
    with pytest.raises(InputError) as err:
        iwslt_tags.iwslt_train_tags(src, tgt)
    assert err.value.line == 1 and "expected a talk header" in str(err.value)


# --------------------------------------------------------------------------
# OS: OPUS Moses zip, split
# --------------------------------------------------------------------------


@pytest.mark.parametrize("naming", ["OpenSubtitles", "OpenSubtitles2018"])
def test_opus_moses_reads_both_archive_namings(tmp_path, naming):
    docs = os_docs([3, 2, 4])
    path = rf.opus_moses_zip(tmp_path / "de-en.txt.zip", docs, naming=naming)
    with zipfile.ZipFile(path) as zf:
        assert {f"{naming}.de-en.de", f"{naming}.de-en.en", f"{naming}.de-en.ids", "README", "LICENSE"} == set(zf.namelist())
    parsed = opus.opus_moses(path)
    assert [(d.docid, d.src, d.tgt) for d in parsed] == [(d.docid, d.src, d.tgt) for d in docs]


def test_opus_docid_is_the_german_file_in_the_first_ids_column(tmp_path):
    docs = os_docs([2])
    path = rf.opus_moses_zip(tmp_path / "a.zip", docs)
    with zipfile.ZipFile(path) as zf:
        first = zf.read("OpenSubtitles.de-en.ids").decode().splitlines()[0].split("\t")
    assert first[0].startswith("de/") and first[1].startswith("en/")
    assert opus.opus_moses(path)[0].docid == first[0] == "de/1990/100000/1000.xml.gz"


def test_opus_moses_is_streamed_by_a_generator(tmp_path):
    path = rf.opus_moses_zip(tmp_path / "a.zip", os_docs([2, 2]))
    stream = opus.iter_opus_moses(path)
    assert iter(stream) is stream and next(stream).docid == "de/1990/100000/1000.xml.gz"


def test_opus_ids_line_with_wrong_column_count_names_member_and_line(tmp_path):
    docs = os_docs([2, 2])
    lines = rf.opus_ids_lines(docs)
    lines[2] = lines[2].rsplit("\t", 1)[0]
    path = rf.opus_moses_zip(tmp_path / "a.zip", docs, ids_lines=lines)
    with pytest.raises(InputError) as err:
        opus.opus_moses(path)
    assert err.value.path == f"{path}:OpenSubtitles.de-en.ids" and err.value.line == 3
    assert "expected 4 tab-separated columns" in str(err.value) and "found 3" in str(err.value)


def test_opus_ids_with_swapped_language_columns_is_an_error(tmp_path):
    docs = os_docs([2])
    lines = ["\t".join([b, a, c, d]) for a, b, c, d in (line.split("\t") for line in rf.opus_ids_lines(docs))]
    path = rf.opus_moses_zip(tmp_path / "a.zip", docs, ids_lines=lines)
    with pytest.raises(InputError, match="column 1 should name the de file"):
        opus.opus_moses(path)


def test_opus_zip_without_opensubtitles_members_is_an_error(tmp_path):
    path = tmp_path / "a.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("Europarl.de-en.de", "x\n")
    with pytest.raises(InputError, match="expected members OpenSubtitles"):
        opus.opus_moses(path)


def test_opus_text_member_shorter_than_ids_is_an_error(tmp_path):
    docs = os_docs([3])
    path = rf.opus_moses_zip(tmp_path / "a.zip", docs, ids_lines=rf.opus_ids_lines(os_docs([4])))
    with pytest.raises(InputError) as err:
        opus.opus_moses(path)
    assert err.value.line == 4 and "found the end of the member" in str(err.value)


@pytest.mark.parametrize("name", ["de/2004/123/456.xml.gz", "2004/123/456.xml", "2004/123/456.xml.gz",
                                  "2004_123_456.de", "2004/2004_123_456.de", "./de/2004/123/456.xml.gz#2"])
def test_os_docid_normalization_accepts_contrapro_and_opus_names(name):
    assert opus.normalize_os_docid(name) == "2004_123_456"


def test_os_docid_normalization_agrees_with_contrapro_module():
    contrapro = pytest.importorskip("docnmt.corpora.contrapro")
    if not hasattr(contrapro, "normalize_document_id"):
        pytest.skip("docnmt.corpora.contrapro has no normalize_document_id")
    for name in ("de/2004/123/456.xml.gz", "2004/123/456.xml", "2004_123_456.de"):
        assert opus.normalize_os_docid(name) == contrapro.normalize_document_id(name, "de")


SPLIT_SIZES = [500 + (index * 37) % 500 for index in range(200)]


def test_os_split_is_deterministic_and_independent_of_input_order():
    docs = os_docs(SPLIT_SIZES)
    first = opus.os_split(docs, seed=7)
    again = opus.os_split(list(reversed(docs)), seed=7)
    assert [d.docid for d in first[1]] == [d.docid for d in again[1]]
    assert [d.docid for d in first[2]] == [d.docid for d in again[2]]
    other = opus.os_split(docs, seed=8)
    assert [d.docid for d in other[1]] != [d.docid for d in first[1]]


def test_os_split_matches_the_paper_sizes():
    train, valid, test, report = opus.os_split(os_docs(SPLIT_SIZES))
    assert len(valid) == 5 and len(test) == 5
    assert abs(sum(map(len, valid)) - 3500) <= 35, report["valid"]
    assert abs(sum(map(len, test)) - 3800) <= 38, report["test"]
    assert len(train) == 190 and not {d.docid for d in valid} & {d.docid for d in test}
    assert report["valid"]["sentences"] == sum(map(len, valid))


def test_os_split_removes_contrapro_documents_from_every_split():
    docs = os_docs(SPLIT_SIZES)
    contrapro = ["1990_100000_1000.de", "1991/100001/1001.xml", "de/1992/100002/1002.xml.gz", "2999_1_1.de"]
    train, valid, test, report = opus.os_split(docs, contrapro)
    kept = {d.docid for d in train + valid + test}
    assert not kept & {d.docid for d in docs[:3]}
    assert len(kept) == 197
    assert report["contrapro_films"]["documents"] == 3 and report["contrapro_removal"] == "films"
    assert report["contrapro_documents_not_in_corpus"] == 1


def test_os_split_needs_enough_documents():
    with pytest.raises(ValueError, match="expected at least 11 documents"):
        opus.os_split(os_docs([5] * 10))


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "docnmt.corpora.parsers", *map(str, args)], capture_output=True,
                          text=True, env=tool_env(), cwd=REPO)


def test_cli_news_writes_the_common_format(tmp_path):
    nc = rf.news_commentary_tsv_gz(tmp_path / "nc.tsv.gz", NEWS_DOCS, "\t")
    v_src, v_ref = wmt_files(tmp_path / "v", TRICKY_DOCS, year=2015)
    t_src, t_ref = wmt_files(tmp_path / "t", NEWS_DOCS, year=2018)
    out = tmp_path / "out"
    result = run_cli("news", "--nc", nc, "--valid-src", v_src, "--valid-ref", v_ref, "--test-src", t_src,
                     "--test-ref", t_ref, "--outdir", out, "--report", tmp_path / "r.json")
    assert result.returncode == 0, result.stderr
    assert "train: 6 sentences in 3 documents" in result.stdout
    valid = read_split(out / "valid.en", out / "valid.de", out / "valid.docids")
    assert valid[0].src[0] == 'Tom & Jerry said "hi".'
    assert json.loads((tmp_path / "r.json").read_text())["test"]["documents"] == 3


def test_cli_ted_concatenates_dev2010_and_tst2010_as_valid(tmp_path):
    files = ted_train_files(tmp_path)
    a, b = rf.iwslt17_mted_test_tgz(tmp_path / "en-it.tgz", tmp_path / "it-en.tgz", TED_DOCS)
    rf.extract(a, tmp_path / "t")
    rf.extract(b, tmp_path / "t")
    src_name, ref_name = rf.iwslt17_mted_test_names()
    out = tmp_path / "out"
    result = run_cli("ted", "--train-src", files["train_src"], "--train-tgt", files["train_tgt"],
                     "--valid-src", files["dev2010_src"], files["tst2010_src"],
                     "--valid-ref", files["dev2010_ref"], files["tst2010_ref"],
                     "--test-src", tmp_path / "t" / src_name, "--test-ref", tmp_path / "t" / ref_name,
                     "--src", "en", "--tgt", "it", "--outdir", out)
    assert result.returncode == 0, result.stderr
    valid = read_split(out / "valid.en", out / "valid.it", out / "valid.docids")
    assert [d.docid for d in valid] == ["ted-535", "ted-1200"]
    assert "valid: 5 sentences in 2 documents" in result.stdout


# ContraPro in the OS split: 14 films; examples in five of them (hand-computed, context k-1 = 2).
CP_SIZES = [6, 5, 10, 4, 6, 3, 5, 8, 6, 5, 7, 4, 5, 6]


def cp_example(docs, index, segment, src=None, document_id=None):
    doc = docs[index] if index is not None else None
    return {"document id": document_id or doc.docid[len("de/"):].removesuffix(".gz"), "segment id": segment,
            "src segment": src if src is not None else doc.src[segment - 1]}


def cp_examples(docs):
    return [
        cp_example(docs, 0, 3),                 # film 0 (6 lines): lines 1-5 go, line 6 stays (piece @1)
        cp_example(docs, 2, 1),                 # film 2 (10 lines): lines 1-3 ...
        cp_example(docs, 2, 7),                 # ... and 5-9 go; lines 4 and 10 stay (pieces @1, @2)
        {**cp_example(docs, 4, 4), "document id": "1994_100004_1004.de"},  # film 4: lines 2-6 go, 1 stays
        cp_example(docs, None, 2, src="No such line.", document_id="2999_1_1.de"),  # film not in the corpus
        cp_example(docs, 6, 99, src="Out of range."),                      # film 6: segment id past its end
        cp_example(docs, 8, 2, src="Not the source of line 2."),           # film 8: source differs
    ]


def run_os_cli(tmp_path, removal):
    docs = os_docs(CP_SIZES)
    zip_path = rf.opus_moses_zip(tmp_path / "de-en.txt.zip", docs)
    cp = write(tmp_path / "contrapro.json", json.dumps(cp_examples(docs)))
    out = tmp_path / removal
    result = run_cli("os", "--zip", zip_path, "--contrapro", cp, "--outdir", out, "--valid-sentences", 10,
                     "--valid-docs", 2, "--test-sentences", 10, "--test-docs", 2, "--contrapro-removal", removal,
                     "--contrapro-context", 2, "--report", out / "report.json")
    assert result.returncode == 0, result.stderr
    splits = {s: read_split(out / f"{s}.en", out / f"{s}.de", out / f"{s}.docids")
              for s in ("train", "valid", "test", "contrapro_docs")}
    return docs, splits, json.loads((out / "report.json").read_text()), result.stdout


def test_cli_os_removes_the_contrapro_segments_and_their_context_from_train(tmp_path):
    docs, splits, report, stdout = run_os_cli(tmp_path, "segments")
    films = [docs[i].docid for i in (0, 2, 4, 6, 8)]
    assert [d.docid for d in splits["contrapro_docs"]] == films, "the films are kept whole for ContraPro's context"
    assert [len(d) for d in splits["contrapro_docs"]] == [6, 10, 6, 5, 6]
    held_out = {d.docid for s in ("valid", "test") for d in splits[s]}
    assert not held_out & set(films), "a ContraPro film is never valid or test"
    train = {d.docid: d for d in splits["train"]}
    assert train[f"{docs[0].docid}@1"].src == ["en 0.5"]
    assert train[f"{docs[2].docid}@1"].src == ["en 2.3"] and train[f"{docs[2].docid}@2"].src == ["en 2.9"]
    assert train[f"{docs[4].docid}@1"].src == ["en 4.0"]
    assert train[docs[6].docid].src == docs[6].src and train[docs[8].docid].src == docs[8].src, \
        "a film whose examples were not found stays whole"
    assert not {docs[i].docid for i in (0, 2, 4)} & set(train), "a split film's lines only come as its pieces"
    others = [d for i, d in enumerate(docs) if i not in (0, 2, 4, 6, 8) and d.docid not in held_out]
    assert all(train[d.docid].src == d.src for d in others)
    total = sum(CP_SIZES) - sum(len(d) for s in ("valid", "test") for d in splits[s])
    assert report["train"] == {"sentences": total - 18, "documents": len(others) + 2 + 4}
    assert sum(len(d) for d in splits["train"]) == total - 18
    cut = report["contrapro_removed_from_train"]
    assert cut == {"removal": "segments", "context": 2, "lines": 18, "films_touched": 3, "films_split_into": 4,
                   "examples": 7, "examples_found": 4,
                   "examples_not_found": {"missing_document": 1, "segment_out_of_range": 1, "source_mismatch": 1},
                   "examples_not_found_first": [4, 5, 6]}
    assert report["contrapro_films"] == {"sentences": 33, "documents": 5}
    assert report["contrapro_documents_requested"] == 6 and report["contrapro_documents_not_in_corpus"] == 1
    assert "4/7 examples found" in stdout and "18 lines of 3 films" in stdout


def test_cli_os_films_removal_removes_every_contrapro_film_and_keeps_the_same_valid_and_test(tmp_path):
    docs, splits, report, stdout = run_os_cli(tmp_path, "films")
    _, segment_splits, segment_report, _ = run_os_cli(tmp_path, "segments")
    films = {docs[i].docid for i in (0, 2, 4, 6, 8)}
    train_ids = {d.docid.split("@")[0] for d in splits["train"]}
    assert not train_ids & films and [d.docid for d in splits["contrapro_docs"]] == sorted(films, key=[d.docid for d in docs].index)
    for split in ("valid", "test"):
        assert [d.docid for d in splits[split]] == [d.docid for d in segment_splits[split]]
    held_out = sum(len(d) for s in ("valid", "test") for d in splits[s])
    assert report["train"]["sentences"] == sum(CP_SIZES) - held_out - 33
    assert report["train"]["sentences"] == segment_report["train"]["sentences"] - (33 - 18)
    cut = report["contrapro_removed_from_train"]
    assert (cut["removal"], cut["lines"], cut["films_touched"], cut["examples_found"]) == ("films", 33, 5, 4)
    assert "33 lines of 5 films" in stdout


def test_contrapro_lines_clip_the_context_at_the_document_edges():
    docs = os_docs([4])
    lines = opus.ContraProLines([opus.ContraProSegment(0, "1990_100000_1000.de", 1, "en0.0"),
                                 opus.ContraProSegment(1, "1990/100000/1000.xml", 4, "en0.3")], context=1)
    assert lines.lines(docs[0].docid, docs[0].src) == {0, 1, 2, 3}
    assert lines.report()["examples_found"] == 2


def test_contrapro_segments_match_the_source_up_to_whitespace(tmp_path):
    docs = os_docs([4])
    path = write(tmp_path / "contrapro.json", json.dumps([
        {"document id": "1990/100000/1000.xml", "segment id": 2, "src segment": " en  0.1\t"}]))
    zero = opus.ContraProLines(opus.read_contrapro_segments(path), context=0)
    assert zero.lines(docs[0].docid, docs[0].src) == {1}, "as ContraPro's own tools compare"


def test_split_at_removed_keeps_runs_of_adjacent_lines():
    doc = os_docs([6])[0]
    assert opus.split_at_removed(doc, set()) == [doc]
    pieces = opus.split_at_removed(doc, {0, 2, 3})
    assert [(p.docid.rsplit("@", 1)[1], p.src) for p in pieces] == [("1", ["en 0.1"]), ("2", ["en 0.4", "en 0.5"])]
    assert opus.split_at_removed(doc, set(range(6))) == []


@pytest.mark.parametrize("example, message", [
    ({"segment id": 1, "src segment": "x"}, "example 0: expected an object with a non-empty string 'document id'"),
    ({"document id": "a.de", "segment id": "1", "src segment": "x"}, "example 0: field 'segment id': expected an integer"),
    ({"document id": "a.de", "segment id": 1}, "example 0: field 'src segment': expected the example's source sentence"),
])
def test_contrapro_segments_with_a_bad_field_name_the_file_and_example(tmp_path, example, message):
    path = write(tmp_path / "contrapro.json", json.dumps([example]))
    with pytest.raises(InputError, match=message) as err:
        opus.read_contrapro_segments(path)
    assert str(path) in str(err.value)

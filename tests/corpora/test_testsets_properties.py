"""docnmt.corpora.testsets against the field's reference readers, on generated files (hypothesis).

WMT XML files with the field's variations (empty documents and paragraphs, several paragraphs, references and
systems, a reference without a translator, test-suite collections and documents, a document id in two
collections, entities, character references and CDATA, odd white space in and around segments, Windows line
ends, Unicode) are read by the reader and by sacrebleu's own extraction (``WMTXMLDataset._unwrap_wmt21_or_later``,
sacrebleu 2.6.0): the test split's document ids, segments and references are sacrebleu's, but for the rules the
module documents (each counted in its "left out" lines):

* a run of white space that holds a line break is one space (stated here apart, :func:`one_line`), as one line
  of the common format holds none;
* a document whose segments are all blank is left out (the common format holds no such document);
* a document id that occurs in two collections is prefixed with its collection's.

A submission written from the translation side reads back in sacrebleu with exactly our hypotheses. sacrebleu has
no reader for WMT24++ JSONL: those files are compared with a plain reading of the format (one ``json.loads`` a line,
google/wmt24pp's fields) under the same rules. The examples are derandomized and the database is off, so that
every run tries the same files.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

import pytest
from hypothesis import HealthCheck, assume, event, given, settings, strategies as st

from docnmt import SEP
from docnmt.corpora import testsets
from docnmt.textio import InputError, read_lines

#: Reproducible and quick (the module runs in a few seconds on one core): the same examples every run, no database.
PROPERTIES = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                      suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

#: The characters at which ``str.splitlines`` ends a line: what one line of the common format cannot hold.
LINE_BREAKS = "".join(c for c in map(chr, range(0x3000)) if len(f"a{c}b".splitlines()) == 2)

#: White space of the field's files: spaces, tabs, line breaks (Unix, Windows, Unicode), no-break, thin and
#: ideographic spaces, and a zero-width space (not white space).
SPACES = [" ", "  ", "\t", " \t ", "\n", "\r\n", "\n\n", "\n      ", "\xa0", "\u2009", "\u3000", "\u2028", "\x85",
          "\u200b"]
#: What XML escapes, and what looks like markup.
MARKUP = ["&", "<", ">", '"', "'", "&amp;", "<b>x</b>", "]]>", "--", "&#10;"]
WORDS = st.text(st.characters(exclude_categories=("Cs", "Cc", "Cn")), min_size=1, max_size=5)
TOKENS = st.one_of(WORDS, st.sampled_from(SPACES), st.sampled_from(MARKUP))
#: How a piece of text is written in the XML: escaped, as character references, or in a CDATA section.
WRITINGS = st.sampled_from(["escaped", "escaped", "references", "cdata"])
#: A segment's text: pieces, each with its writing (none: an empty segment).
TEXTS = st.lists(st.tuples(TOKENS, WRITINGS), max_size=6)
#: Document ids: a few, so that two collections share some; Unicode, an entity, an inner space.
DOC_IDS = st.sampled_from(["1", "14", "doc-a", "Nachrichten_ü", "a&b", "x y", "ẞ.2"])
#: The translators of a file's references (None: a <ref> without one, whose field in sacrebleu is "ref").
TRANSLATORS = st.sampled_from([[None], ["A"], ["A", "B"], ["B", "A", "C"]])
SYSTEM = "docnmt-doc-trans"


def xml_text(pieces) -> str:
    out = []
    for text, writing in pieces:
        if writing == "references":
            out.append("".join(f"&#{ord(c)};" if i % 2 else f"&#x{ord(c):X};" for i, c in enumerate(text)))
        elif writing == "cdata" and "]]>" not in text:
            out.append(f"<![CDATA[{text}]]>")
        else:
            out.append(escape(text))
    return "".join(out)


@st.composite
def xml_documents(draw, docid: str, domain: str, translators: list, systems: list) -> dict:
    """One ``<doc>``: paragraphs (maybe none, maybe empty), segment ids that increase (gaps allowed), texts."""
    paragraphs = draw(st.lists(st.integers(0, 3), min_size=draw(st.sampled_from([0, 1, 1, 1])), max_size=3))
    count = sum(paragraphs)
    ids = sorted(draw(st.lists(st.integers(0, 40), unique=True, min_size=count, max_size=count)))
    testsuite = draw(st.sampled_from([None] * 5 + ["pronouns", ""]))
    refs = draw(st.sampled_from([translators, translators, translators[:1], []]))
    return {"id": docid, "domain": domain, "testsuite": testsuite, "paragraphs": paragraphs, "ids": ids,
            "src": [draw(TEXTS) for _ in ids],
            "refs": {t: [draw(TEXTS) for _ in ids] for t in refs},
            "hyps": {s: [draw(TEXTS) for _ in ids] for s in systems}}


@st.composite
def wmt_xml_files(draw) -> dict:
    translators = draw(TRANSLATORS)
    systems = draw(st.lists(st.sampled_from(["online-B", SYSTEM]), unique=True, max_size=2))
    collections = draw(st.lists(st.sampled_from(["general", "speech", "testsuites"]), unique=True, min_size=1,
                                max_size=3))
    spec = {"translators": translators, "crlf": draw(st.booleans()), "compact": draw(st.booleans()),
            "collections": []}
    number = itertools.count()
    for collection in collections:
        ids = draw(st.lists(DOC_IDS, unique=True, max_size=4))
        # a domain of its own to each document: sacrebleu's extraction (docid and domain of each segment) then
        # tells two documents of one id apart
        docs = [draw(xml_documents(docid, f"{collection}-{next(number)}", translators, systems)) for docid in ids]
        spec["collections"].append((collection, docs))
    return spec


def side(tag: str, attributes: str, doc: dict, texts: list, compact: bool) -> list[str]:
    if not doc["paragraphs"] and compact:
        return [f"      <{tag} {attributes}/>"]
    lines, segments = [f"      <{tag} {attributes}>"], iter(zip(doc["ids"], texts))
    for size in doc["paragraphs"]:
        if not size:
            lines.append("        <p/>" if compact else "        <p>\n        </p>")
            continue
        segs = []
        for segid, pieces in itertools.islice(segments, size):
            text = xml_text(pieces)
            segs.append(f'<seg id="{segid}"/>' if compact and not text else f'<seg id="{segid}">{text}</seg>')
        lines.append("        <p>" + "".join(segs) + "</p>" if compact else
                     "\n".join(["        <p>", *(f"          {seg}" for seg in segs), "        </p>"]))
    return lines + [f"      </{tag}>"]


def write_xml(spec: dict, path: Path) -> None:
    lines = ['<?xml version="1.0" encoding="utf-8"?>', '<dataset id="wmttest2099">']
    for collection, docs in spec["collections"]:
        lines.append(f'  <collection id="{collection}">')
        for doc in docs:
            attrs = {"id": doc["id"], "origlang": "en", "domain": doc["domain"]}
            if doc["testsuite"] is not None:
                attrs["testsuite"] = doc["testsuite"]
            lines.append(f"    <doc {' '.join(f'{k}={quoteattr(v)}' for k, v in attrs.items())}>")
            lines += side("src", 'lang="en"', doc, doc["src"], spec["compact"])
            for translator, texts in doc["refs"].items():
                who = f" translator={quoteattr(translator)}" if translator is not None else ""
                lines += side("ref", f'lang="de"{who}', doc, texts, spec["compact"])
            for system, texts in doc["hyps"].items():
                lines += side("hyp", f'system="{system}" lang="de"', doc, texts, spec["compact"])
            lines.append("    </doc>")
        lines.append("  </collection>")
    end = "\r\n" if spec["crlf"] else "\n"
    path.write_bytes(end.join(lines + ["</dataset>", ""]).encode("utf-8"))


def raw_texts(spec: dict):
    for _, docs in spec["collections"]:
        for doc in docs:
            for texts in [doc["src"], *doc["refs"].values(), *doc["hyps"].values()]:
                for pieces in texts:
                    yield "".join(text for text, _ in pieces)


def sacrebleu_documents(fields: dict, ref_field: str) -> list[tuple[str, str, list[str | None], list[str]]]:
    """sacrebleu's extraction, a document at a time: ``[(doc id, domain, sources, references)]``."""
    rows = zip(fields["docid"], fields.get("domain", [None] * len(fields["src"])), fields["src"], fields[ref_field])
    return [(docid, domain, [s for *_, s, _ in group], [r for *_, r in group])
            for (docid, domain), group in ((key, list(group)) for key, group in
                                           itertools.groupby(rows, key=lambda row: row[:2]))]


def breaks(text: str | None) -> bool:
    return any(c in LINE_BREAKS for c in text or "")


def one_line(text: str | None) -> str:
    """The documented rule, stated here apart from the module's: a run of white space that holds a line break is
    one space; None (sacrebleu's text of an empty ``<seg/>``) is ""."""
    return re.sub(rf"\s*[{re.escape(LINE_BREAKS)}]\s*", " ", text or "")


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("generated")


def test_the_line_breaks_are_those_of_str_splitlines():
    assert set(LINE_BREAKS) == set("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
    assert all(testsets.LINE_BREAK_RUN.fullmatch(c) for c in LINE_BREAKS)


@PROPERTIES
@given(st.lists(st.one_of(TOKENS, st.sampled_from(list(LINE_BREAKS) + ["\x1f", "\r", "\t\n\t"])), max_size=8))
def test_flat_puts_a_text_on_one_line_and_changes_nothing_but_its_line_breaks(tokens):
    text = "".join(tokens)
    one = testsets.flat(text)
    assert not breaks(one), repr(one)
    assert one.split() == text.split(), "the words and the characters in them are kept"
    if not breaks(text):
        assert one == text, "a text without a line break is kept as it is"
    assert testsets.has_line_break(text) == (one != text)


@PROPERTIES
@given(wmt_xml_files())
def test_wmt_xml_reads_as_sacrebleu_extracts_the_same_file(folder, spec):
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    assume(not any(SEP in text for text in raw_texts(spec)))
    path = folder / "wmttest2099.en-de.xml"
    write_xml(spec, path)
    docs = [doc for _, collection in spec["collections"] for doc in collection]
    if not docs or not any(doc["refs"] for doc in docs):
        with pytest.raises(InputError) as err:
            testsets.read_test_split(path, "wmt-xml", "en", "de")
        assert re.match(rf"{re.escape(str(path))}:\d+: ", str(err.value)), "the error names the file and line"
        with pytest.raises(AssertionError, match="languages found"):  # sacrebleu refuses it too
            WMTXMLDataset._unwrap_wmt21_or_later(str(path))
        return

    fields = WMTXMLDataset._unwrap_wmt21_or_later(str(path))
    translators = spec["translators"]
    field = {t: "ref" if t is None else f"ref:{t}" for t in translators}
    all_refs = all(set(doc["refs"]) == set(translators) for doc in docs if doc["refs"])
    collection_of = {doc["domain"]: name for name, collection in spec["collections"] for doc in collection}
    repeated = len({doc["id"] for doc in docs}) < len(docs)
    for reference in [None, translators[-1]] if all_refs else [None]:  # None: the file's first translator's
        documents, left_out = testsets.read_test_split(path, "wmt-xml", "en", "de", reference=reference)
        theirs = sacrebleu_documents(fields, field[reference if reference is not None else translators[0]])
        expected, blank, line_breaks = [], 0, 0
        for docid, domain, src, ref in theirs:
            flat_src, flat_ref = [one_line(s) for s in src], [one_line(r) for r in ref]
            if not any(s.strip() or r.strip() for s, r in zip(flat_src, flat_ref)):
                blank += 1  # the common format holds no all-blank document
                continue
            expected.append((f"{collection_of[domain]}/{docid}" if repeated else docid, flat_src, flat_ref))
            line_breaks += sum(breaks(s) or breaks(r) for s, r in zip(src, ref))
        assert [(d.docid, d.src, d.tgt) for d in documents] == expected

        kept = {domain for _, domain, *_ in theirs}
        counts = {
            "testsuite": sum(doc["testsuite"] is not None for doc in docs),
            "no segments": sum(doc["testsuite"] is None and not doc["ids"] for doc in docs),
            "no reference": sum(doc["testsuite"] is None and bool(doc["ids"]) and doc["domain"] not in kept
                                for doc in docs),
            "segments": sum(len(doc["ids"]) for doc in docs if doc["domain"] in kept) - len(fields["src"]),
            "blank": blank,
            "line breaks": line_breaks,
        }
        assert left_out == [text.format(counts[key]) for key, text in testsets.XML_LEFT_OUT.items()
                            if counts[key]], counts
        for key in (key for key in counts if counts[key]):  # pytest --hypothesis-show-statistics shows them
            event(f"left out: {key}")
        event(f"documents in the split: {min(len(documents), 3)}{'+' if len(documents) >= 3 else ''}")
        if repeated:
            event("a document id in two collections")


@PROPERTIES
@given(wmt_xml_files())
def test_an_xml_submission_gives_sacrebleu_our_hypotheses_and_keeps_the_file(folder, spec):
    import xml.etree.ElementTree as ET
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    docs = [doc for _, collection in spec["collections"] for doc in collection]
    assume(any(doc["refs"] for doc in docs))  # sacrebleu reads no file without references
    assume(not any(SEP in text for text in raw_texts(spec)))
    path, out = folder / "input.xml", folder / "submission.xml"
    write_xml(spec, path)
    testset = testsets.read_for_translation(path, "wmt-xml")
    sources = testset.sources()
    repeated = len({doc["id"] for doc in docs}) < len(docs)
    name_of = {doc["domain"]: f"{name}/{doc['id']}" if repeated else doc["id"] for name, collection in
               spec["collections"] for doc in collection}
    assert [name for name, *_ in sources] == [name_of[doc["domain"]] for doc in docs if doc["ids"]], \
        "every document with segments is translated, testsuites included"
    # a segment's translation: its document's name and its source on one line
    translations = [[f"{name} {s}" for s in sentences] for name, sentences, _, _ in sources]
    testset.write(out, translations, system=SYSTEM)

    before = WMTXMLDataset._unwrap_wmt21_or_later(str(path))
    after = WMTXMLDataset._unwrap_wmt21_or_later(str(out))
    assert {k: v for k, v in after.items() if k != SYSTEM} == {k: v for k, v in before.items() if k != SYSTEM}, \
        "the sources, references, document ids and other systems are the file's, as sacrebleu extracts them"
    assert after.get(SYSTEM, []) == [f"{name_of[domain]} {one_line(src)}"
                                     for domain, src in zip(after.get("domain", []), after["src"])]
    for doc in ET.parse(out).getroot().iter("doc"):
        (src,), hyps = doc.findall("src"), [h for h in doc.findall("hyp") if h.get("system") == SYSTEM]
        assert len(hyps) == 1 and [len(p) for p in hyps[0]] == [len(p) for p in src], doc.get("id")
    assert testsets.read_test_split(out, "wmt-xml", "en", "de") == testsets.read_test_split(path, "wmt-xml", "en",
                                                                                            "de")


# ---- WMT24++ JSONL -----------------------------------------------------------------------------------------------
#: JSON holds every character: the XML's, and the control characters that XML cannot hold.
JSON_TOKENS = st.one_of(TOKENS, st.sampled_from(["\v", "\f", "\x1c", "\x1e", "\x1f", "\u2029", "\r"]))
JSON_TEXTS = st.lists(JSON_TOKENS, max_size=6).map("".join)


@st.composite
def wmt24pp_files(draw) -> dict:
    ids = draw(st.lists(DOC_IDS, unique=True, min_size=1, max_size=4))
    if draw(st.booleans()):
        ids = list(range(len(ids)))  # document_id: an integer
    rows = []
    for docid in ids:
        for segid in draw(st.lists(st.integers(0, 40), unique=True, min_size=1, max_size=4)):
            rows.append({"lp": "en-de_DE", "domain": draw(st.sampled_from(["news", "literary", "speech"])),
                         "document_id": docid, "segment_id": segid,
                         "is_bad_source": draw(st.sampled_from([False, False, False, True])),
                         "source": draw(JSON_TEXTS), "target": draw(JSON_TEXTS), "original_target": draw(JSON_TEXTS)})
    order = draw(st.permutations(range(len(rows))))
    return {"rows": [rows[i] for i in order], "ascii": draw(st.booleans()), "blank_lines": draw(st.booleans())}


def write_jsonl(spec: dict, path: Path) -> None:
    lines = [json.dumps(row, ensure_ascii=spec["ascii"]) for row in spec["rows"]]
    path.write_text(("\n\n" if spec["blank_lines"] else "\n").join(lines) + "\n", encoding="utf-8")


def plain_reading(path: Path, field: str):
    """google/wmt24pp's format read plainly: a JSON object a line; a document, the rows of one document_id (in the
    order ids first appear) by segment_id; bad sources left out."""
    rows = [json.loads(line) for line in path.read_bytes().decode("utf-8").split("\n") if line.strip()]
    docs: dict = {}
    for row in rows:
        docs.setdefault(row["document_id"], []).append(row)
    return rows, [(str(docid), [r["source"] for r in kept], [r[field] for r in kept])
                  for docid, kept in ((docid, sorted((r for r in group if not r["is_bad_source"]),
                                                     key=lambda r: r["segment_id"]))
                                      for docid, group in docs.items()) if kept]


@PROPERTIES
@given(wmt24pp_files(), st.sampled_from([None, "original_target"]))
def test_wmt24pp_reads_as_the_format_says_and_translations_go_back_to_every_row(folder, spec, reference):
    assume(not any(SEP in row[key] for row in spec["rows"] for key in ("source", "target", "original_target")))
    path, out = folder / "en-de_DE.jsonl", folder / "en-de_DE.out.jsonl"
    write_jsonl(spec, path)
    documents, left_out = testsets.read_test_split(path, "wmt24pp-jsonl", "en", "de", reference=reference)
    rows, theirs = plain_reading(path, reference or "target")
    expected, blank = [], 0
    for docid, src, ref in theirs:
        flat_src, flat_ref = [one_line(s) for s in src], [one_line(r) for r in ref]
        if not any(s.strip() or r.strip() for s, r in zip(flat_src, flat_ref)):
            blank += 1
            continue
        expected.append((docid, flat_src, flat_ref, sum(breaks(s) or breaks(r) for s, r in zip(src, ref))))
    assert [(d.docid, d.src, d.tgt) for d in documents] == [e[:3] for e in expected]
    counts = {"bad": sum(row["is_bad_source"] for row in rows), "blank": blank,
              "line breaks": sum(e[3] for e in expected)}
    assert left_out == [text.format(counts[key]) for key, text in testsets.Wmt24ppJsonl.LEFT_OUT.items()
                        if counts[key]], counts
    for key in (key for key in counts if counts[key]):
        event(f"left out: {key}")

    testset = testsets.read_for_translation(path, "wmt24pp-jsonl")
    sources = testset.sources()
    assert sorted(line for *_, lines, _ in sources for line in lines) == \
        [n for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1) if line.strip()]
    testset.write(out, [[f"{name} {s}" for s in sentences] for name, sentences, _, _ in sources])
    written = [json.loads(line) for line in read_lines(out)]
    assert [{k: v for k, v in row.items() if k != "hypothesis"} for row in written] == rows
    assert [row["hypothesis"] for row in written] == [f"{str(row['document_id'])} {one_line(row['source'])}"
                                                      for row in rows]

"""WMT25's general-task JSONL (wmt-conference/wmt25-general-mt, ``wmt25-genmt.jsonl``): a document a line, its
paragraphs a line each of the test split, and WMT25's submission (:mod:`docnmt.corpora.testsets` describes the
format and registers the reader)."""

from __future__ import annotations

import json
from pathlib import Path

from ..textio import InputError, atomic_write
from .corpus import Document
from .segments import Source, blank, check_document, flat, has_line_break, object_rows, primary


class Wmt25Jsonl:
    """A WMT25 general-task JSONL file (wmt-conference/wmt25-general-mt, ``wmt25-genmt.jsonl``), read: one document a
    line, every language pair in one file, each document's paragraphs split on blank lines as WMT25 splits them."""

    format = "wmt25-jsonl"
    #: The fields a row needs (``refs`` only for a test split).
    FIELDS = ("doc_id", "src_lang", "tgt_lang", "src_text")
    #: WMT25's paragraph separator (humeval/01-prepare_waves.py splits src_text, refs and hypotheses on it).
    PARAGRAPH = "\n\n"

    def __init__(self, path, tgt_lang: str | None = None):
        """``tgt_lang``: where given, translation reads only the documents into that language (the file holds every
        language pair)."""
        self.path = Path(path)
        self.rows: list[tuple[int, dict]] = []
        seen: dict[str, int] = {}
        for number, row in object_rows(self.path):
            for name in self.FIELDS:
                if not isinstance(row.get(name), str) or (name != "src_text" and not row[name].strip()):
                    raise InputError(self.path, f"expected the string field {name!r} (a WMT25 row has "
                                                f"{', '.join(self.FIELDS)} and refs), found {row.get(name)!r}", number)
            if "\n" in row["doc_id"]:
                raise InputError(self.path, f"expected a doc_id on one line, found {row['doc_id']!r}", number)
            if row["doc_id"] in seen:
                raise InputError(self.path, f"doc_id {row['doc_id']!r} occurs twice (first at line "
                                            f"{seen[row['doc_id']]})", number)
            seen[row["doc_id"]] = number
            if tgt_lang is None or primary(row["tgt_lang"]) == primary(tgt_lang):
                self.rows.append((number, row))
        if not self.rows:
            raise InputError(self.path, "expected rows of WMT25 JSONL" + (f" into {tgt_lang}" if tgt_lang else "")
                                        + ", found none")

    def paragraphs(self, text: str) -> list[str]:
        return text.split(self.PARAGRAPH)

    def sources(self) -> list[Source]:
        """Every document's paragraphs (one line of the common format each)."""
        return [(row["doc_id"], [flat(p) for p in self.paragraphs(row["src_text"])],
                 [number] * len(self.paragraphs(row["src_text"])), self.path) for number, row in self.rows]

    def split(self, src: str, tgt: str, reference: str | None = None,
              unit: str = "paragraph") -> tuple[list[Document], list[str]]:
        """The test split of the task's language pair: a document per row, a line per paragraph, the reference
        ``refs[reference].ref`` (default refA) split into as many paragraphs (WMT25's check); rows of other
        language pairs, and rows without that reference, are left out and counted."""
        name = reference or "refA"
        documents, left = [], dict.fromkeys(self.LEFT_OUT, 0)
        for number, row in self.rows:
            if primary(row["src_lang"]) != primary(src) or primary(row["tgt_lang"]) != primary(tgt):
                left["pair"] += 1
                continue
            refs = row.get("refs") or {}
            if not isinstance(refs, dict) or not isinstance((refs.get(name) or {}).get("ref"), str):
                left["no reference"] += 1
                continue
            source, target = self.paragraphs(row["src_text"]), self.paragraphs(refs[name]["ref"])
            if len(source) != len(target):
                raise InputError(self.path, f"document {row['doc_id']!r}: {len(source)} source paragraphs but "
                                            f"{len(target)} in refs.{name}.ref (WMT25 splits both on blank lines "
                                            "and requires as many)", number)
            doc = Document(row["doc_id"], [flat(t) for t in source], [flat(t) for t in target])
            if blank(doc):
                left["blank"] += 1
                continue
            left["line breaks"] += sum(has_line_break(t) for t in source + target)
            documents.append(check_document(self.path, doc, [number] * len(source)))
        return documents, [text.format(left[key]) for key, text in self.LEFT_OUT.items() if left[key]]

    #: The lines of what :meth:`split` left out, by reason.
    LEFT_OUT = {
        "pair": "{} documents of other language pairs",
        "no reference": "{} documents without the reference",
        "blank": "{} documents whose paragraphs are all blank (white space only), which the common format cannot "
                 "hold",
        "line breaks": "the line breaks inside {} paragraphs (each run of white space that holds one is one space)",
    }

    def write(self, output, translations: list[list[str]], system: str | None = None) -> None:
        """WMT25's submission: one ``{"doc_id", "hypothesis"}`` a document, its paragraphs' translations joined by a
        blank line, each checked as WMT25 checks it (as many paragraphs as its source), written atomically."""
        if len(translations) != len(self.rows):
            raise ValueError(f"{len(translations)} translated documents for the {len(self.rows)} of {self.path}")
        lines = []
        for (number, row), hyps in zip(self.rows, translations):
            hypothesis = self.PARAGRAPH.join(hyps)
            expected = len(self.paragraphs(row["src_text"]))
            if len(self.paragraphs(hypothesis)) != expected:
                raise ValueError(f"{self.path}:{number}: document {row['doc_id']!r}: the translation has "
                                 f"{len(self.paragraphs(hypothesis))} paragraphs, the source {expected} (a "
                                 "translation holds a blank line)")
            lines.append(json.dumps({"doc_id": row["doc_id"], "hypothesis": hypothesis}, ensure_ascii=False) + "\n")
        with atomic_write(output) as handle:
            handle.write("".join(lines))

"""Tiny fixture files in the exact formats of the real corpora.

Tests (and the loopback workflow test, which serves these files in place of
the real downloads) build them from small document lists
(:class:`docnmt.corpora.corpus.Document`: ``src`` = English, ``tgt`` = the other
language). The layouts follow the real releases:

- ``news-commentary-v14.de-en.tsv.gz``: ``de TAB en`` per line, a blank line
  between documents (``http://data.statmt.org/news-commentary/v14/training/``).
- WMT ``test.tgz``: ``test/newstest{YEAR}-ende-src.en.sgm`` and
  ``test/newstest{YEAR}-ende-ref.de.sgm`` (2015 and 2018 alike, as listed by
  sacreBLEU's dataset table), ``<srcset>``/``<refset>``, ``<doc sysid="ref"
  docid=... genre=... origlang=...>``, ``<p>``, ``<seg id="N">``.
- IWSLT17 multilingual training archive ``DeEnItNlRo-DeEnItNlRo.tgz``:
  ``DeEnItNlRo-DeEnItNlRo/train.tags.en-it.{en,it}`` and
  ``IWSLT17.TED.{dev2010,tst2010}.en-it.{en,it}.xml``.
- IWSLT17 multilingual test archives ``en-it.tgz``
  (``en-it/IWSLT17.TED.tst2017.mltlng.en-it.en.xml``) and ``it-en.tgz``
  (``it-en/IWSLT17.TED.tst2017.mltlng.it-en.it.xml``): the Italian *source*
  of it->en is the reference of en->it.
- The XML layout copies the real ``IWSLT17.TED.tst2017.en-de.*.xml`` files
  (``/work/shared/real-samples``): meta lines with a trailing space in the
  English file and a leading space in the other, ``<seg id="N"> text </seg>``.
- OPUS Moses zip ``de-en.txt.zip``: ``OpenSubtitles.de-en.{de,en,ids}`` (or the
  older ``OpenSubtitles2018.de-en.*``), README and LICENSE; ``.ids`` lines
  ``de/Y/IMDB/ID.xml.gz TAB en/Y/IMDB/ID.xml.gz TAB DE_IDS TAB EN_IDS``.

SGML/XML text is escaped (``& < > " '`` as ``&amp; &lt; &gt; &quot; &#39;``) so
that parsers must unescape it; the plain-text formats are written verbatim.
"""

from __future__ import annotations

import gzip
import io
import re
import tarfile
import tempfile
import zipfile
from pathlib import Path
from typing import Sequence

from docnmt.corpora.corpus import Document

LANG_NAMES = {"en": "english", "de": "german", "it": "italian", "nl": "dutch", "ro": "romanian"}


def escape(text: str) -> str:
    """Escape text the way the fixtures' SGML/XML does."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;").replace("'", "&#39;"))


def _write_bytes(path, data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gz":
        data = gzip.compress(data, mtime=0)
    path.write_bytes(data)
    return path


def _tgz(path, members: dict[str, str | bytes]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        dirs = sorted({m.split("/")[0] for m in members if "/" in m})
        for name in dirs:
            info = tarfile.TarInfo(name)
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            tar.addfile(info)
        for name, text in members.items():
            data = text if isinstance(text, bytes) else text.encode("utf-8")
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return path


def extract(archive, dest) -> Path:
    """Extract a .tgz or .zip fixture into ``dest``; return ``dest``."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    archive = Path(archive)
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(dest)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")
    return dest


# --------------------------------------------------------------------------
# NEWS
# --------------------------------------------------------------------------


def news_commentary_tsv_text(docs: Sequence[Document], separator: str = "") -> str:
    """The TSV text: ``de TAB en`` lines, documents separated by a line ``separator`` ("" or e.g. "\\t")."""
    blocks = ["".join(f"{de}\t{en}\n" for en, de in zip(doc.src, doc.tgt)) for doc in docs]
    return (separator + "\n").join(blocks)


def news_commentary_tsv_gz(path, docs: Sequence[Document], separator: str = "") -> Path:
    """Write ``news-commentary-v14.de-en.tsv.gz`` (gzip when ``path`` ends in .gz)."""
    return _write_bytes(path, news_commentary_tsv_text(docs, separator).encode("utf-8"))


def wmt_sgm_text(docs: Sequence[Document], side: str, setid: str, src_lang: str = "en", tgt_lang: str = "de",
                 genre: str = "news", origlang: str = "en") -> str:
    """One WMT newstest SGML file: ``side`` is "src" (English of the docs) or "ref" (their targets)."""
    if side == "src":
        lines = [f'<srcset setid="{setid}" srclang="any">']
    else:
        lines = [f'<refset setid="{setid}" srclang="any" trglang="{tgt_lang}">']
    for doc in docs:
        lines.append(f'<doc sysid="ref" docid="{doc.docid}" genre="{genre}" origlang="{origlang}">')
        lines.append("<p>")
        for number, text in enumerate(doc.src if side == "src" else doc.tgt, start=1):
            lines.append(f'<seg id="{number}">{escape(text)}</seg>')
        lines.append("</p>")
        lines.append("</doc>")
    lines.append("</srcset>" if side == "src" else "</refset>")
    return "\n".join(lines) + "\n"


def wmt_member_names(year: int, src_lang: str = "en", tgt_lang: str = "de") -> tuple[str, str]:
    """Member names of the source and reference SGML in the WMT ``test.tgz``."""
    pair = f"{src_lang}{tgt_lang}"
    return (f"test/newstest{year}-{pair}-src.{src_lang}.sgm", f"test/newstest{year}-{pair}-ref.{tgt_lang}.sgm")


def wmt_test_tgz(path, year: int, docs_src: Sequence[Document], docs_ref: Sequence[Document] | None = None,
                 src_lang: str = "en", tgt_lang: str = "de", extra: dict[str, str] | None = None) -> Path:
    """Write a WMT ``test.tgz`` holding newstest{year} for en-de.

    The source side is the English of ``docs_src``; the reference side the
    targets of ``docs_ref`` (default: the same documents). ``extra``: further
    members, name -> text (another release of a set, under other names).
    """
    setid = f"newstest{year}"
    src_name, ref_name = wmt_member_names(year, src_lang, tgt_lang)
    return _tgz(path, {
        src_name: wmt_sgm_text(docs_src, "src", setid, src_lang, tgt_lang),
        ref_name: wmt_sgm_text(docs_ref if docs_ref is not None else docs_src, "ref", setid, src_lang, tgt_lang),
        **(extra or {}),
    })


# --------------------------------------------------------------------------
# TED
# --------------------------------------------------------------------------


def _talkid(doc: Document) -> str:
    return doc.docid[4:] if doc.docid.startswith("ted-") else doc.docid


def _slug(doc: Document) -> str:
    return f"speaker_{_talkid(doc)}_a_talk_about_things"


def iwslt_xml_text(docs: Sequence[Document], lang: str, setid: str, side: str = "src",
                   src_lang: str = "en", tgt_lang: str = "it", set_tag: str | None = None) -> str:
    """One IWSLT17 XML file; ``side`` "src" uses the documents' English, "ref" their targets.

    ``set_tag`` defaults to ``srcset`` (as in the real tst2017 files, where
    both languages' files are sources of their own direction).
    """
    english_style = side == "src"
    pad_before, pad_after = ("", " ") if english_style else (" ", "")
    tag = set_tag or "srcset"
    attrs = f'setid="{setid}" srclang="{LANG_NAMES.get(src_lang if side == "src" else lang, lang)}"'
    if tag == "refset":
        attrs += f' trglang="{LANG_NAMES.get(tgt_lang, tgt_lang)}" refid="ref"'
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', "<mteval>", f"<{tag} {attrs}>"]
    for doc in docs:
        talkid = _talkid(doc)
        texts = doc.src if side == "src" else doc.tgt
        title = "How &quot;free&quot; is our freedom?" if english_style else "Wie &quot;frei&quot; ist es?"
        credits = ("<reviewer></reviewer>", "<translator></translator>") if english_style else (
            '<reviewer href="http://www.ted.com/profiles/597058">Ann Reviewer</reviewer>',
            '<translator href="http://www.ted.com/profiles/1059395">Tom &amp; Co</translator>')
        meta = [
            f"<url>http://www.ted.com/talks/{_slug(doc)}</url>",
            "<description>TED Talk Subtitles and Transcript: A talk about R&amp;D, &lt;code&gt; and "
            "it&#39;s future.</description>",
            "<keywords>talks, Internet, TED Fellows, government</keywords>",
            f"<talkid>{talkid}</talkid>",
            f"<title>Speaker {talkid}: {title}</title>",
            *credits,
        ]
        lines.append(f'<doc docid="{talkid}" genre="lectures">')
        lines.extend(f"{pad_before}{m}{pad_after}" for m in meta)
        for number, text in enumerate(texts, start=1):
            if english_style:
                lines.append(f'<seg id="{number}"> {escape(text)}    </seg>')
            else:
                lines.append(f'<seg id="{number}">  {escape(text)}  </seg>')
        lines.append("</doc>")
    lines.append(f"</{tag}>")
    lines.append("</mteval>")
    return "\n".join(lines) + "\n"


def train_tags_text(docs: Sequence[Document], side: str, credits: str = "header", doc_wrapper: bool = False) -> str:
    """One ``train.tags.{pair}.{lang}`` file: a meta block per talk, then one sentence per line.

    ``credits``: where the ``<reviewer>``/``<translator>`` lines go, "header"
    (after ``<description>``), "end" (after the talk's text) or "none".
    ``doc_wrapper`` wraps each talk in ``<doc docid=... genre="lectures">`` /
    ``</doc>``. Text is written verbatim (train.tags is plain text).
    """
    english = side == "src"
    lines = []
    for doc in docs:
        talkid = _talkid(doc)
        credit_lines = [f'<reviewer href="http://www.ted.com/profiles/{talkid}1">Rita Reviewer</reviewer>',
                        f'<translator href="http://www.ted.com/profiles/{talkid}2">Tino Translator</translator>']
        if english:
            credit_lines = []  # the English transcript has no translator
        if doc_wrapper:
            lines.append(f'<doc docid="{talkid}" genre="lectures">')
        lines += [
            f"<url>http://www.ted.com/talks/{_slug(doc)}</url>",
            "<keywords>talks, science, technology</keywords>",
            f"<speaker>Speaker {talkid}</speaker>",
            f"<talkid>{talkid}</talkid>",
            f"<title>Speaker {talkid}: {'A talk' if english else 'Un discorso'}</title>",
            f"<description>TED Talk Subtitles and Transcript: {'About things' if english else 'Sulle cose'}."
            "</description>",
        ]
        if credits == "header":
            lines += credit_lines
        lines += list(doc.src if english else doc.tgt)
        if credits == "end":
            lines += credit_lines
        if doc_wrapper:
            lines.append("</doc>")
    return "\n".join(lines) + "\n"


def iwslt17_train_names(src: str = "en", tgt: str = "it") -> dict[str, str]:
    """Member names in ``DeEnItNlRo-DeEnItNlRo.tgz`` for one pair."""
    top = "DeEnItNlRo-DeEnItNlRo"
    pair = f"{src}-{tgt}"
    return {
        "train_src": f"{top}/train.tags.{pair}.{src}",
        "train_tgt": f"{top}/train.tags.{pair}.{tgt}",
        "dev2010_src": f"{top}/IWSLT17.TED.dev2010.{pair}.{src}.xml",
        "dev2010_ref": f"{top}/IWSLT17.TED.dev2010.{pair}.{tgt}.xml",
        "tst2010_src": f"{top}/IWSLT17.TED.tst2010.{pair}.{src}.xml",
        "tst2010_ref": f"{top}/IWSLT17.TED.tst2010.{pair}.{tgt}.xml",
        "readme": f"{top}/README",
    }


def iwslt17_train_tgz(path, train_docs: Sequence[Document], dev2010_docs: Sequence[Document],
                      tst2010_docs: Sequence[Document], src: str = "en", tgt: str = "it",
                      credits: str = "header") -> Path:
    """Write ``DeEnItNlRo-DeEnItNlRo.tgz`` with one pair's train.tags and dev2010/tst2010 XML."""
    names = iwslt17_train_names(src, tgt)
    members = {
        names["train_src"]: train_tags_text(train_docs, "src", credits),
        names["train_tgt"]: train_tags_text(train_docs, "ref", credits),
        names["readme"]: "IWSLT 2017 evaluation campaign: training/development for the multilingual MT task\n"
                         "(fixture: a few talks only)\n",
    }
    for setname, docs in (("dev2010", dev2010_docs), ("tst2010", tst2010_docs)):
        setid = f"iwslt2017-{setname}"
        members[names[f"{setname}_src"]] = iwslt_xml_text(docs, src, setid, "src", src, tgt)
        members[names[f"{setname}_ref"]] = iwslt_xml_text(docs, tgt, setid, "ref", src, tgt, set_tag="refset")
    return _tgz(path, members)


def iwslt17_mted_test_names(src: str = "en", tgt: str = "it") -> tuple[str, str]:
    """Member names of the tst2017.mltlng source (in {src}-{tgt}.tgz) and reference (in {tgt}-{src}.tgz)."""
    return (f"{src}-{tgt}/IWSLT17.TED.tst2017.mltlng.{src}-{tgt}.{src}.xml",
            f"{tgt}-{src}/IWSLT17.TED.tst2017.mltlng.{tgt}-{src}.{tgt}.xml")


def iwslt17_mted_test_tgz(src_tgz, ref_tgz, docs: Sequence[Document], src: str = "en", tgt: str = "it") -> tuple[Path, Path]:
    """Write ``en-it.tgz`` (English source) and ``it-en.tgz`` (Italian, the reference) of tst2017.mltlng."""
    src_name, ref_name = iwslt17_mted_test_names(src, tgt)
    readme = "IWSLT 2017 evaluation campaign: test sets for the MT Talk task\n(fixture)\n"
    setid = "iwslt2017-tst2017"
    a = _tgz(src_tgz, {src_name: iwslt_xml_text(docs, src, setid, "src", src, tgt), f"{src}-{tgt}/README": readme})
    b = _tgz(ref_tgz, {ref_name: iwslt_xml_text(docs, tgt, setid, "ref", tgt, src), f"{tgt}-{src}/README": readme})
    return a, b


#: The top folder of Google Drive's archives of WIT3's releases, as this fixture guesses it: the real one cannot be
#: checked offline, so the sources find their members by name at any depth ('**/').
DRIVE_TOP = {"mted-test": "2017-01-mted-test", "trnmted": "2017-01-trnmted"}


def iwslt17_mted_test_drive_tgz(path, docs: Sequence[Document], src: str = "en", tgt: str = "it") -> Path:
    """Google Drive's ``2017-01-mted-test.tgz``: a ``.tgz`` per pair under ``texts/{a}/{b}/{a}-{b}.tgz`` (WIT3's
    layout), the pair's two (``{src}-{tgt}``, ``{tgt}-{src}``) and en-de's, whose members the sources must not take."""
    with tempfile.TemporaryDirectory() as tmp:
        members = {}
        for a, b in ((src, tgt), ("en", "de")):
            pair, back = iwslt17_mted_test_tgz(Path(tmp) / f"{a}-{b}.tgz", Path(tmp) / f"{b}-{a}.tgz", docs, a, b)
            members[f"{DRIVE_TOP['mted-test']}/texts/{a}/{b}/{a}-{b}.tgz"] = pair.read_bytes()
            members[f"{DRIVE_TOP['mted-test']}/texts/{b}/{a}/{b}-{a}.tgz"] = back.read_bytes()
        return _tgz(path, members)


def iwslt17_trnmted_drive_tgz(path, inner: Path) -> Path:
    """Google Drive's ``2017-01-trnmted.tgz``: WIT3's ``DeEnItNlRo-DeEnItNlRo.tgz`` (``inner``) inside."""
    name = f"{DRIVE_TOP['trnmted']}/texts/DeEnItNlRo/DeEnItNlRo/DeEnItNlRo-DeEnItNlRo.tgz"
    return _tgz(path, {name: Path(inner).read_bytes(), f"{DRIVE_TOP['trnmted']}/README": "fixture\n"})


# --------------------------------------------------------------------------
# OS
# --------------------------------------------------------------------------

_OS_PATH = re.compile(r"^de/([0-9]+)/([0-9]+)/([0-9]+)\.xml\.gz$")


def os_docid(year: int, imdb: int, sub: int) -> str:
    """A German OpenSubtitles file path, the document id of an OS document."""
    return f"de/{year}/{imdb}/{sub}.xml.gz"


def opus_ids_lines(docs: Sequence[Document]) -> list[str]:
    """``.ids`` lines: German file, English file, German sentence ids, English sentence ids."""
    lines = []
    for doc in docs:
        match = _OS_PATH.match(doc.docid)
        if match is None:
            raise ValueError(f"OS fixture documents need ids like de/1999/123/4567.xml.gz, got {doc.docid!r}")
        year, imdb, sub = match.groups()
        en_file = f"en/{year}/{imdb}/{int(sub) + 1000}.xml.gz"
        de_sid = en_sid = 0
        for index in range(len(doc)):
            de_sid += 1
            en_sid += 1
            en_ids = str(en_sid)
            if index % 3 == 1:  # an n:m alignment, as in the real file ("335\t339 340")
                en_sid += 1
                en_ids = f"{en_sid - 1} {en_sid}"
            lines.append(f"{doc.docid}\t{en_file}\t{de_sid}\t{en_ids}")
    return lines


def opus_moses_zip(path, docs: Sequence[Document], naming: str = "OpenSubtitles",
                   ids_lines: Sequence[str] | None = None) -> Path:
    """Write an OPUS Moses zip (``de-en.txt.zip``) with ``{naming}.de-en.{de,en,ids}``, README, LICENSE.

    Document ids must be German file paths (:func:`os_docid`). ``ids_lines``
    replaces the generated ``.ids`` content (for malformed-input tests).
    """
    if naming not in ("OpenSubtitles", "OpenSubtitles2018"):
        raise ValueError(f"naming must be OpenSubtitles or OpenSubtitles2018, got {naming!r}")
    ids = list(ids_lines) if ids_lines is not None else opus_ids_lines(docs)
    de = [t for doc in docs for t in doc.tgt]
    en = [s for doc in docs for s in doc.src]
    version = "v2018"
    readme = (
        f"This is the {naming} {version} corpus from OPUS (http://opus.nlpl.eu/), language pair de-en,\n"
        "in Moses format: aligned sentences in OpenSubtitles.de-en.de and OpenSubtitles.de-en.en (one per line),\n"
        "and their origin in OpenSubtitles.de-en.ids (file names and sentence ids of both languages).\n"
        "Please cite: P. Lison and J. Tiedemann, 2016, OpenSubtitles2016 ... (LREC 2016)\n"
        "(fixture: a few documents only)\n"
    )
    license_text = "Please add a link to http://www.opensubtitles.org/ to your website and to your reports.\n"
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{naming}.de-en.de", "".join(line + "\n" for line in de))
        zf.writestr(f"{naming}.de-en.en", "".join(line + "\n" for line in en))
        zf.writestr(f"{naming}.de-en.ids", "".join(line + "\n" for line in ids))
        zf.writestr("README", readme)
        zf.writestr("LICENSE", license_text)
    return path


def real_ted_en_de(samples_dir, tmp_path, year: int = 2017) -> tuple[list[str], list[str]]:
    """English sources and German references of the real IWSLT17 TED En-De test set tst{year},
    read from the unmodified archives in ../shared/real-samples with the project's parser."""
    from docnmt.corpora.mteval import iwslt_xml

    en = extract(Path(samples_dir) / "en-de.tgz", Path(tmp_path) / "real-en")
    de = extract(Path(samples_dir) / "de-en.tgz", Path(tmp_path) / "real-de")
    docs = iwslt_xml(en / f"en-de/IWSLT17.TED.tst{year}.en-de.en.xml", de / f"de-en/IWSLT17.TED.tst{year}.de-en.de.xml")
    return [s for d in docs for s in d.src], [s for d in docs for s in d.tgt]

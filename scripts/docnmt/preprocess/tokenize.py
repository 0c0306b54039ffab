"""Moses punctuation normalization, tokenization and detokenization.

The settings follow the fairseq/WMT recipes: ``normalize-punctuation.perl``
then ``tokenizer.perl -a`` (aggressive hyphen splitting, ``@-@``) with XML
escaping off, so that the text the models see contains no ``&amp;`` entities
and detokenization restores the normalized raw text.

Speed (OpenSubtitles has 45M lines to tokenize) without giving up exactness:

- :func:`normalize` gives exactly sacremoses' ``MosesPunctNormalizer``
  output (the port of ``normalize-punctuation.perl``), but skips every
  substitution whose trigger text is not in the line, so a plain line costs
  a few substring tests instead of some 30 regex passes.
- :func:`tokenize` uses the C++ port of ``tokenizer.perl`` from the
  ``opus-fast-mosestokenizer`` package (module ``mosestokenizer``; the
  perl-pipe package ``mosestokenizer`` installs the same module name, so the
  two cannot be installed together). Lines of the kinds where that port is
  known to differ from ``tokenizer.perl`` (see :data:`_REFERENCE_CASES`) go
  to sacremoses, which equals ``tokenizer.perl -a -no-escape`` on the real TED
  sample. ``bench/preprocess`` measures both the agreement and the speed.
- :func:`detokenize` is sacremoses' ``MosesDetokenizer``.

CLI::

    python -m docnmt.preprocess.tokenize tok   --lang en --input raw.txt --output tok.txt
    python -m docnmt.preprocess.tokenize detok --lang de --input hyp.tok --output hyp.txt

Both work line by line; the line count is preserved (checked).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from ..textio import InputError, atomic_write, cli_errors
from ..manual import argument_parser

#: Substrings without which a sacremoses normalization pattern cannot change a
#: line (keyed by the pattern). Patterns without regex syntax are their own
#: trigger; a pattern in neither is always applied.
_NORMALIZE_TRIGGERS = {
    r"\r": "\r",
    r"\(": "(",
    r"\)": ")",
    r" +": "  ",  # a single space is replaced by itself
    r"\) ([.!:?;,])": ") ",
    r"\( ": "( ",
    r" \)": " )",
    r"(\d) %": " %",
    r" :": " :",
    r" ;": " ;",
    "([a-zA-Z])‘([a-zA-Z])": "‘",
    "([a-zA-Z])’([a-zA-Z])": "’",
    "\u00A0\\?": "\u00A0?",
    "\u00A0\\!": "\u00A0!",
    r'"([,.]+)': '"',
    r'(\.+)"(\s*[^<])': '."',
    "(\\d)\u00A0(\\d)": "\u00A0",
}
_REGEX_SYNTAX = re.compile(r"[\\()\[\]{}.*+?^$|]")


def _trigger(pattern: str) -> str | None:
    if pattern in _NORMALIZE_TRIGGERS:
        return _NORMALIZE_TRIGGERS[pattern]
    if not _REGEX_SYNTAX.search(pattern):
        return pattern
    return None


@lru_cache(maxsize=None)
def _normalizer(lang: str):
    """sacremoses' substitution list for ``lang``, compiled, each with its trigger."""
    from sacremoses import MosesPunctNormalizer

    reference = MosesPunctNormalizer(lang=lang)
    if reference.pre_replace_unicode_punct or reference.post_remove_control_chars:
        raise RuntimeError("sacremoses' default normalizer changed: it now replaces unicode punctuation or control "
                           "characters, which docnmt.preprocess.tokenize.normalize does not reproduce")
    return [(_trigger(p), re.compile(p), r) for p, r in reference.substitutions]


def normalize(line: str, lang: str) -> str:
    """Moses punctuation normalization, equal to sacremoses' ``MosesPunctNormalizer(lang).normalize``."""
    for trigger, pattern, replacement in _normalizer(lang):
        if trigger is None or trigger in line:
            line = pattern.sub(replacement, line)
    return line.strip()


#: Kinds of lines where the C++ tokenizer is known to differ from
#: ``tokenizer.perl -a -no-escape`` (found on the TED sample and on probes);
#: such lines are tokenized by sacremoses instead.
_ALNUM = r"[^\W_]"
_ALPHA = r"[^\W\d_]"
_REFERENCE_CASES = {
    # A hyphen with a letter or digit on one side only and punctuation (or the
    # line end) on the other: perl keeps "multi-," and '"-based', the port splits them.
    "hyphen": rf"{_ALNUM}-(?:[^\w\s]|$)|[^\w\s-]-{_ALNUM}",
    # A period after a word that holds a period itself (URLs, "z.B."): perl
    # keeps "Bloomberg.com." whole.
    "dotted word": rf"\.{_ALNUM}+\.(?:\s|$)",
    # A number followed by a period: perl keeps ordinals ("21.") in languages
    # whose non-breaking prefixes list numbers (de); the port splits them.
    "number period": r"\d\.(?!\d)",
    # Backticks, which perl keeps and the port turns into apostrophes.
    "backtick": r"`",
}
_REFERENCE_CASES_EN = {
    # English apostrophes other than between two letters ("goin'", "'Cause"),
    # and overlapping ones ("rock'n'roll").
    "apostrophe": rf"(?<!{_ALPHA})'|'(?!{_ALPHA})|{_ALPHA}'{_ALPHA}'",
}
_REFERENCE_CASES_FR_IT = {
    # French and Italian apostrophes other than between two letters ("E' vero",
    # "l'8"); between letters ("dell'anno") the port equals perl.
    "apostrophe": rf"(?<!{_ALPHA})'|'(?!{_ALPHA})",
}
_REFERENCE_CASES_OTHER = {
    # Every apostrophe: perl isolates them in all other languages (de: "hab ' s"),
    # the port uses English-style clitics ("hab 's").
    "apostrophe": r"'",
}
#: Characters that perl splits off and the port keeps inside words: control
#: and format characters (soft hyphen, zero-width space), combining marks and
#: CJK characters. Only non-ASCII lines are searched for them.
_REFERENCE_CHARACTERS = r"[\p{C}\p{M}\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]"


@lru_cache(maxsize=None)
def _reference_patterns(lang: str):
    import regex

    language = {"en": _REFERENCE_CASES_EN, "fr": _REFERENCE_CASES_FR_IT, "it": _REFERENCE_CASES_FR_IT}
    cases = {**_REFERENCE_CASES, **language.get(lang, _REFERENCE_CASES_OTHER)}
    return re.compile("|".join(f"(?:{c})" for c in cases.values())), regex.compile(_REFERENCE_CHARACTERS)


def needs_reference(line: str, lang: str) -> bool:
    """True when a (normalized) line is of a kind that the C++ tokenizer gets wrong."""
    cases, characters = _reference_patterns(lang)
    if cases.search(line) is not None:
        return True
    return not line.isascii() and characters.search(line) is not None


@lru_cache(maxsize=None)
def _sacremoses(lang: str):
    from sacremoses import MosesDetokenizer, MosesTokenizer

    return MosesTokenizer(lang=lang), MosesDetokenizer(lang=lang)


@lru_cache(maxsize=None)
def _fast(lang: str):
    try:
        from mosestokenizer import MosesTokenizer
    except ImportError as err:
        raise RuntimeError(f"the C++ Moses tokenizer is not installed ({err}): pip install "
                           "opus-fast-mosestokenizer (see requirements.txt)") from None
    if not hasattr(MosesTokenizer, "tokenize") or not hasattr(MosesTokenizer, "detokenize") or \
            "aggressive_dash_splits" not in MosesTokenizer.__init__.__code__.co_varnames:
        raise RuntimeError("the module 'mosestokenizer' is not opus-fast-mosestokenizer (the perl-pipe package "
                           "mosestokenizer installs the same module name): pip uninstall mosestokenizer, then "
                           "pip install opus-fast-mosestokenizer (see requirements.txt)")
    return MosesTokenizer(lang, aggressive_dash_splits=True, escape_xml=False)


def tokenize_reference(line: str, lang: str) -> str:
    """sacremoses' ``tokenizer.perl -a -no-escape`` of an already normalized line."""
    return _sacremoses(lang)[0].tokenize(line, aggressive_dash_splits=True, escape=False, return_str=True)


def tokenize_normalized(line: str, lang: str) -> str:
    """Tokenize an already normalized line: the C++ tokenizer, or sacremoses for the kinds it gets wrong."""
    if needs_reference(line, lang):
        return tokenize_reference(line, lang)
    return " ".join(_fast(lang).tokenize(line))


def tokenize(line: str, lang: str) -> str:
    """Normalize punctuation and tokenize one line."""
    return tokenize_normalized(normalize(line, lang), lang)


def detokenize(line: str, lang: str) -> str:
    """Undo :func:`tokenize` (up to punctuation normalization)."""
    return _sacremoses(lang)[1].detokenize(line.split(), unescape=False)


def _process(func, lang: str, inp: Path, out: Path) -> int:
    if not inp.exists():
        raise InputError(inp, "file not found")
    count = 0
    with open(inp, encoding="utf-8", newline="\n") as src, atomic_write(out) as dst:
        for number, line in enumerate(src, start=1):
            line = line.rstrip("\n").rstrip("\r")
            if "\n" in line or "\r" in line:
                raise InputError(inp, "expected one sentence per line, found a carriage return inside a line", number)
            result = func(line, lang) if line.strip() else ""
            dst.write(result + "\n")
            count += 1
    return count


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.preprocess.tokenize", __doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["tok", "detok"], help="tokenize (with normalization) or detokenize")
    parser.add_argument("--lang", required=True, help="language code for the Moses rules, e.g. en, de, it")
    parser.add_argument("--input", required=True, type=Path)
    parser.add_argument("--output", required=True, type=Path)
    args = parser.parse_args(argv)
    func = tokenize if args.mode == "tok" else detokenize
    count = _process(func, args.lang, args.input, args.output)
    print(f"{args.mode} {args.lang}: {count} lines {args.input} -> {args.output}")
    return 0


if __name__ == "__main__":
    main()

"""ContraPro with left and right context: extraction, lookup, reporting, outputs."""

import json

import pytest

from docnmt.corpora import contrapro, demo
from docnmt.corpora.contrapro import Example, extract, load_examples, normalize_document_id
from docnmt.corpora.corpus import Document, read_split, write_split
from docnmt.textio import InputError

# Two OpenSubtitles-like documents, ids as in OPUS (the German file path).
MOVIE = "de/2004/123/456.xml.gz"
SHOW = "de/2011/7/89.xml.gz"
MOVIE_SRC = [
    "Where did you put the lamp?",          # 1
    "It is on the table.",                  # 2
    "I bought a new coat yesterday.",       # 3
    "It was very expensive.",               # 4
    "Really?",                              # 5
    "I like it anyway.",                    # 6
    "Let's go.",                            # 7
]
MOVIE_TGT = [
    "Wo hast du die Lampe hingestellt?",
    "Sie steht auf dem Tisch.",
    "Ich habe gestern einen neuen Mantel gekauft.",
    "Er war sehr teuer.",
    "Wirklich?",
    "Ich mag ihn trotzdem.",
    "Gehen wir.",
]
SHOW_SRC = ["Here is the book.", "Take it with you."]
SHOW_TGT = ["Hier ist das Buch.", "Nimm es mit."]


def documents():
    return [Document(MOVIE, list(MOVIE_SRC), list(MOVIE_TGT)), Document(SHOW, list(SHOW_SRC), list(SHOW_TGT))]


def example(document_id, segment, src, ref, ref_pronoun, contrastives, ante=1):
    """One example in ContraPro's schema (all its fields, as in contrapro.json)."""
    genders = {"er": "Masc", "ihn": "Masc", "sie": "Fem", "es": "Neut"}
    return {
        "document id": document_id,
        "segment id": segment,
        "src segment": src,
        "ref segment": ref,
        "src pronoun": "it",
        "ref pronoun": ref_pronoun,
        "ante distance": ante,
        "intrasegmental": ante == 0,
        "src ante phrase": "the lamp",
        "ref ante phrase": "die Lampe",
        "src ante head": "lamp",
        "ref ante head": "Lampe",
        "ref ante head gender": genders[ref_pronoun],
        "corpus": "OpenSubtitles",
        "errors": [
            {"contrastive": text, "replacement": word, "replacement gender": genders[word]}
            for word, text in contrastives
        ],
    }


def movie_example(segment, ante=1, document_id="2004/123/456.xml"):
    contrastives = {
        2: ("sie", [("er", "Er steht auf dem Tisch."), ("es", "Es steht auf dem Tisch.")]),
        4: ("er", [("sie", "Sie war sehr teuer."), ("es", "Es war sehr teuer.")]),
        6: ("ihn", [("sie", "Ich mag sie trotzdem."), ("es", "Ich mag es trotzdem.")]),
    }
    pronoun, errors = contrastives[segment]
    return example(document_id, segment, MOVIE_SRC[segment - 1], MOVIE_TGT[segment - 1], pronoun, errors, ante)


def show_example(segment=2, document_id="2011/7/89.xml"):
    return example(document_id, segment, SHOW_SRC[segment - 1], SHOW_TGT[segment - 1], "es",
                   [("ihn", "Nimm ihn mit."), ("sie", "Nimm sie mit.")])


def write_inputs(tmp_path, examples, docs=None):
    paths = {"json": tmp_path / "contrapro.json", "src": tmp_path / "docs.en", "tgt": tmp_path / "docs.de",
             "docids": tmp_path / "docs.docids"}
    paths["json"].write_text(json.dumps(examples, ensure_ascii=False, indent=1), encoding="utf-8")
    write_split(documents() if docs is None else docs, paths["src"], paths["tgt"], paths["docids"])
    return paths


def cli(paths, out, *extra, context=2):
    return contrapro.main([
        "--json", str(paths["json"]), "--src", str(paths["src"]), "--tgt", str(paths["tgt"]),
        "--docids", str(paths["docids"]), "--context", str(context), "--out", str(out),
        "--src-lang", "en", "--tgt-lang", "de", *extra,
    ])


def mini(example_set, number):
    """(left src lines, example src line, right src lines) of the number-th kept example."""
    doc = example_set.documents[number]
    ex = example_set.examples[number]
    return doc.src[: ex.left], doc.src[ex.left], doc.src[ex.left + 1:]


# --- context ---------------------------------------------------------------------


def test_middle_example_gets_context_sentences_on_both_sides():
    result, _ = extract([movie_example(4)], documents(), context=2)
    ex = result.examples[0]
    assert (ex.left, ex.right) == (2, 2)
    assert mini(result, 0) == (MOVIE_SRC[1:3], MOVIE_SRC[3], MOVIE_SRC[4:6])
    assert result.documents[0].tgt == MOVIE_TGT[1:6], "the context's target side comes from the document"


def test_example_at_document_start_has_shorter_left_context():
    first = example(MOVIE, 1, MOVIE_SRC[0], MOVIE_TGT[0], "sie", [("er", "x"), ("es", "y")])
    result, report = extract([first, movie_example(2)], documents(), context=2)
    (ex0, ex1) = result.examples
    assert (ex0.left, ex0.right) == (0, 2) and mini(result, 0) == ([], MOVIE_SRC[0], MOVIE_SRC[1:3])
    assert (ex1.left, ex1.right) == (1, 2) and mini(result, 1) == (MOVIE_SRC[:1], MOVIE_SRC[1], MOVIE_SRC[2:4])
    assert report["short_left_context"] == 2 and report["short_right_context"] == 0


def test_example_at_document_end_has_shorter_right_context():
    last = example(MOVIE, 7, MOVIE_SRC[6], MOVIE_TGT[6], "es", [("er", "x"), ("sie", "y")])
    result, _ = extract([movie_example(6), last], documents(), context=2)
    (ex0, ex1) = result.examples
    assert (ex0.left, ex0.right) == (2, 1) and mini(result, 0) == (MOVIE_SRC[3:5], MOVIE_SRC[5], MOVIE_SRC[6:])
    assert (ex1.left, ex1.right) == (2, 0) and mini(result, 1) == (MOVIE_SRC[4:6], MOVIE_SRC[6], [])


def test_short_document_limits_both_sides():
    result, _ = extract([show_example()], documents(), context=3)
    assert (result.examples[0].left, result.examples[0].right) == (1, 0)
    assert result.documents[0].src == SHOW_SRC


def test_context_zero_is_the_sentence_alone():
    result, _ = extract([movie_example(4)], documents(), context=0)
    assert result.documents[0].src == [MOVIE_SRC[3]] and result.examples[0].line == 0


def test_example_line_target_is_the_ref_segment():
    ex = movie_example(4)
    ex["ref segment"] = "Er war wirklich teuer."  # not the document's line
    result, report = extract([ex], documents(), context=1)
    assert result.documents[0].tgt == [MOVIE_TGT[2], "Er war wirklich teuer.", MOVIE_TGT[4]]
    assert report["reference_differs"] == 1


# --- document lookup -------------------------------------------------------------


@pytest.mark.parametrize(
    "document_id",
    ["2004/123/456.xml", "2004/123/456.xml.gz", "de/2004/123/456.xml.gz", "de/2004/123/456.xml", "2004_123_456.de"],
)
def test_document_id_is_matched_after_normalization(document_id):
    result, report = extract([movie_example(4, document_id=document_id)], documents(), context=1)
    assert report["kept"] == 1, f"{document_id!r} should find {MOVIE!r}"
    assert result.examples[0].document_id == document_id, "the example keeps ContraPro's id"


def test_normalization_strips_language_folder_and_extensions():
    assert normalize_document_id("de/2004/123/456.xml.gz") == "2004_123_456"
    assert normalize_document_id("2004/123/456.xml") == "2004_123_456"
    assert normalize_document_id("demo-test-00003") == "demo-test-00003"


def test_exact_document_id_is_used_as_is():
    docs = [Document("demo-test-00000", list(SHOW_SRC), list(SHOW_TGT))]
    _, report = extract([show_example(document_id="demo-test-00000")], docs, context=2)
    assert report["kept"] == 1


def test_ids_that_collide_after_normalization_are_an_error():
    docs = documents() + [Document("2004/123/456.xml", ["x"], ["y"])]
    with pytest.raises(InputError, match="several documents"):
        extract([movie_example(4, document_id="2004_123_456.de")], docs, context=1)


# --- counted, reported, strict ---------------------------------------------------


def unusable_examples():
    missing = movie_example(4, document_id="2099/1/1.xml")
    mismatch = movie_example(4)
    mismatch["src segment"] = "It was very cheap."
    out_of_range = show_example()
    out_of_range["segment id"] = 3
    zero = show_example()
    zero["segment id"] = 0
    return [movie_example(2), missing, mismatch, out_of_range, movie_example(6), zero]


def test_unusable_examples_are_counted_and_reported_not_dropped_silently():
    result, report = extract(unusable_examples(), documents(), context=2)
    assert [e.index for e in result.examples] == [0, 4]
    assert (report["examples"], report["kept"]) == (6, 2)
    assert (report["missing_document"], report["segment_out_of_range"], report["source_mismatch"]) == (1, 2, 1)
    assert report["dropped"]["missing_document"]["first_indices"] == [1]
    assert report["dropped"]["source_mismatch"]["first_indices"] == [2]
    assert report["dropped"]["segment_out_of_range"]["first_indices"] == [3, 5]
    assert "2099/1/1.xml" in report["dropped"]["missing_document"]["first_messages"][0]


def test_source_match_ignores_whitespace():
    ex = movie_example(4)
    ex["src segment"] = "  It was very  expensive . "
    ex2 = movie_example(2)
    ex2["src segment"] = "It is on the table ."
    _, report = extract([ex, ex2], documents(), context=1)
    assert report["kept"] == 2


@pytest.mark.parametrize("bad, reason", [(1, "not among the documents"), (2, "expected the example's src segment"),
                                         (3, "outside document")])
def test_strict_makes_an_unusable_example_an_error_naming_file_and_index(tmp_path, bad, reason):
    examples = unusable_examples()
    paths = write_inputs(tmp_path, [examples[0], examples[bad]])
    lines = paths["json"].read_text(encoding="utf-8").splitlines()
    with pytest.raises(InputError) as err:
        examples_read, json_lines = contrapro.load_contrapro(paths["json"])
        extract(examples_read, documents(), 2, strict=True, json_path=paths["json"], json_lines=json_lines)
    assert err.value.path == str(paths["json"]) and "example 1:" in err.value.message, str(err.value)
    assert reason in err.value.message
    assert lines[err.value.line - 1].strip() == "{", "the line must be where example 1 starts"
    assert lines[err.value.line].strip().startswith('"document id"')


@pytest.mark.parametrize("field", ["document id", "segment id", "src segment", "ref pronoun", "errors"])
def test_missing_required_field_is_an_error_naming_file_and_index(field):
    examples = [movie_example(2), movie_example(4)]
    del examples[1][field]
    with pytest.raises(InputError) as err:
        extract(examples, documents(), 2, json_path="cp.json", json_lines=[2, 30])
    assert (err.value.path, err.value.line) == ("cp.json", 30)
    assert "example 1:" in err.value.message and repr(field) in err.value.message, str(err.value)


def test_malformed_errors_list_is_an_error():
    ex = movie_example(2)
    ex["errors"] = [{"replacement": "er"}]
    with pytest.raises(InputError, match=r"example 0: errors\[0\]"):
        extract([ex], documents(), 2)


def test_contrastive_with_a_line_break_is_an_error():
    ex = movie_example(2)
    ex["errors"][0]["contrastive"] = "Er steht\nauf dem Tisch."
    with pytest.raises(InputError, match="line break"):
        extract([ex], documents(), 2)


# --- contrastive targets and the jsonl -------------------------------------------


def test_contrastive_targets_are_carried_in_errors_order():
    result, _ = extract([movie_example(6)], documents(), context=2)
    assert result.examples[0].contrastive == ("Ich mag sie trotzdem.", "Ich mag es trotzdem.")
    assert result.examples[0].ref_segment == "Ich mag ihn trotzdem."


def test_cli_writes_the_mini_corpus_and_jsonl_lines_point_at_examples(tmp_path, capsys):
    examples = [movie_example(2), movie_example(4), movie_example(6), show_example()]
    paths = write_inputs(tmp_path, examples)
    out = tmp_path / "out"
    assert cli(paths, out) == 0
    assert "4 examples, 4 kept" in capsys.readouterr().out
    names = sorted(p.name for p in out.iterdir())
    assert names == ["contrapro.de", "contrapro.docids", "contrapro.en", "contrapro.examples.jsonl",
                     "contrapro.report.json"]
    docs = read_split(out / "contrapro.en", out / "contrapro.de", out / "contrapro.docids")
    assert [d.docid for d in docs] == ["cp-00000", "cp-00001", "cp-00002", "cp-00003"]
    src = (out / "contrapro.en").read_text(encoding="utf-8").splitlines()
    tgt = (out / "contrapro.de").read_text(encoding="utf-8").splitlines()
    ids = (out / "contrapro.docids").read_text(encoding="utf-8").splitlines()
    loaded = load_examples(out / "contrapro.examples.jsonl")
    assert [e.index for e in loaded] == [0, 1, 2, 3]
    for ex, original in zip(loaded, examples):
        assert src[ex.line] == original["src segment"] and tgt[ex.line] == original["ref segment"]
        assert ids[ex.line] == ex.docid
        span = ids[ex.line - ex.left: ex.line + ex.right + 1]
        assert span == [ex.docid] * (ex.left + ex.right + 1) and ids.count(ex.docid) == len(span)
        assert list(ex.contrastive) == [e["contrastive"] for e in original["errors"]]
    record = json.loads((out / "contrapro.examples.jsonl").read_text(encoding="utf-8").splitlines()[1])
    assert {"index", "docid", "line", "left", "right", "document id", "segment id", "ante distance",
            "src pronoun", "ref pronoun", "ref segment", "contrastive"} <= set(record)
    report = json.loads((out / "contrapro.report.json").read_text(encoding="utf-8"))
    assert report["by_ref_pronoun"] == {"er": 1, "es": 1, "ihn": 1, "sie": 1}
    assert report["lines"] == len(src)


def test_report_counts_ante_distance_buckets():
    examples = [movie_example(2, ante=0), movie_example(4, ante=3), movie_example(6, ante=7), show_example()]
    _, report = extract(examples, documents(), 1)
    assert report["by_ante_distance"] == {"0": 1, "1": 1, "2": 0, "3": 1, ">3": 1}


def test_load_examples_round_trips_and_names_a_bad_line(tmp_path):
    result, _ = extract([movie_example(4)], documents(), 1)
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(result.examples[0].to_json()) + "\n" + '{"index": 1}\n', encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_examples(path)
    assert err.value.line == 2 and "no field" in err.value.message
    path.write_text(json.dumps(result.examples[0].to_json()) + "\n", encoding="utf-8")
    assert load_examples(path) == [result.examples[0]]
    assert isinstance(load_examples(path)[0], Example)


# --- nothing written on error ----------------------------------------------------


def test_strict_cli_error_writes_nothing(tmp_path, capsys):
    paths = write_inputs(tmp_path, unusable_examples())
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_info:
        cli(paths, out, "--strict")
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert str(paths["json"]) in err and "example 1:" in err, err
    assert not out.exists() or not any(out.iterdir()), "no output (nor temporary file) may be left on error"


def test_error_keeps_earlier_outputs_untouched(tmp_path):
    paths = write_inputs(tmp_path, [movie_example(4)])
    out = tmp_path / "out"
    cli(paths, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    broken = [movie_example(2), {k: v for k, v in movie_example(4).items() if k != "errors"}]
    paths["json"].write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(SystemExit):
        cli(paths, out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_no_usable_example_at_all_is_an_error(tmp_path, capsys):
    paths = write_inputs(tmp_path, [movie_example(4, document_id="1999/1/1.xml")])
    with pytest.raises(SystemExit):
        cli(paths, tmp_path / "out")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "1 missing document" in err and "example 0: document id '1999/1/1.xml'" in err, err
    assert not (tmp_path / "out").exists()


def test_invalid_json_names_file_and_line(tmp_path):
    path = tmp_path / "contrapro.json"
    path.write_text('[\n {"document id": "x",\n  oops}\n]', encoding="utf-8")
    with pytest.raises(InputError) as err:
        contrapro.load_contrapro(path)
    assert err.value.path == str(path) and err.value.line == 3


# --- the demo generator ----------------------------------------------------------


def test_demo_contrapro_examples_all_found_with_context(tmp_path):
    demo.main(["--outdir", str(tmp_path / "corpus"), "--train-docs", "3", "--valid-docs", "2", "--test-docs", "100"])
    corpus = tmp_path / "corpus"
    examples = json.loads((corpus / "contrapro.json").read_text(encoding="utf-8"))
    assert examples, "the demo must produce ContraPro examples"
    out = tmp_path / "cp"
    contrapro.main(["--json", str(corpus / "contrapro.json"), "--src", str(corpus / "test.en"),
                    "--tgt", str(corpus / "test.de"), "--docids", str(corpus / "test.docids"),
                    "--context", "2", "--out", str(out), "--src-lang", "en", "--tgt-lang", "de", "--strict"])
    report = json.loads((out / "contrapro.report.json").read_text(encoding="utf-8"))
    assert report["kept"] == report["examples"] == len(examples)
    src = (out / "contrapro.en").read_text(encoding="utf-8").splitlines()
    tgt = (out / "contrapro.de").read_text(encoding="utf-8").splitlines()
    test_docs = {d.docid: d for d in read_split(corpus / "test.en", corpus / "test.de", corpus / "test.docids")}
    loaded = load_examples(out / "contrapro.examples.jsonl")
    assert len(loaded) == len(examples)
    for ex, original in zip(loaded, examples):
        assert src[ex.line] == original["src segment"], f"example {ex.index}: line {ex.line} is not its sentence"
        assert tgt[ex.line] == original["ref segment"]
        doc = test_docs[original["document id"]]
        position = original["segment id"] - 1
        assert ex.left == min(2, position) and ex.right == min(2, len(doc) - 1 - position)
        assert src[ex.line - ex.left: ex.line + ex.right + 1] == doc.src[position - ex.left: position + ex.right + 1]
    assert any(e.left < 2 for e in loaded) and any(e.right < 2 for e in loaded), "the demo covers starts and ends"

"""binarize's count of a fairseq mmap dataset's examples, read from the index without importing fairseq."""

import pytest

from docnmt.preprocess.binarize import binarized_sizes
from docnmt.textio import InputError


def write_dataset(prefix, sequences):
    import torch
    from fairseq.data import indexed_dataset

    builder = indexed_dataset.MMapIndexedDatasetBuilder(f"{prefix}.bin", dtype=indexed_dataset.best_fitting_int_dtype(800))
    for sequence in sequences:
        builder.add_item(torch.tensor(sequence))
    builder.finalize(f"{prefix}.idx")


@pytest.mark.parametrize("count", [1, 3, 70000])
def test_the_count_is_fairseqs_own(tmp_path, count):
    from fairseq.data import indexed_dataset

    prefix = tmp_path / "train.en-de.en"
    write_dataset(prefix, [[i % 700 + 4] * (i % 5 + 1) for i in range(count)])
    assert binarized_sizes(prefix) == len(indexed_dataset.MMapIndexedDataset(str(prefix))) == count


def test_a_missing_truncated_or_foreign_index_is_named(tmp_path):
    prefix = tmp_path / "test.en-de.de"
    with pytest.raises(InputError, match=r"test\.en-de\.de\.idx: fairseq-preprocess wrote no dataset"):
        binarized_sizes(prefix)
    write_dataset(prefix, [[5, 6], [7]])
    index = tmp_path / "test.en-de.de.idx"
    whole = index.read_bytes()
    index.write_bytes(whole[:-4])
    with pytest.raises(InputError, match=r"expected 50 bytes for 2 examples, found 46"):
        binarized_sizes(prefix)
    index.write_bytes(b"TNTIDX\x00\x00" + whole[8:])
    with pytest.raises(InputError, match="expected a fairseq mmap dataset index"):
        binarized_sizes(prefix)

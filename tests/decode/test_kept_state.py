"""docnmt.decode.backends.fairseq.kept_state: what a draft verification keeps of a request between passes, on
tensors alone: the entries of the inputs the new history begins with are kept, the rest dropped; batches are padded
on the left with their masks, as fairseq's encoder and the search's prefill lay them out."""

from __future__ import annotations

import pytest

from docnmt.decode.backends.fairseq.kept_state import KeptRequest, cache_batch, encoder_batch, encoder_rows

torch = pytest.importorskip("torch")


def entries(inputs: list[int], heads: int = 2, dim: int = 3) -> tuple:
    """Keys and values whose entry for an input is the input's id (heads, len(inputs), dim): what an entry holds
    shows which input it belongs to."""
    key = torch.tensor(inputs, dtype=torch.float32)[None, :, None].expand(heads, -1, dim).clone()
    return key, -key


def held(state: KeptRequest) -> list[int]:
    return [int(x) for x in state.layers[0][0][0, :, 0]] if state.layers else []


def test_advance_keeps_the_pending_entries_the_new_history_begins_with_and_drops_the_rest():
    state = KeptRequest(request=None, checked=([5, 2], [7, 8], 10))
    state.pending, state.pending_inputs = [entries([2, 7, 8, 9, 10])] * 2, [2, 7, 8, 9, 10]
    assert state.advance([2, 7, 8, 9]) == 4  # a pass's first input and draft: all but the last accepted
    assert state.covered == [2, 7, 8, 9] and held(state) == [2, 7, 8, 9] and not state.pending
    assert all(layer[0].shape == (2, 4, 3) for layer in state.layers) and len(state.layers) == 2
    state.pending, state.pending_inputs = [entries([11, 12, 13])] * 2, [11, 12, 13]
    assert state.advance([2, 7, 8, 9, 11, 12, 40]) == 6  # the model chose 40 where the draft had 13
    assert held(state) == [2, 7, 8, 9, 11, 12] and torch.equal(state.layers[1][1], -state.layers[1][0])
    assert state.advance([2, 7, 3]) == 2 and held(state) == [2, 7], "a history that parts earlier cuts the kept"
    assert state.advance([6]) == 0 and held(state) == [] and state.covered == []


def test_batches_are_padded_on_the_left_with_masks_and_rows_come_back_without_their_padding():
    short, long = KeptRequest(None, ([1], [], 5)), KeptRequest(None, ([1, 2, 3], [], 5))
    for state, inputs in ((short, [4]), (long, [4, 5, 6])):
        state.pending, state.pending_inputs = [entries(inputs)], inputs
        state.advance(inputs)
    key, value, mask = cache_batch([short, long], "cpu")[0]
    assert key.shape == (2, 2, 3, 3) and mask.tolist() == [[True, True, False], [False, False, False]]
    assert key[0, 0, :, 0].tolist() == [0, 0, 4] and key[1, 0, :, 0].tolist() == [4, 5, 6]
    assert cache_batch([KeptRequest(None, ([1], [], 5))], "cpu") is None, "no row with entries: no cache"
    rows = [torch.full((2, 4), 1.0), torch.full((5, 4), 2.0)]
    batch = encoder_batch(rows)
    assert batch["encoder_out"][0].shape == (5, 2, 4)
    assert batch["encoder_padding_mask"][0].tolist() == [[True] * 3 + [False] * 2, [False] * 5]
    assert [torch.equal(a, b) for a, b in zip(encoder_rows(batch, 2), rows)] == [True, True]

"""The transformers backend's search loops after the prefill (the batches of
:class:`~docnmt.decode.backends.transformers.model.HFSearcher`): :func:`beam_loop`, ``GenerationMixin._beam_search``'s,
and at beam 1 :func:`greedy_loop`, ``GenerationMixin._sample``'s greedy search, which ``generate(num_beams=1)`` runs.
Both take the model's own logits processors and stopping criteria, as ``generate`` builds them from its generation
config (:func:`generation_setup`, which draft verification's passes take too). ``self``: the
:class:`~docnmt.decode.backends.transformers.model.HFSearcher` whose batch it searches (its model, its steps
``_forward``, its counters); ``contrast``: context-aware decoding's side without context (``model._Contrast``).
"""

from __future__ import annotations

from ...requests import Hypothesis


def generation_setup(self, sources, prompt_length: int, limit: int):
    """The generation config, logits processors and stopping criteria ``generate`` would build."""
    from transformers.generation.stopping_criteria import StoppingCriteriaList

    net = self.net
    # as generate() decides them, with no max_length or min_length passed
    has_default_max_length = net.generation_config.max_length is None
    has_default_min_length = net.generation_config.min_length is None
    config, _ = net._prepare_generation_config(
        None, num_beams=self.beam, length_penalty=self.lenpen, early_stopping=self.early_stopping,
        max_new_tokens=limit, num_return_sequences=self.beam, do_sample=False)
    net._prepare_special_tokens(config, True, device=sources.device, batch_size=sources.size(0))
    config = net._prepare_generated_length(
        generation_config=config, has_default_max_length=has_default_max_length,
        has_default_min_length=has_default_min_length,
        model_input_name="input_ids", input_ids_length=prompt_length, inputs_tensor=sources)
    processors = net._get_logits_processor(generation_config=config, input_ids_seq_length=prompt_length,
                                           encoder_input_ids=sources, device=sources.device, model_kwargs={})
    stopping = net._get_stopping_criteria(generation_config=config, stopping_criteria=StoppingCriteriaList())
    return config, processors, stopping


def greedy_hypothesis(self, tokens: list[int], logprob: float) -> Hypothesis:
    """A greedy search's hypothesis from its generated tokens (``</s>`` dropped) and their log-prob: its score the
    log-prob over the length with ``</s>``, as the beam search's finished beams."""
    length = len(tokens)
    if tokens and tokens[-1] == self.eos:
        tokens = tokens[:-1]
    return Hypothesis(list(tokens), logprob / max(1, length) ** self.lenpen, logprob)


def greedy_loop(self, input_ids, logits, encoder_outputs, mask, cache, processors, stopping,
                contrast=None) -> list[tuple[list[int], float]]:
    """``GenerationMixin._sample``'s loop without sampling (transformers 5.24; ``generate(num_beams=1)``) after the
    prefill: at each step the argmax of the logits processors' scores of the step's logits, ``<pad>`` after a row
    has stopped, until every row meets a stopping criterion (``</s>``, the length limit). ``input_ids``: each row's
    decoder prompt (its context and any tokens generated already); ``logits``: the first step's, after it;
    ``contrast``: context-aware decoding's side without context, whose log-probabilities combine with the step's
    before the processors. Per row: the tokens generated until it stopped (``</s>`` included where it ended the
    row) and their log-probability, from the unprocessed logits (the combined ones under a contrast), as the beam
    search counts them."""
    import torch
    from torch import nn

    rows, start = input_ids.shape
    unfinished = torch.ones(rows, dtype=torch.bool, device=input_ids.device)
    logprobs = torch.zeros(rows, dtype=torch.float32, device=input_ids.device)
    lengths = torch.zeros(rows, dtype=torch.long, device=input_ids.device)
    first = True
    while True:
        if not first:
            logits = self._forward(input_ids[:, -1:], encoder_outputs, mask, cache)
        log_probs = nn.functional.log_softmax(logits, dim=-1)
        scores = logits
        if contrast is not None:
            scores = log_probs = contrast.log_probs(self, log_probs, None if first else input_ids[:, -1:])
        first = False
        tokens = processors(input_ids, scores).argmax(dim=-1)
        tokens = torch.where(unfinished, tokens, torch.full_like(tokens, self.pad))
        logprobs += torch.where(unfinished, log_probs.gather(-1, tokens.unsqueeze(-1)).squeeze(-1),
                                torch.zeros_like(logprobs))
        lengths += unfinished.long()
        input_ids = torch.cat([input_ids, tokens[:, None]], dim=-1)
        unfinished = unfinished & ~stopping(input_ids, None)
        if not bool(unfinished.any()):
            break
    found = []
    for row, length, logprob in zip(input_ids[:, start:].tolist(), lengths.tolist(), logprobs.tolist()):
        found.append((row[:length], float(logprob)))
    return found


def beam_loop(self, input_ids, logits, encoder_outputs, mask, cache, config, processors, stopping,
              batch_size: int, contrast=None) -> list[list[Hypothesis]]:
    """GenerationMixin._beam_search's loop (transformers 5.24) after the prefill, for ``self``'s batch: the same
    helper methods, the same order of operations. ``input_ids``: the prompts, one row per beam; ``logits``: the
    first step's, after the prompt; ``cache``: the prompt's, copied to the beams; ``contrast``: context-aware
    decoding's side without context, whose scores each step's combine with the prompt's before the processors."""
    import torch
    from torch import nn
    net, num_beams = self.net, self.beam
    max_length = config.max_length
    cur_len = decoder_prompt_len = input_ids.shape[1]
    n_eos_tokens = config._eos_token_tensor.shape[0] if config._eos_token_tensor is not None else 0
    beams_to_keep = max(2, 1 + n_eos_tokens) * num_beams
    top_num_beam_mask = torch.cat((torch.ones(num_beams, dtype=torch.bool),
                                   torch.zeros(beams_to_keep - num_beams, dtype=torch.bool))).to(input_ids.device)
    device = input_ids.device
    running_sequences = torch.full((batch_size, num_beams, max_length), fill_value=self.pad, dtype=torch.int64,
                                   device=device)
    running_sequences[:, :, :cur_len] = net._unflatten_beam_dim(input_ids, batch_size, num_beams)
    sequences = running_sequences.detach().clone()
    running_beam_scores = torch.zeros((batch_size, num_beams), dtype=torch.float, device=device)
    running_beam_scores[:, 1:] = -1e9
    beam_scores = torch.full((batch_size, num_beams), fill_value=-1e9, dtype=torch.float, device=device)
    is_sent_finished = torch.zeros((batch_size, num_beams), dtype=torch.bool, device=device)
    is_early_stop_heuristic_unsatisfied = torch.ones((batch_size, 1), dtype=torch.bool, device=device)
    next_token_hits_stopping_criteria = torch.zeros((batch_size, num_beams), dtype=torch.bool, device=device)
    running_beam_indices = torch.full((batch_size, num_beams, max_length - cur_len), fill_value=-1,
                                      dtype=torch.int32, device=device)
    beam_indices = running_beam_indices.detach().clone()
    flat_running_sequences = input_ids
    first = True
    while True:
        if not first:
            flat_running_sequences = net._flatten_beam_dim(running_sequences[:, :, :cur_len])
            logits = self._forward(flat_running_sequences[:, -1:], encoder_outputs, mask, cache)
        log_probs = nn.functional.log_softmax(logits, dim=-1)
        if contrast is not None:
            log_probs = contrast.log_probs(self, log_probs, None if first else flat_running_sequences[:, -1:])
        first = False
        log_probs = processors(flat_running_sequences, log_probs)
        log_probs = net._unflatten_beam_dim(log_probs, batch_size, num_beams)
        log_probs = log_probs + running_beam_scores[:, :, None]
        log_probs = torch.reshape(log_probs, (batch_size, -1))
        topk_log_probs, topk_running_sequences, topk_running_beam_indices = net._get_top_k_continuations(
            accumulated_log_probs=log_probs, running_sequences=running_sequences,
            running_beam_indices=running_beam_indices, cur_len=cur_len, decoder_prompt_len=decoder_prompt_len,
            do_sample=False, beams_to_keep=beams_to_keep, num_beams=num_beams, batch_size=batch_size)
        next_token_hits_stopping_criteria = stopping(
            net._flatten_beam_dim(topk_running_sequences[:, :, : cur_len + 1]), None)
        next_token_hits_stopping_criteria = net._unflatten_beam_dim(
            next_token_hits_stopping_criteria, batch_size, beams_to_keep)
        running_sequences, running_beam_scores, running_beam_indices = \
            net._get_running_beams_for_next_iteration(
                topk_log_probs=topk_log_probs, topk_running_sequences=topk_running_sequences,
                topk_running_beam_indices=topk_running_beam_indices,
                next_token_hits_stopping_criteria=next_token_hits_stopping_criteria, num_beams=num_beams)
        sequences, beam_scores, beam_indices, is_sent_finished = net._update_finished_beams(
            sequences=sequences, topk_running_sequences=topk_running_sequences, beam_scores=beam_scores,
            topk_log_probs=topk_log_probs, beam_indices=beam_indices,
            topk_running_beam_indices=topk_running_beam_indices,
            is_early_stop_heuristic_unsatisfied=is_early_stop_heuristic_unsatisfied,
            is_sent_finished=is_sent_finished, next_token_hits_stopping_criteria=next_token_hits_stopping_criteria,
            top_num_beam_mask=top_num_beam_mask, num_beams=num_beams, cur_len=cur_len,
            decoder_prompt_len=decoder_prompt_len, length_penalty=config.length_penalty,
            early_stopping=config.early_stopping)
        beam_idx = net._flatten_beam_dim(running_beam_indices[..., cur_len - decoder_prompt_len])
        cache.reorder_cache(beam_idx)
        if contrast is not None:
            contrast.cache.reorder_cache(beam_idx)
        cur_len += 1
        is_early_stop_heuristic_unsatisfied = net._check_early_stop_heuristic(
            is_early_stop_heuristic_unsatisfied=is_early_stop_heuristic_unsatisfied,
            running_beam_scores=running_beam_scores, beam_scores=beam_scores, is_sent_finished=is_sent_finished,
            cur_len=cur_len, max_length=max_length, decoder_prompt_len=decoder_prompt_len,
            early_stopping=config.early_stopping, length_penalty=config.length_penalty)
        if not bool(net._beam_search_has_unfinished_sequences(
                is_early_stop_heuristic_unsatisfied, is_sent_finished, next_token_hits_stopping_criteria,
                config.early_stopping)):
            break
    return finished_beams(sequences, beam_scores, beam_indices, decoder_prompt_len, self.eos, config.length_penalty)


def finished_beams(sequences, beam_scores, beam_indices, prompt_length: int, eos: int,
                   length_penalty: float) -> list[list[Hypothesis]]:
    """The finished beams of each row of a batch as hypotheses (empty slots left out; ``</s>`` dropped from the
    tokens), each with its score and its log-prob (the score undone by the length penalty)."""
    out = []
    for row in range(beam_scores.shape[0]):
        found = []
        for b in range(beam_scores.shape[1]):
            score = float(beam_scores[row, b])
            if score <= -1e8:  # an empty slot
                continue
            generated = int((beam_indices[row, b] >= 0).sum())
            tokens = sequences[row, b, prompt_length:prompt_length + generated].tolist()
            length = len(tokens)
            if tokens and tokens[-1] == eos:
                tokens = tokens[:-1]
            found.append(Hypothesis(tokens, score, score * length ** length_penalty))
        out.append(found)
    return out

"""A causal LM's prompt, which every backend that prompts one shares: causal-lm (transformers' ``generate``), vllm
(vLLM's engine) and openai (a served model's chat messages).

Modules:
  template     -- a prompt's template: a YAML file (the repository's in ``templates/``), its keys and placeholders,
                  the languages' names
  conversation -- a request as a conversation of turns (:func:`~.conversation.turns`), and the
                  :class:`~.conversation.Prompter` that renders it for a tokenizer (chat template or plain text)
  answers      -- the rules of an answer: a request's ids, the lines its answer should have, the answer's text cut
                  into sentences and judged complete
  model        -- a causal LM's folder, prompted (:class:`~.model.PromptedModel`: config, tokenizer, end tokens,
                  ids, conversations, hypotheses, forced pairs; causal-lm's and vllm's models), and the counters of
                  their searchers
  refinement   -- refine's prompt: its template (templates/refine/; the slots each message needs) and the
                  :class:`~.refinement.Refiner` that renders its message (chat template or plain text)
  checks       -- the checks of a causal LM's folder before any decode (config, tokenizer, template, languages, k,
                  the sample's prompts against the context window), the sample's sentences as the checks prompt
                  them, and what docnmt-check-model says of a prompt
"""

from typing import Any

#: What every backend that prompts a causal LM declares alike (:class:`docnmt.decode.backend.Backend`'s fields): plain
#: text, no data folder, the languages its prompt names, a template, no ContraPro in the workflow, and a batch of at
#: most 32,768 positions (a causal LM's keys and values per position are far larger than an encoder-decoder's).
PROMPTED: dict[str, Any] = {"text": "plain", "needs_data": False, "language_codes": True, "contrapro_in_workflow": False,
            "prompt_template": True, "max_tokens": 32_768}

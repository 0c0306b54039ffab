"""A tiny causal LM trained here on a corpus's documents, with no download: the demo's LLM (``make demo-llm``) and
the tests' (tests/llmmodel.py).

A byte-level BPE tokenizer is trained on the corpus (``tokenizers``), with a ChatML chat template
(``<|im_start|>``, ``<|im_end|>``; ``chat=False``: none, as a base model's), and a model of one of the families
people translate with (:data:`FAMILIES`: Llama, Qwen2, Qwen3, Mistral, Gemma 2, Gemma 3, Phi-3, Cohere2) is trained on
the corpus's pairs written as conversations the way this backend prompts (:mod:`docnmt.decode.prompting`), every
answer learned (:func:`conversations`):

- from each sentence of a document on, a conversation of it and the ``context`` sentences after it, each a turn
  with its reference translation: the first answer is learned without context, the next with one earlier turn, and
  so on, as doc-trans and cheating ask (a document's last sentences start no conversation of their own: they are
  the later turns of earlier ones);
- windows of 2 to ``context`` + 1 sentences as one message of lines (for last-sentence, first-sentence and
  full-segment), for a share ``windows`` of the sentences;
- refinements (refine's prompt, :mod:`docnmt.decode.prompting.refinement`), for a share ``refine`` of the
  documents: each sentence's draft with the source document and the draft document in view, the answer its
  reference. The draft is the reference with the errors a translation without context makes, each pronoun of
  another gender and each "you" in the other register, in half the sentences that can have them
  (:mod:`docnmt.corpora.demo_drafts`): so the model learns to keep a right draft and to mend a wrong one from the
  document. In the same 1600 updates, refinements of a tenth of the documents kept the model's use of its context
  turns (the reference's CXMI 0.100 nats against 0.159 without); of three tenths they took it (-0.008).

Only the answers (and the end of their turn) are learned, with AdamW, a linear warm-up and a linear decay of the
learning rate. The result is saved with ``save_pretrained``, a folder the backend loads.

What makes such a tiny model use its context turns (measured on the demo, docs/own-models.md, "LLMs"): every
answer of a conversation learned (twice the answers per token of a conversation learned for its last answer
only); a vocabulary that holds the demo's words whole (2000 tokens; with 700 the sequences were 1.7 times as long);
enough updates (1600 of 16 conversations); and few windows of lines. A window's answer
translates its first line first, a turn's answer its last message: with windows for half the sentences, the model
took names from the earlier turns (the reference's CXMI over two seeds -0.04 and +0.05 nats); with a tenth, +0.16
and +0.12, and the window strategies still work (none: +0.15 and +0.27, but full-segment fell to 11 BLEU).

CLI::

    python -m docnmt.decode.backends.causal_lm.tiny --train data/demo/corpus/train --src en --tgt de \\
        --output results/demo-llm/model [--steps 1600] [--docs 600] [--architecture llama|qwen2|...] [--threads 2] \\
        [--windows 0.1] [--refine 0.1] [--seed 1]
"""

from __future__ import annotations

import random
from pathlib import Path

from ....manual import argument_parser
from ....textio import cli_errors
from ....option_ranges import FRACTION, NONNEGATIVE_INT, POSITIVE_INT, SEED

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
          "{% endif %}")


def build_tokenizer(texts: list[str], folder: Path, vocab_size: int = 2000, chat: bool = True):
    """A byte-level BPE tokenizer trained on ``texts``, saved in ``folder`` as a PreTrainedTokenizerFast with the
    ChatML template (``chat``; without: no chat template, as a base model's)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.train_from_iterator(texts, trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|endoftext|>", pad_token="<|endoftext|>",
                                   additional_special_tokens=SPECIAL[1:])
    if chat:
        fast.chat_template = CHATML
    fast.save_pretrained(folder)
    return fast


#: The causal-LM families people translate with, as transformers builds them: for each, the config and model classes
#: and what its tiny model sets beyond the shared sizes (:func:`tiny_model`). ``window`` marks the families whose
#: attention layers (all, or some of them) see a sliding window of the last tokens only; their tiny models take the
#: window from :func:`tiny_model`'s ``window``. The released models of each are in docs/own-models.md, "LLM families".
FAMILIES: dict[str, dict] = {
    "llama": dict(config="LlamaConfig", model="LlamaForCausalLM"),
    "qwen2": dict(config="Qwen2Config", model="Qwen2ForCausalLM"),
    "qwen3": dict(config="Qwen3Config", model="Qwen3ForCausalLM", head_dim=True),
    "mistral": dict(config="MistralConfig", model="MistralForCausalLM", window="all"),
    "gemma2": dict(config="Gemma2Config", model="Gemma2ForCausalLM", window="alternating", head_dim=True,
                   extra=dict(attn_logit_softcapping=50.0, final_logit_softcapping=30.0)),
    "gemma3": dict(config="Gemma3TextConfig", model="Gemma3ForCausalLM", window="alternating", head_dim=True,
                   extra=dict(attn_logit_softcapping=None, final_logit_softcapping=None)),
    "phi3": dict(config="Phi3Config", model="Phi3ForCausalLM"),
    "cohere2": dict(config="Cohere2Config", model="Cohere2ForCausalLM", window="alternating"),
}


def family_options(architecture: str, hidden: int, heads: int, layers: int, window: int | None) -> dict:
    """The config options of a family's tiny model beyond the shared sizes: the head size where the family sets its
    own, and the sliding window (``window`` tokens; alternating families: every layer but the last of each pair;
    None: the family config's own, 4096 tokens, more than a tiny model's context, which Cohere2 needs set)."""
    if architecture not in FAMILIES:
        raise ValueError(f"unknown architecture {architecture!r}, expected one of {', '.join(FAMILIES)}")
    family = FAMILIES[architecture]
    options: dict = dict(family.get("extra", {}))
    if family.get("head_dim"):
        options.update(head_dim=hidden // heads)
        if architecture.startswith("gemma"):
            options.update(query_pre_attn_scalar=hidden // heads)
    kind = family.get("window")
    if kind is not None and window is not None:
        options.update(sliding_window=window)
        if kind == "alternating":
            options.update(layer_types=["full_attention" if i % 2 else "sliding_attention" for i in range(layers)])
    return options


def tiny_model(tokenizer, architecture: str = "llama", max_positions: int = 512, hidden: int = 128, layers: int = 3,
               seed: int = 1, heads: int = 4, window: int | None = None):
    """A randomly initialized model of a family of :data:`FAMILIES` for ``tokenizer``, ending answers at
    ``<|im_end|>``; ``window``: its sliding window in tokens, where the family has one (None: the config's own)."""
    import torch
    import transformers

    options = family_options(architecture, hidden, heads, layers, window)
    torch.manual_seed(seed)
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    options.update(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
                   num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                   max_position_embeddings=max_positions, bos_token_id=None, eos_token_id=[end, tokenizer.eos_token_id],
                   pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True)
    family = FAMILIES[architecture]
    config = getattr(transformers, family["config"])(**options)
    model = getattr(transformers, family["model"])(config)
    model.generation_config.eos_token_id = [end, tokenizer.eos_token_id]
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def conversations(docs, context: int = 2, windows: float = 0.1, seed: int = 1) -> list[list[tuple[str, str]]]:
    """The documents' pairs as conversations (module docstring): lists of turns (source, translation), a turn's
    source and translation several lines where it is a window."""
    rng = random.Random(seed)
    found = []
    for doc in docs:
        for i in range(len(doc)):
            turns = list(zip(doc.src[i:i + context + 1], doc.tgt[i:i + context + 1]))
            if i == 0 or len(turns) == context + 1:
                found.append(turns)
            for c in range(1, min(context, i) + 1):
                if rng.random() < windows:
                    found.append([("\n".join(doc.src[i - c:i + 1]), "\n".join(doc.tgt[i - c:i + 1]))])
    return found


def refinements(docs, share: float = 0.3, seed: int = 1) -> list[tuple[tuple, str]]:
    """refine's examples (module docstring) of a share ``share`` of the documents: (the refiner's parts: the sentence,
    its draft, the source document and the draft document; the reference sentence)."""
    from ....corpora.demo_drafts import draft

    rng = random.Random(seed + 1)
    found = []
    for doc in docs:
        if rng.random() >= share:
            continue
        drafted = draft(doc.tgt, rng)
        found += [(([doc.src[i]], [drafted[i]], doc.src, drafted), doc.tgt[i]) for i in range(len(doc))]
    return found


def refinement_examples(tokenizer, refiner, prompter, pairs) -> list[tuple[list[int], list[int]]]:
    """(input ids, labels) of each refinement: the refiner's prompt, then the answer and the end of its turn (learned)."""
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    found = []
    for parts, target in pairs:
        prompt, output = refiner.ids(*parts), prompter.answer(target, end)
        found.append((prompt + output, [-100] * len(prompt) + output))
    return found


def examples(tokenizer, prompter, convs) -> list[tuple[list[int], list[int]]]:
    """(input ids, labels) of each conversation: the prompt of each turn as the backend writes it, then its answer and
    the end of its turn; only the answers and their ends are learned. Where the prompt of a turn does not continue
    the conversation before it token for token (a plain template's text, which the tokenizer may split otherwise
    across an answer's end), each turn is an example of its own that learns its answer only."""
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    found: list[tuple[list[int], list[int]]] = []
    for turns in convs:
        ids: list[int] | None = []
        labels: list[int] = []
        alone = []
        for j, (source, target) in enumerate(turns):
            prompt = prompter.ids(turns[:j], source)
            output = prompter.answer(target, end)
            alone.append((prompt + output, [-100] * len(prompt) + output))
            if ids is not None and prompt[:len(ids)] == ids:
                labels += [-100] * (len(prompt) - len(ids)) + output
                ids = prompt + output
            else:
                ids = None
        found += alone if ids is None else [(ids, labels)]
    return found


def batches(data: list[tuple[list[int], list[int]]], batch_size: int, rng: random.Random):
    """Batches of ``batch_size`` examples of similar length, endlessly: each pass over ``data`` sorts it by length
    (with a jitter of a few tokens, so that batches differ from pass to pass) and draws its batches in random order,
    as fairseq batches by length; a batch pads little."""
    while True:
        order = sorted(range(len(data)), key=lambda i: len(data[i][0]) + 8 * rng.random())
        chunks = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
        rng.shuffle(chunks)
        for chunk in chunks:
            yield [data[i] for i in chunk]


def train(model, data: list[tuple[list[int], list[int]]], steps: int, pad: int, batch_size: int = 16,
          lr: float = 3e-3, seed: int = 1, warmup: int = 50) -> None:
    """``steps`` AdamW updates on batches of ``data`` (:func:`batches`; right-padded, the padding masked); the
    learning rate rises linearly over ``warmup`` updates, then falls linearly to a tenth of ``lr``."""
    import torch

    rng = random.Random(seed)
    torch.manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    drawn = batches(data, min(batch_size, len(data)), rng)
    for step in range(steps):
        for group in optimizer.param_groups:
            group["lr"] = lr * min(1.0, (step + 1) / warmup) * (1.0 - 0.9 * step / steps)
        batch = next(drawn)
        width = max(len(ids) for ids, _ in batch)
        ids = torch.tensor([x + [pad] * (width - len(x)) for x, _ in batch])
        labels = torch.tensor([y + [-100] * (width - len(y)) for _, y in batch])
        mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x, _ in batch])
        # the output layer on the learned positions only (the answers'), not on every prompt token: the same loss
        # as the model's own (mean over the learned tokens), in less time
        hidden = model.model(input_ids=ids, attention_mask=mask).last_hidden_state[:, :-1]
        targets = labels[:, 1:]
        learned = targets != -100
        loss = torch.nn.functional.cross_entropy(model.lm_head(hidden[learned]).float(), targets[learned])
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()


def build(folder: Path, docs, src: str = "en", tgt: str = "de", architecture: str = "llama", steps: int = 1600,
          chat: bool = True, hidden: int = 128, layers: int = 3, batch_size: int = 16, threads: int = 1,
          seed: int = 1, windows: float = 0.1, max_positions: int = 512, window: int | None = None,
          heads: int = 4, refine: float = 0.0) -> Path:
    """Tokenizer and model (a family of :data:`FAMILIES`, a context window of ``max_positions`` tokens, a sliding
    ``window``) trained on ``docs`` (documents with ``src`` and ``tgt`` sentences) in ``steps`` updates (0: left
    random) on ``threads`` CPU threads, with refinements of a share ``refine`` of the documents, saved in
    ``folder``."""
    import torch

    from ...prompting.conversation import Prompter
    from ...prompting.refinement import Refiner, load_refine_template
    from ...prompting.template import load_template

    torch.set_num_threads(threads)
    template, refine_template = load_template("translate"), load_refine_template()
    texts = [s for doc in docs for s in doc.src + doc.tgt]
    instructions = [template.system or "", "English German"]
    if refine:  # refine's instructions too (a model without them has the tokenizer of one trained before refine)
        instructions += [refine_template.system or "", refine_template.sentence, refine_template.document]
    tokenizer = build_tokenizer(texts + instructions, folder, chat=chat)
    prompter = Prompter(tokenizer, template, src, tgt)
    model = tiny_model(tokenizer, architecture, max_positions=max_positions, hidden=hidden, layers=layers, seed=seed,
                       window=window, heads=heads)
    if steps:
        data = examples(tokenizer, prompter, conversations(docs, windows=windows, seed=seed))
        if refine:
            refiner = Refiner(tokenizer, refine_template, src, tgt, chat=prompter.chat)
            data += refinement_examples(tokenizer, refiner, prompter, refinements(docs, refine, seed))
        train(model, data, steps, tokenizer.pad_token_id, batch_size, seed=seed)
    model.save_pretrained(folder)
    return folder


@cli_errors
def main(argv=None) -> int:
    from ....corpora.corpus import read_split
    from ....textio import InputError

    parser = argument_parser("docnmt.decode.backends.causal_lm.tiny", __doc__.split("\n\n")[0])
    parser.add_argument("--train", required=True, type=Path,
                        help="the training split's prefix: PREFIX.SRC, PREFIX.TGT and PREFIX.docids")
    parser.add_argument("--src", default="en")
    parser.add_argument("--tgt", default="de")
    parser.add_argument("--output", required=True, type=Path, help="the model folder to write")
    parser.add_argument("--steps", type=NONNEGATIVE_INT, default=1600, help="updates")
    parser.add_argument("--docs", type=NONNEGATIVE_INT, default=600, help="the first N training documents (0: all)")
    parser.add_argument("--architecture", default="llama", choices=list(FAMILIES),
                        help="the model's family (its transformers config and model classes)")
    parser.add_argument("--max-positions", type=POSITIVE_INT, default=512, help="the context window in tokens")
    parser.add_argument("--window", type=POSITIVE_INT, default=None,
                        help="the sliding window in tokens of a family that has one (default: the family config's, "
                             "4096, more than the context)")
    parser.add_argument("--hidden", type=POSITIVE_INT, default=128)
    parser.add_argument("--layers", type=POSITIVE_INT, default=3)
    parser.add_argument("--batch-size", type=POSITIVE_INT, default=16, help="conversations per update")
    parser.add_argument("--threads", type=POSITIVE_INT, default=1, help="torch's CPU threads")
    parser.add_argument("--seed", type=SEED, default=1, help="the initialization's and the batches' seed")
    parser.add_argument("--windows", type=FRACTION, default=0.1,
                        help="the share of sentences that also end a window of lines in one message")
    parser.add_argument("--refine", type=FRACTION, default=0.0,
                        help="the share of documents whose sentences are also refine's examples (a draft with the "
                             "demo's pronoun and register errors; 0: none)")
    args = parser.parse_args(argv)
    prefix = str(args.train)
    docs = read_split(f"{prefix}.{args.src}", f"{prefix}.{args.tgt}", f"{prefix}.docids")
    if not docs:
        raise InputError(f"{prefix}.docids", "expected training documents, found none")
    docs = docs[: args.docs or None]
    tmp = args.output.with_name(args.output.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    build(tmp, docs, args.src, args.tgt, args.architecture, args.steps, hidden=args.hidden, layers=args.layers,
          batch_size=args.batch_size, threads=args.threads, seed=args.seed, windows=args.windows,
          max_positions=args.max_positions, window=args.window, refine=args.refine)
    if args.output.exists():
        import shutil

        shutil.rmtree(args.output)
    tmp.rename(args.output)
    print(f"{args.output}: a {args.architecture} of {args.layers} layers, {args.steps} updates on "
          f"{len(docs)} documents of {prefix}.{args.src}/.{args.tgt}")
    return 0


if __name__ == "__main__":
    main()

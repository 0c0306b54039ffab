"""A tiny causal LM trained here on a corpus's documents, with no download: the demo's LLM (``make demo-llm``) and
the tests' (tests/llmmodel.py).

A byte-level BPE tokenizer is trained on the corpus (``tokenizers``), with a ChatML chat template
(``<|im_start|>``, ``<|im_end|>``; ``chat=False``: none, as a base model's), and a 2-layer Llama or Qwen2 model is
trained on the corpus's pairs written as conversations the way this backend prompts (:mod:`.prompt`): each sentence
with 0 to ``context`` earlier sentences as turns (with their reference translations), and each window of 2 to
``context`` + 1 sentences as one message of lines. Only the answers (and the end of their turn) are learned. The
result is saved with ``save_pretrained``, a folder the backend loads.

CLI::

    python -m docnmt.decode.backends.causal_lm.tiny --train data/demo/corpus/train --src en --tgt de \\
        --output results/demo-llm/model [--steps 1500] [--docs 600] [--architecture llama|qwen2]
"""

from __future__ import annotations

import random
from pathlib import Path

from ....manual import argument_parser
from ....textio import cli_errors

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
          "{% endif %}")


def build_tokenizer(texts: list[str], folder: Path, vocab_size: int = 700, chat: bool = True):
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


def tiny_model(tokenizer, architecture: str = "llama", max_positions: int = 512, hidden: int = 64, layers: int = 2,
               seed: int = 1):
    """A randomly initialized Llama or Qwen2 model for ``tokenizer``, ending answers at ``<|im_end|>``."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    options = dict(vocab_size=len(tokenizer), hidden_size=hidden, intermediate_size=2 * hidden,
                   num_hidden_layers=layers, num_attention_heads=4, num_key_value_heads=2,
                   max_position_embeddings=max_positions, bos_token_id=None, eos_token_id=[end, tokenizer.eos_token_id],
                   pad_token_id=tokenizer.pad_token_id, tie_word_embeddings=True)
    classes = {"llama": (LlamaConfig, LlamaForCausalLM), "qwen2": (Qwen2Config, Qwen2ForCausalLM)}
    if architecture not in classes:
        raise ValueError(f"unknown architecture {architecture!r}, expected one of {', '.join(classes)}")
    config_class, model_class = classes[architecture]
    model = model_class(config_class(**options))
    model.generation_config.eos_token_id = [end, tokenizer.eos_token_id]
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def conversations(docs, context: int = 2) -> list[tuple[list[tuple[str, str]], str, str]]:
    """The documents' pairs as conversations (module docstring): (earlier turns, last message, answer)."""
    found = []
    for doc in docs:
        for i in range(len(doc)):
            for c in range(min(context, i) + 1):
                found.append((list(zip(doc.src[i - c:i], doc.tgt[i - c:i])), doc.src[i], doc.tgt[i]))
            for c in range(1, min(context, i) + 1):
                found.append(([], "\n".join(doc.src[i - c:i + 1]), "\n".join(doc.tgt[i - c:i + 1])))
    return found


def examples(tokenizer, prompter, convs) -> list[tuple[list[int], list[int]]]:
    """(input ids, labels) of each conversation: the prompt as the backend writes it, then the answer and the end of
    its turn; only the answer and its end are learned."""
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    found = []
    for done, current, answer in convs:
        prompt = prompter.ids(done, current)
        output = prompter.answer(answer, end)
        found.append((prompt + output, [-100] * len(prompt) + output))
    return found


def train(model, data: list[tuple[list[int], list[int]]], steps: int, pad: int, batch_size: int = 16,
          lr: float = 3e-3, seed: int = 1) -> None:
    """``steps`` AdamW updates on batches drawn from ``data`` (right-padded, the padding masked)."""
    import torch

    rng = random.Random(seed)
    torch.manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        batch = rng.sample(data, min(batch_size, len(data)))
        width = max(len(ids) for ids, _ in batch)
        ids = torch.tensor([x + [pad] * (width - len(x)) for x, _ in batch])
        labels = torch.tensor([y + [-100] * (width - len(y)) for _, y in batch])
        mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x, _ in batch])
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()


def build(folder: Path, docs, src: str = "en", tgt: str = "de", architecture: str = "llama", steps: int = 300,
          chat: bool = True, hidden: int = 64, layers: int = 2) -> Path:
    """Tokenizer and model trained on ``docs`` (documents with ``src`` and ``tgt`` sentences), saved in ``folder``."""
    import torch

    from .prompt import Prompter, load_template

    torch.set_num_threads(1)
    template = load_template("translate")
    texts = [s for doc in docs for s in doc.src + doc.tgt]
    tokenizer = build_tokenizer(texts + [template.system or "", "English German"], folder, chat=chat)
    prompter = Prompter(tokenizer, template, src, tgt)
    model = tiny_model(tokenizer, architecture, hidden=hidden, layers=layers)
    train(model, examples(tokenizer, prompter, conversations(docs)), steps, tokenizer.pad_token_id)
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
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--docs", type=int, default=600, help="the first N training documents (0: all)")
    parser.add_argument("--architecture", default="llama", choices=["llama", "qwen2"])
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    args = parser.parse_args(argv)
    prefix = str(args.train)
    docs = read_split(f"{prefix}.{args.src}", f"{prefix}.{args.tgt}", f"{prefix}.docids")
    if not docs:
        raise InputError(f"{prefix}.docids", "expected training documents, found none")
    docs = docs[: args.docs or None]
    tmp = args.output.with_name(args.output.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    build(tmp, docs, args.src, args.tgt, args.architecture, args.steps, hidden=args.hidden, layers=args.layers)
    if args.output.exists():
        import shutil

        shutil.rmtree(args.output)
    tmp.rename(args.output)
    print(f"{args.output}: a {args.architecture} of {args.layers} layers, {args.steps} updates on "
          f"{len(docs)} documents of {prefix}.{args.src}/.{args.tgt}")
    return 0


if __name__ == "__main__":
    main()

"""Tiny causal LMs built here, with no download: a byte-level BPE tokenizer trained on the demo corpus, with a
ChatML chat template (``<|im_start|>``, ``<|im_end|>``), and a 2-layer Llama or Qwen2 model trained briefly on the
demo's pairs written as chat turns, with and without context turns, saved in the ``save_pretrained`` layout that
:class:`docnmt.decode.backends.causal_lm.model.CausalLMModel` loads."""

from __future__ import annotations

import random
from pathlib import Path

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
CHATML = ("{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
          "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
          "{% endif %}")


def demo_documents(train_docs: int = 120, test_docs: int = 6, seed: int = 5):
    from docnmt.corpora.demo import generate

    docs = generate(seed=seed, n_docs_per_split={"train": train_docs, "test": test_docs})
    return docs["train"], docs["test"]


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


def tiny_model(tokenizer, architecture: str = "llama", max_positions: int = 512, seed: int = 1):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    options = dict(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=max_positions,
                   bos_token_id=None, eos_token_id=[end, tokenizer.eos_token_id], pad_token_id=tokenizer.pad_token_id,
                   tie_word_embeddings=True)
    if architecture == "llama":
        model = LlamaForCausalLM(LlamaConfig(**options))
    elif architecture == "qwen2":
        model = Qwen2ForCausalLM(Qwen2Config(**options))
    else:
        raise ValueError(f"unknown architecture {architecture!r}")
    model.generation_config.eos_token_id = [end, tokenizer.eos_token_id]
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model


def conversations(docs, context: int = 2) -> list[tuple[list[tuple[str, str]], str, str]]:
    """The demo's pairs as conversations: each sentence with 0 to ``context`` earlier sentences as turns (with their
    reference translations), and each window of 2 to ``context`` + 1 sentences as one message of lines."""
    found = []
    for doc in docs:
        for i in range(len(doc)):
            for c in range(min(context, i) + 1):
                done = list(zip(doc.src[i - c:i], doc.tgt[i - c:i]))
                found.append((done, doc.src[i], doc.tgt[i]))
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


def build(folder: Path, architecture: str = "llama", steps: int = 200, train_docs: int = 120,
          chat: bool = True) -> Path:
    """Tokenizer and model trained on the demo's conversations, saved in ``folder``."""
    import torch

    from docnmt.decode.backends.causal_lm.prompt import Prompter, load_template

    torch.set_num_threads(1)
    docs, _ = demo_documents(train_docs)
    convs = conversations(docs)
    texts = [s for doc in docs for s in doc.src + doc.tgt]
    template = load_template("translate")
    tokenizer = build_tokenizer(texts + [template.system or "", "English German"], folder, chat=chat)
    prompter = Prompter(tokenizer, template, "en", "de")
    model = tiny_model(tokenizer, architecture)
    train(model, examples(tokenizer, prompter, convs), steps, tokenizer.pad_token_id)
    model.save_pretrained(folder)
    return folder

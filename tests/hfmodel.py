"""Tiny Hugging Face seq2seq models built here, with no download: a tokenizer trained on the demo corpus with the
``tokenizers`` library (one vocabulary for both languages, the separator ``<brk>`` a single token) and a 2-layer
Marian model trained briefly on the demo's sentences and k=3 windows, saved in the ``save_pretrained`` layout
that :class:`docnmt.decode.backends.transformers.model.HFModel` loads."""

from __future__ import annotations

import random
from pathlib import Path

SEPARATOR = "<brk>"
K = 3
SPECIAL = ["<pad>", "</s>", "<unk>", SEPARATOR]


def demo_documents(train_docs: int = 120, test_docs: int = 6, seed: int = 5):
    from docnmt.corpora.demo import generate

    docs = generate(seed=seed, n_docs_per_split={"train": train_docs, "test": test_docs})
    return docs["train"], docs["test"]


def windows(doc, k: int = K) -> list[tuple[str, str]]:
    """The document's sentences and its k-sentence windows, joined by the separator."""
    pairs = []
    for i in range(len(doc)):
        first = max(0, i - k + 1)
        pairs.append((f" {SEPARATOR} ".join(doc.src[first:i + 1]), f" {SEPARATOR} ".join(doc.tgt[first:i + 1])))
    return pairs


def build_tokenizer(texts: list[str], folder: Path, vocab_size: int = 600):
    """A word-piece-free BPE tokenizer (whitespace and punctuation split) trained on ``texts``, saved in
    ``folder`` as a PreTrainedTokenizerFast: ``</s>`` appended to every encoded text."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors, trainers, decoders
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    tokenizer.train_from_iterator(texts, trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIAL))
    tokenizer.post_processor = processors.TemplateProcessing(
        single="$A </s>", special_tokens=[("</s>", tokenizer.token_to_id("</s>"))])
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, pad_token="<pad>", eos_token="</s>",
                                   unk_token="<unk>", additional_special_tokens=[SEPARATOR])
    fast.save_pretrained(folder)
    return fast


def tiny_marian(tokenizer, max_positions: int = 128, seed: int = 1):
    import torch
    from transformers import MarianConfig, MarianMTModel

    torch.manual_seed(seed)
    config = MarianConfig(
        vocab_size=len(tokenizer), d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=max_positions,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id, forced_eos_token_id=tokenizer.eos_token_id,
        dropout=0.1, scale_embedding=True, share_encoder_decoder_embeddings=True)
    return MarianMTModel(config)


def train(model, tokenizer, pairs: list[tuple[str, str]], steps: int, batch_size: int = 32, lr: float = 3e-3,
          seed: int = 1) -> None:
    """A plain teacher-forced training loop (label smoothing 0.1), ``steps`` updates."""
    import torch

    rng = random.Random(seed)
    torch.manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        batch = rng.sample(pairs, min(batch_size, len(pairs)))
        encoded = tokenizer([s for s, _ in batch], text_target=[t for _, t in batch], padding=True,
                            return_tensors="pt")
        encoded["labels"][encoded["labels"] == tokenizer.pad_token_id] = -100
        logits = model(**encoded).logits
        loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), encoded["labels"].view(-1),
                                                 ignore_index=-100, label_smoothing=0.1)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()


def build(folder: Path, steps: int = 150, train_docs: int = 120) -> Path:
    """Tokenizer and model trained on the demo's sentences and windows, saved in ``folder``."""
    import torch

    torch.set_num_threads(1)
    train_docs_, _ = demo_documents(train_docs)
    pairs = [pair for doc in train_docs_ for pair in windows(doc)]
    tokenizer = build_tokenizer([text for pair in pairs for text in pair], folder)
    model = tiny_marian(tokenizer)
    train(model, tokenizer, pairs, steps)
    model.generation_config.num_beams = 1
    model.save_pretrained(folder)
    return folder


def build_m2m100(folder: Path, steps: int = 150, train_docs: int = 60) -> Path:
    """A tiny M2M100 model (the NLLB architecture) with language tokens: an M2M100Tokenizer over a SentencePiece
    model trained here (the WMT21 language codes, ``__en__``, ``__de__``, ...), ``<brk>`` added as a special
    token, trained on the demo's sentences and windows with the target language token first, as M2M100 is."""
    import io
    import json

    import sentencepiece
    import torch
    from transformers import M2M100Config, M2M100ForConditionalGeneration, M2M100Tokenizer

    torch.set_num_threads(1)
    folder.mkdir(parents=True, exist_ok=True)
    train_docs_, _ = demo_documents(train_docs)
    pairs = [pair for doc in train_docs_ for pair in windows(doc)]
    texts = [text.replace(f" {SEPARATOR} ", " ") for pair in pairs for text in pair]
    model_bytes = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(texts), model_writer=model_bytes,
                                             vocab_size=500, model_type="bpe", minloglevel=2)
    (folder / "sentencepiece.bpe.model").write_bytes(model_bytes.getvalue())
    processor = sentencepiece.SentencePieceProcessor(model_proto=model_bytes.getvalue())
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for i in range(processor.get_piece_size()):
        piece = processor.id_to_piece(i)
        if piece not in vocab and not processor.is_control(i) and not processor.is_unknown(i):
            vocab[piece] = len(vocab)
    # the separator in the vocabulary itself: M2M100Tokenizer numbers its language tokens after the vocabulary,
    # and a token added afterwards would get the first language token's id
    vocab[SEPARATOR] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    tokenizer = M2M100Tokenizer(vocab_file=str(folder / "vocab.json"), spm_file=str(folder / "sentencepiece.bpe.model"),
                                src_lang="en", tgt_lang="de", language_codes="wmt21",
                                additional_special_tokens=[SEPARATOR])
    tokenizer.save_pretrained(folder)
    torch.manual_seed(1)
    ids = [tokenizer.convert_tokens_to_ids(token) for token in tokenizer.get_vocab()]
    config = M2M100Config(
        vocab_size=max(max(ids), *tokenizer.lang_code_to_id.values()) + 1, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=128,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id, decoder_start_token_id=tokenizer.eos_token_id, dropout=0.1)
    model = M2M100ForConditionalGeneration(config)
    train(model, tokenizer, pairs, steps)
    model.save_pretrained(folder)
    return folder

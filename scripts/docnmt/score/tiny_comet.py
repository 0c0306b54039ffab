"""A tiny COMET checkpoint made here, laid out as COMET saves one: for the tests, the demo and a first try.

No model hub is reached: the encoder has XLM-R's architecture (2 layers, hidden size 32) with a Unigram tokenizer
trained on the given text, saved with ``save_pretrained`` in ``OUTPUT/encoder``; the metric on top of it is an
unbabel-comet model (``regression``: a ``RegressionMetric`` as wmt22-comet-da; ``kiwi``: a ``UnifiedMetric`` on
``mt`` and ``src`` only, reference-free, as wmt22-cometkiwi-da; ``xcomet``: an ``XCOMETMetric`` as XCOMET-XL, with
its word-level tagger of error spans, on an XLM-R encoder instead of XLM-R XL), saved as ``OUTPUT/checkpoints/model.ckpt`` and
``OUTPUT/hparams.yaml``, whose ``pretrained_model`` is the encoder's folder. With ``--steps`` its estimator is
fitted briefly (the whole model) to predict sentence chrF of corrupted references; with ``--steps 0`` it is left
random. Its scores rank nothing a person would: it exercises the code, as the demo's models do.

Runs in unbabel-comet's environment (``make comet``)::

    .venv-comet/bin/python -m docnmt.score.tiny_comet --kind regression --text data/demo/corpus/train.en \\
        data/demo/corpus/train.de --output /tmp/tiny-comet-da [--steps 200] [--seed 1]
"""

from __future__ import annotations

import random
from pathlib import Path

from ..manual import argument_parser
from ..textio import InputError, cli_errors, read_lines
from .comet import offline
from ..option_ranges import NONNEGATIVE_INT, POSITIVE_INT, SEED

#: The metric classes this makes: kind -> (unbabel-comet class, its keyword arguments besides the encoder).
KINDS = {
    "regression": ("RegressionMetric", {"hidden_sizes": [64], "layer": "mix", "pool": "avg",
                                        "layer_transformation": "softmax", "nr_frozen_epochs": 0}),
    "kiwi": ("UnifiedMetric", {"hidden_sizes": [64], "sent_layer": "mix", "word_layer": 2,
                               "layer_transformation": "sparsemax", "input_segments": ["mt", "src"],
                               "nr_frozen_epochs": 0}),
    "xcomet": ("XCOMETMetric", {"hidden_sizes": [64], "sent_layer": "mix", "word_layer": 2,
                                "layer_transformation": "sparsemax", "encoder_model": "XLM-RoBERTa",
                                "nr_frozen_epochs": 0}),
}
SPECIAL_TOKENS = ["<s>", "<pad>", "</s>", "<unk>"]


def train_tokenizer(lines: list[str], vocab_size: int, folder: Path):
    """A Unigram tokenizer with XLM-R's special tokens and templates, saved as a fast XLMRobertaTokenizer."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import XLMRobertaTokenizerFast

    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS, unk_token="<unk>")
    tokenizer.train_from_iterator(lines, trainer)
    tokenizer.add_special_tokens(["<mask>"])
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>", special_tokens=[("<s>", 0), ("</s>", 2)])
    fast = XLMRobertaTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                   cls_token="<s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>",
                                   model_max_length=512)
    fast.save_pretrained(folder)
    return fast


def save_encoder(tokenizer, folder: Path, seed: int) -> None:
    import torch
    from transformers import XLMRobertaConfig, XLMRobertaModel

    torch.manual_seed(seed)
    config = XLMRobertaConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                              intermediate_size=64, max_position_embeddings=514, type_vocab_size=1,
                              pad_token_id=1, bos_token_id=0, eos_token_id=2)
    XLMRobertaModel(config, add_pooling_layer=False).save_pretrained(folder)


def corrupted(ref: str, rng: random.Random) -> str:
    """A reference with some words dropped, repeated or swapped: a hypothesis of lower quality."""
    words = ref.split()
    for _ in range(rng.randint(0, 3)):
        if len(words) < 2:
            break
        i = rng.randrange(len(words))
        action = rng.choice(("drop", "repeat", "swap"))
        if action == "drop":
            del words[i]
        elif action == "repeat":
            words.insert(i, words[i])
        else:
            j = rng.randrange(len(words))
            words[i], words[j] = words[j], words[i]
    return " ".join(words)


def fit(model, pairs: list[tuple[str, str]], steps: int, seed: int, batch_size: int = 16) -> float:
    """A few updates of the whole model towards sentence chrF of corrupted references; the last loss."""
    import torch
    from sacrebleu.metrics import CHRF

    chrf, rng = CHRF(), random.Random(seed)
    for p in model.parameters():
        p.requires_grad = True
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    loss = float("nan")
    for _ in range(steps):
        samples = []
        for src, ref in rng.sample(pairs, min(batch_size, len(pairs))):
            mt = corrupted(ref, rng)
            samples.append({"src": src, "mt": mt, "ref": ref, "score": chrf.sentence_score(mt, [ref]).score / 100})
        inputs, target = model.prepare_sample(samples, stage="fit")
        # a RegressionMetric's inputs are one mapping; a UnifiedMetric's a tuple of them (one per input combination)
        prediction = model(**(inputs if isinstance(inputs, dict) else inputs[0]))
        value = torch.nn.functional.mse_loss(prediction.score.view(-1), target.score.view(-1))
        optimizer.zero_grad()
        value.backward()
        optimizer.step()
        loss = value.item()
    model.eval()
    return loss


def build(kind: str, texts: list[list[str]], output: Path, steps: int = 0, seed: int = 1, vocab_size: int = 2000):
    """Make the checkpoint folder ``output`` (encoder/, checkpoints/model.ckpt, hparams.yaml); its model."""
    offline()
    import pytorch_lightning
    import torch
    import yaml
    import comet.models as comet_models

    output = Path(output).resolve()
    lines = [line for text in texts for line in text if line.strip()]
    encoder = output / "encoder"
    encoder.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer(lines, vocab_size, encoder)
    save_encoder(tokenizer, encoder, seed)
    class_name, options = KINDS[kind]
    torch.manual_seed(seed)
    model = getattr(comet_models, class_name)(pretrained_model=str(encoder), load_pretrained_weights=True,
                                              local_files_only=True, **options)
    if steps:
        pairs = list(zip(texts[0], texts[-1]))
        print(f"fitted {steps} steps, last loss {fit(model, pairs, steps, seed):.4f}")
    hparams = {k: v for k, v in dict(model.hparams).items()}
    (output / "checkpoints").mkdir(exist_ok=True)
    torch.save({"state_dict": model.state_dict(), "hyper_parameters": hparams, "epoch": 0, "global_step": steps,
                "pytorch-lightning_version": pytorch_lightning.__version__}, output / "checkpoints" / "model.ckpt")
    (output / "hparams.yaml").write_text(yaml.safe_dump(hparams, sort_keys=True))
    return model


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.score.tiny_comet", __doc__.split("\n\n")[0])
    parser.add_argument("--kind", choices=list(KINDS), default="regression",
                        help="regression: reference-based, as wmt22-comet-da; kiwi: reference-free QE, as "
                             "wmt22-cometkiwi-da; xcomet: with error spans, as XCOMET-XL; default: %(default)s")
    parser.add_argument("--text", nargs="+", required=True, type=Path,
                        help="line-aligned text files (source first, reference last) the tokenizer learns from and "
                             "the estimator is fitted on")
    parser.add_argument("--output", required=True, type=Path, help="the checkpoint folder to make")
    parser.add_argument("--steps", type=NONNEGATIVE_INT, default=0, help="updates of the estimator (0: left random)")
    parser.add_argument("--seed", type=SEED, default=1)
    parser.add_argument("--vocab-size", type=POSITIVE_INT, default=2000)
    args = parser.parse_args(argv)
    texts = [read_lines(path) for path in args.text]
    for path, text in zip(args.text, texts):
        if not text:
            raise InputError(path, "expected text to learn a tokenizer from, found an empty file")
        if len(text) != len(texts[0]):
            raise InputError(path, f"expected {len(texts[0])} lines, aligned with {args.text[0]}, found {len(text)}")
    build(args.kind, texts, args.output, steps=args.steps, seed=args.seed, vocab_size=args.vocab_size)
    print(f"wrote {args.output}/checkpoints/model.ckpt, {args.output}/hparams.yaml and {args.output}/encoder")
    return 0


if __name__ == "__main__":
    main()

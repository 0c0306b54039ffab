"""A tiny MetricX-24 checkpoint made here, for the tests and ``make demo-metrics``: an mT5 whose vocabulary reaches
the score token (id 250089) and a Unigram tokenizer trained on the demo's English and German, saved with
``save_pretrained`` as a local checkpoint.

The model is random but for the score token's row of ``lm_head``, set so that its logit lands inside [0, 25] and
varies with the input (the official clipping would otherwise flatten every score to 0 or 25). Its scores rank
nothing a person would: it exercises the code, as the demo's models do.

CLI::

    python -m docnmt.score.tiny_metricx --output results/demo-metrics/metricx [--tied] [--seed 1]
"""

from __future__ import annotations

import json
from pathlib import Path

from ..manual import argument_parser
from ..textio import cli_errors
from ..option_ranges import SEED


def build_tokenizer(folder: Path, vocab_size: int = 400):
    """A T5 tokenizer (Unigram, mT5's layout: <pad> 0, </s> 1, <unk> 2, pieces, sentinels) on the demo's text."""
    import io

    import sentencepiece
    from transformers import T5Tokenizer

    from docnmt.corpora.demo import generate

    docs = generate(seed=3, n_docs_per_split={"train": 60, "test": 2})["train"]
    texts = [s for d in docs for s in d.src + d.tgt]
    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(sentence_iterator=iter(texts), model_writer=model, vocab_size=vocab_size,
                                             model_type="unigram", character_coverage=1.0, bos_id=-1, eos_id=-1,
                                             unk_id=0, minloglevel=2)
    processor = sentencepiece.SentencePieceProcessor(model_proto=model.getvalue())
    pieces = [(processor.id_to_piece(i), processor.get_score(i)) for i in range(1, processor.get_piece_size())]
    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0)] + pieces + \
        [(f"<extra_id_{i}>", 0.0) for i in range(99, -1, -1)]
    tokenizer = T5Tokenizer(vocab=vocab, extra_ids=100)
    tokenizer.save_pretrained(str(folder))
    return tokenizer


def build(folder: Path, tied: bool = True, seed: int = 1, vocab_size: int = 250112) -> Path:
    """The tiny checkpoint in ``folder``. ``tied``: as transformers 5 saves every mT5 (its config ties the
    embeddings); untied (False): ``lm_head`` differs from the embeddings and config.json says so, as in the released
    MetricX-24 checkpoints."""
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import MT5Config, MT5ForConditionalGeneration

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = build_tokenizer(folder)
    torch.manual_seed(seed)
    config = MT5Config(vocab_size=vocab_size, d_model=16, d_kv=8, d_ff=32, num_layers=2, num_decoder_layers=1,
                       num_heads=2, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
    model = MT5ForConditionalGeneration(config).eval()
    sample = tokenizer(["source: The lamp is old. candidate: Die Lampe ist alt.",
                        "source: Hi Tom! candidate: Hallo Tom! reference: Hallo Tom!"], padding=True,
                       return_tensors="pt")
    with torch.no_grad():
        hidden = model(**sample, decoder_input_ids=torch.zeros((2, 1), dtype=torch.long),
                       output_hidden_states=True).decoder_hidden_states[-1][:, 0]
        direction = hidden.mean(0)
        row = direction / direction.norm() ** 2 * 12.0  # logit 12 at the mean, varying around it
        score_token = 250089 if vocab_size > 250089 else vocab_size - 1
        if tied:  # the official class scales the decoder's output by d_model ** -0.5 before a tied lm_head
            model.shared.weight[score_token] = row / config.d_model ** -0.5
    model.save_pretrained(str(folder))
    if not tied:  # released checkpoints: lm_head its own weight, config.json says so
        weights = load_file(str(folder / "model.safetensors"))
        head = weights["shared.weight"].clone()
        head[score_token] = row
        weights["lm_head.weight"] = head
        save_file(weights, str(folder / "model.safetensors"), metadata={"format": "pt"})
        config_file = folder / "config.json"
        written = json.loads(config_file.read_text())
        written["tie_word_embeddings"] = False
        config_file.write_text(json.dumps(written, indent=2))
    return folder


@cli_errors
def main(argv=None) -> int:
    parser = argument_parser("docnmt.score.tiny_metricx", __doc__.split("\n\n")[0])
    parser.add_argument("--output", required=True, type=Path, help="the checkpoint folder to make")
    parser.add_argument("--tied", action="store_true",
                        help="tie the embeddings, as transformers 5 saves every mT5 (default: untied, as released)")
    parser.add_argument("--seed", type=SEED, default=1)
    args = parser.parse_args(argv)
    build(args.output, tied=args.tied, seed=args.seed)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

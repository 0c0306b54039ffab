"""A trained fairseq translation model, loaded once, for forced scoring (and decoding).

Loads a checkpoint with the dictionaries of its data folder: the workflow's
binarized folder, or any fairseq data folder holding ``dict.{src}.txt`` and
``dict.{tgt}.txt`` (a model trained elsewhere; ``torch.load(weights_only=False)``:
fairseq checkpoints hold more than tensors, which torch >= 2.6 refuses by
default). Text in and out is BPE-level, tokens separated by spaces, ``<sep>``
between the sentences of a document-level segment. A model trained with
another separator token (``separator``, e.g. ``<brk>``) reads and writes
``<sep>`` all the same: :meth:`Model.encode` maps ``<sep>`` to the model's
token and :meth:`Model.decode` maps it back, so the rest of the package keeps
one name for it.

Forced scoring computes, in one teacher-forced forward pass per batch, the
log-probability of a given target under the model, optionally only of the
tokens after the last ``<sep>`` (the current sentence of a window whose
earlier sentences are its target context).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from .. import SEP
from ..interface import DEFAULT_DTYPE, DTYPES, Scored, resolve_dtype  # noqa: F401 - shared types
from ..textio import InputError

os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")


class Model:
    """A checkpoint on ``device`` (default: CUDA if available) in ``dtype`` (default: float32 on every
    device); search and forced scoring run in that dtype, log-probabilities in float32."""

    backend = "fairseq"

    def __init__(self, checkpoint: os.PathLike | str, data: os.PathLike | str, device: str | None = None,
                 dtype: str | None = None, separator: str = SEP):
        import torch

        from ..environment import import_fairseq

        import_fairseq()
        from fairseq import checkpoint_utils

        checkpoint, data = Path(checkpoint), Path(data)
        if not checkpoint.exists():
            raise InputError(checkpoint, "model checkpoint not found")
        if not (data / "manifest.json").exists() and not list(data.glob("dict.*.txt")):
            raise InputError(data, "expected the model's data folder: the workflow's binarized folder (manifest.json) "
                                   "or a fairseq data folder with dict.SRC.txt and dict.TGT.txt, found neither")
        try:
            models, _cfg, task = checkpoint_utils.load_model_ensemble_and_task(
                [str(checkpoint)], arg_overrides={"data": str(data)}
            )
        except Exception as err:  # noqa: BLE001
            raise InputError(checkpoint, f"expected a fairseq checkpoint, could not load it ({type(err).__name__}: {err})") from None
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.dtype = resolve_dtype(dtype, self.device)
        self.model = models[0].to(device=self.device, dtype=getattr(torch, self.dtype)).eval()
        self.task = task
        self.dict = task.target_dictionary
        self.src_dict = task.source_dictionary
        self.sep_token = separator
        # a sentence-level model trained elsewhere may lack a separator: it never sees one
        self.sep = self.dict.index(separator) if separator in self.dict.indices else None
        self.eos = self.dict.eos()
        self.pad = self.dict.pad()
        self.max_positions = min(self.model.max_positions())
        self.checkpoint = str(checkpoint)

    # ---- tokens -----------------------------------------------------------
    def encode(self, text: str, source: bool = False) -> list[int]:
        """Token ids of BPE text, ``</s>`` appended."""
        dictionary = self.src_dict if source else self.dict
        sep = self.sep_token
        ids = [dictionary.index(sep if tok == SEP else tok) for tok in text.split()] + [self.eos]
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        """BPE text of token ids (``</s>`` and padding dropped, the model's separator written ``<sep>``)."""
        return " ".join(SEP if i == self.sep else self.dict[i] for i in ids if i not in (self.eos, self.pad))

    # ---- batching ---------------------------------------------------------
    def _collate(self, seqs: list[list[int]], left_pad: bool):
        import torch

        width = max(len(s) for s in seqs)
        out = torch.full((len(seqs), width), self.pad, dtype=torch.long)
        for i, s in enumerate(seqs):
            if left_pad:
                out[i, width - len(s):] = torch.tensor(s)
            else:
                out[i, : len(s)] = torch.tensor(s)
        return out.to(self.device)

    def check_length(self, ids: Sequence[int], what: str) -> None:
        if len(ids) > self.max_positions:
            raise InputError(
                what, f"expected at most {self.max_positions} tokens (the model's max positions), found {len(ids)}"
            )

    def score(self, sources: Sequence[str], targets: Sequence[str], after_last_sep: bool = True,
              batch_size: int = 64) -> list[Scored]:
        """Forced scoring of ``targets`` given ``sources`` (BPE text), one forward pass per batch.

        With ``after_last_sep``, only the tokens after the target's last ``<sep>``
        (and the final ``</s>``) count: the earlier segments are context.
        """
        import torch

        results: list[Scored] = []
        for start in range(0, len(sources), batch_size):
            src = [self.encode(s, source=True) for s in sources[start:start + batch_size]]
            tgt = [self.encode(t) for t in targets[start:start + batch_size]]
            for i, (s, t) in enumerate(zip(src, tgt)):
                self.check_length(s, f"source {start + i + 1}")
                self.check_length(t, f"target {start + i + 1}")
            src_tokens = self._collate(src, left_pad=True)
            src_lengths = torch.tensor([len(s) for s in src], device=self.device)
            prev = self._collate([[self.eos] + t[:-1] for t in tgt], left_pad=False)
            target = self._collate(tgt, left_pad=False)
            with torch.no_grad():
                logits, _ = self.model(src_tokens, src_lengths, prev)
                lprobs = torch.log_softmax(logits.float(), dim=-1)
                token_lp = lprobs.gather(-1, target.unsqueeze(-1)).squeeze(-1)
            for i, t in enumerate(tgt):
                first = 0
                if after_last_sep and self.sep in t:
                    first = len(t) - 1 - t[::-1].index(self.sep) + 1
                values = token_lp[i, first:len(t)]
                results.append(Scored(float(values.sum()), len(t) - first))
        return results


def add_backend_argument(parser) -> None:
    """``--backend``: which registered backend (:data:`docnmt.interface.REGISTRY`) the CLI's ``--model`` (and
    ``--*-model``) is, fairseq unless given."""
    from ..interface import DEFAULT, REGISTRY

    parser.add_argument("--backend", default=DEFAULT, choices=list(REGISTRY),
                        help="; ".join(f"{name}: {b.summary}" for name, b in REGISTRY.items()))


def add_language_code_arguments(parser) -> None:
    """``--src-lang``/``--tgt-lang`` where they only name a transformers model's language codes."""
    parser.add_argument("--src-lang", help="transformers: the source language code of a model with language tokens "
                                           "(e.g. eng_Latn for NLLB, en for M2M100, en_XX for mBART-50)")
    parser.add_argument("--tgt-lang", help="transformers: the target language code of such a model")


def add_dtype_argument(parser) -> None:
    """``--dtype``: the precision of the search and of forced scoring (float32 by default, on every device)."""
    parser.add_argument("--dtype", default=DEFAULT_DTYPE, choices=list(DTYPES),
                        help="the model's dtype in the search and forced scoring (default float32 on every device, "
                             "as fairseq and the paper; float16/bfloat16 are faster on a GPU and may change outputs)")


def add_separator_argument(parser) -> None:
    """``--separator``: the token the document-level model was trained with between sentences."""
    parser.add_argument("--separator", default=SEP,
                        help="the separator token the model was trained with between a window's sentences "
                             "(default <sep>; e.g. <brk> for a model trained elsewhere)")


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1 (argparse names the option in its error)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        import argparse

        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def add_search_arguments(parser) -> None:
    """The search settings every decoding CLI shares: beam, length penalty, k, h, batch size, hypothesis length,
    device, dtype and separator."""
    parser.add_argument("--beam", type=int, default=12, help="token-level beam size (the paper: 12)")
    parser.add_argument("--lenpen", type=float, default=1.0, help="length penalty (1: length normalization)")
    parser.add_argument("--k", type=int, default=3, help="sentences per window the document-level model knows")
    parser.add_argument("--h", type=int, default=12, help="document contexts kept by doc-trans-beam")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-len-b", type=positive_int, default=200,
                        help="at most this many tokens a hypothesis (fairseq-generate's --max-len-b, with "
                             "--max-len-a 0; transformers' max_new_tokens); default 200, as both")
    parser.add_argument("--device", help="cpu, cuda or cuda:N (default: cuda if available, else cpu)")
    add_dtype_argument(parser)
    add_separator_argument(parser)


def add_scoring_model_arguments(parser) -> None:
    """CLI arguments of a forced-scoring tool: the backend, the model (and its dictionary), its level and k, the
    dtype (:func:`docnmt.decode.backends.model_from_args` loads it)."""
    add_backend_argument(parser)
    parser.add_argument("--model", required=True, type=Path, help="the checkpoint, or the transformers model folder")
    parser.add_argument("--data", type=Path, help="fairseq: the model's binarized data folder (dictionary)")
    parser.add_argument("--level", required=True, choices=["sentence", "document"])
    parser.add_argument("--k", type=int, default=3, help="sentences per document-level window")
    add_dtype_argument(parser)
    add_separator_argument(parser)

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

from .... import SEP
from ...requests import Scored, resolve_dtype
from ..encoder_decoder import check_length, window_fits
from ....textio import InputError

os.environ.setdefault("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")


class Model:
    """A checkpoint on ``device`` (default: CUDA if available) in ``dtype`` (default: float32 on every
    device); search and forced scoring run in that dtype, log-probabilities in float32."""

    template = None  # no prompt template (a causal LM's)

    backend = "fairseq"

    def __init__(self, checkpoint: os.PathLike | str, data: os.PathLike | str, device: str | None = None,
                 dtype: str | None = None, separator: str = SEP):
        import torch

        from ....startup import import_fairseq

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
        self.vocab = len(self.dict)
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

    check_length = check_length  # InputError naming ``what`` when ``ids`` exceed max_positions

    def fits(self, source: Sequence[int], prefix: Sequence[int], continuation: int = 1,
             document: Sequence[int] = ()) -> bool:
        """The request's source fits the encoder; ``</s>``, the prefix and ``continuation`` tokens the decoder."""
        return window_fits(self, source, prefix, continuation, prompt=1, document=document)

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

"""The tests' tiny Hugging Face models, built in one folder before pytest (make test-tiny-models), so that no pytest
worker trains one while another waits for it:

* ``llama``: the tiny Llama of tests/llmmodel.py (a byte-level tokenizer trained on the demo corpus with a ChatML
  chat template, 150 updates on its pairs as chat turns);
* ``qwen2-plain``: a tiny Qwen2 whose tokenizer has no chat template (a base model's), 150 updates on the pairs
  written out with the plain part of the template translate;
* ``marian``: the tiny Marian model of tests/hfmodel.py (a tokenizer with a <brk> separator, 150 updates on the
  demo's sentences and k=3 windows);
* ``m2m100``: the tiny M2M100 of tests/hfmodel.py (language tokens, 150 updates).

conftest.py's fixtures (``tiny_llama``, ``tiny_qwen2_base``, ``hf_marian``, ``hf_m2m100``) read them from
``$DOCNMT_TINY_MODELS/NAME`` where they are, and build the same themselves otherwise.

Usage: python tests/tiny_models.py --output DIR [--only NAME ...]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


#: Every model's updates: enough that each answers with a sentence and ends it (the tests that read them assert it).
UPDATES = 150


def _llama(folder: Path) -> Path:
    import llmmodel

    return llmmodel.build(folder, steps=UPDATES)


def _qwen2_plain(folder: Path) -> Path:
    import llmmodel

    return llmmodel.build(folder, architecture="qwen2", steps=UPDATES, chat=False)


def _marian(folder: Path) -> Path:
    import hfmodel

    return hfmodel.build(folder, steps=UPDATES)


def _m2m100(folder: Path) -> Path:
    import hfmodel

    return hfmodel.build_m2m100(folder, steps=UPDATES)


#: Each model's folder name and how it is built into that folder.
BUILDS = {"llama": _llama, "qwen2-plain": _qwen2_plain, "marian": _marian, "m2m100": _m2m100}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, required=True, help="the folder that gets one folder per model")
    parser.add_argument("--only", nargs="+", choices=sorted(BUILDS), help="these models only")
    args = parser.parse_args(argv)
    for name in args.only or BUILDS:
        BUILDS[name](args.output / name)
        print(f"{args.output / name}: built", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The vllm backend: a decoder-only LLM's local folder run on vLLM's engine (``vllm.LLM``, offline), with the
causal-LM backend's prompts, strategies and hypotheses (:class:`~docnmt.decode.prompting.model.PromptedModel`).

The strategies' requests become the same conversations, to the same token ids, as with ``causal-lm``; what differs is
the engine that answers them. A search round's requests (every sentence of a one-call strategy; sentence i of every
document in doc-trans) go to the engine in one call, which schedules them (continuous batching) and reads the prompt
blocks it already holds from its automatic prefix cache. Greedy search and epsilon samples go through
``LLM.generate``; beam search too, one engine step at a time with causal-lm's (transformers') semantics
(:mod:`docnmt.decode.prompting.beam`: every live beam's next tokens, its prompt and earlier tokens read from the
prefix cache; a search ends when its answers have, not at the token limit as ``LLM.beam_search`` does); forced
scoring (perplexity, CXMI) through ``prompt_logprobs``, which vLLM computes without its prefix cache. On the CPU
the cache's blocks are :data:`CPU_BLOCK_SIZE` tokens (vLLM's CPU default, 128, is longer than a short prompt,
whose every step would be computed again in full).

Cost counters: ``tokens_cached`` is the engine's ``num_cached_tokens`` of each request, ``tokens_prefilled`` the rest
of its prompt, ``tokens_generated`` the tokens of its outputs (every sample's; a beam search's: each live beam's token at
each step, the engine's generation counter), ``decoder_positions`` their sum, and ``forward_calls`` the engine's steps (its iteration counter).
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from .... import SEP
from ...backend import backend
from ...requests import Hypothesis, Request, Scored
from ....textio import InputError
from ...prompting.beam import beam_search, keep_for
from ...prompting.model import PromptCounted, PromptedModel

BACKEND = "vllm"
#: the share of memory the engine reserves for weights and its key-value cache where none is configured: vLLM's own
#: default on a GPU; on the CPU, where the share is of the machine's RAM and other jobs run beside, less
CPU_MEMORY_UTILIZATION = 0.15
#: the widest beam the engine serves
MAX_BEAM = 32
#: the most next-token log-probs a step may ask for, which vLLM caps at the engine's max_logprobs (20 unless set):
#: a beam search asks for max(2, 1 + end tokens) x beam (:func:`docnmt.decode.prompting.beam.keep_for`)
MAX_LOGPROBS = 4 * MAX_BEAM
#: the prefix cache's block on the CPU: the shortest the CPU build's attention takes (a multiple of 32)
CPU_BLOCK_SIZE = 32
#: the attention head sizes vLLM's CPU build runs (its attention kernels)
CPU_HEAD_SIZES = (32, 64, 80, 96, 112, 128, 192, 256)


#: The engines this process started, by (folder, dtype, engine options): a model loaded again with the same ones
#: (the translate CLI's two levels, a script's CLIs called in one process) reuses its engine instead of starting
#: another, which would reserve its memory a second time.
ENGINES: dict[tuple, object] = {}


def close_engines() -> int:
    """Shuts down the engines this process started (their engine core processes and the memory they reserved), so
    that the next model loaded starts an engine of its own alone; the number shut down."""
    import gc

    closed = 0
    while ENGINES:
        _, llm = ENGINES.popitem()
        llm.llm_engine.engine_core.shutdown()  # type: ignore[attr-defined]
        closed += 1
    gc.collect()
    return closed


def head_size(config) -> int:
    """The model's attention head size."""
    return int(getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads)


def preload_without_spaces() -> None:
    """On the CPU vLLM preloads torch's libgomp and its own tcmalloc in its engine's processes (LD_PRELOAD), which the
    dynamic loader splits at spaces: from an environment in a folder with a space ("/home/me/my projects/...") the
    libraries are not loaded and the engine's worker hangs. This preloads them, before vLLM does, through links in a
    folder without a space (vLLM then leaves LD_PRELOAD alone)."""
    import glob
    import tempfile

    import torch
    import vllm

    torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    found = (glob.glob(os.path.join(os.path.dirname(vllm.__file__), "libs", "libtcmalloc*.so*"))[:1]
             + glob.glob(os.path.join(torch_lib, "libgomp*.so*"))[:1])
    if not any(any(c.isspace() for c in path) for path in found):
        return
    base = tempfile.gettempdir()
    folder = os.path.join(base if not any(c.isspace() for c in base) else "/tmp", f"docnmt-vllm-libs-{os.getuid()}")
    os.makedirs(folder, exist_ok=True)
    links = []
    for path in found:
        link = os.path.join(folder, os.path.basename(path))
        if os.path.islink(link) and os.readlink(link) != path:
            os.unlink(link)
        if not os.path.lexists(link):
            os.symlink(path, link)
        links.append(link)
    # what else is preloaded and loadable (not the pieces of a path split at its spaces)
    kept = [part for part in os.environ.get("LD_PRELOAD", "").replace(":", " ").split() if os.path.isfile(part)
            and "libgomp" not in part and "libtcmalloc" not in part]
    os.environ["LD_PRELOAD"] = ":".join([*links, *kept])


def compiles() -> bool:
    """Whether vLLM may compile the model with torch.compile here: not where torch lies in a folder with a space,
    whose C++ build of the compiled graph gets the include and library folders split at the space ("cannot find
    -ltorch"); the engine then runs the model eagerly (``enforce_eager``), and its processes without TorchDynamo
    (``TORCHDYNAMO_DISABLE``: vLLM's sampler compiles a function of its own even so), with the same outputs."""
    import torch

    return not any(c.isspace() for c in os.path.dirname(torch.__file__))


def cpu_engine(one_worker: bool) -> dict:
    """The engine's options on the CPU, for the backend's engine and its server alike: the prefix cache's blocks of
    :data:`CPU_BLOCK_SIZE` tokens and, with ``one_worker`` (no tensor parallelism over several CPUs), that worker in
    the engine core's process (the ``uni`` executor) instead of a process of its own that imports vLLM again, and the
    model run eagerly (``enforce_eager``, TorchDynamo off) instead of compiled, which took 15 s an engine start. The
    backend's engine started in about 5 s instead of 60 on 2 cores, with the same translations and as fast a search
    on the demo's LLM (docs/own-models.md, "LLMs on vLLM")."""
    if not one_worker:
        return {"block_size": CPU_BLOCK_SIZE}
    os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")
    return {"block_size": CPU_BLOCK_SIZE, "distributed_executor_backend": "uni", "enforce_eager": True}


def on_cpu() -> bool:
    """Whether vLLM runs on the CPU here (its CPU build, or no GPU)."""
    from vllm.platforms import current_platform

    return current_platform.is_cpu()


#: ``decode.speculative: ngram``: vLLM's n-gram speculative decoding (prompt lookup): up to 5 draft tokens, copied from
#: where the prompt holds the last 2 to 4 tokens decided, checked in one pass of the model (its docs' settings)
NGRAM = {"method": "ngram", "num_speculative_tokens": 5, "prompt_lookup_min": 2, "prompt_lookup_max": 4}


class VLLMModel(PromptedModel):
    """A causal LM's folder (:class:`PromptedModel`: its tokenizer and prompt) on a ``vllm.LLM`` engine in ``dtype``
    (default float32), over ``tensor_parallel_size`` GPUs, reserving ``gpu_memory_utilization`` of the memory
    (default: vLLM's on a GPU, :data:`CPU_MEMORY_UTILIZATION` on the CPU), with a context of ``max_model_len``
    tokens (default: the model's), the engine's ``seed`` and, with ``speculative`` ngram, its n-gram speculative
    decoding (:data:`NGRAM`; vLLM runs no custom logits processor then, so the engine has no epsilon sampling).
    Nothing is fetched: the folder is read as it is."""

    backend = BACKEND

    def __init__(self, folder: os.PathLike | str, device: str | None = None, dtype: str | None = None,
                 separator: str = SEP, src_lang: str | None = None, tgt_lang: str | None = None,
                 template: str | None = None, tensor_parallel_size: int | None = None,
                 gpu_memory_utilization: float | None = None, max_model_len: int | None = None,
                 seed: int | None = None, speculative: str | None = None):
        from ...requests import resolve_dtype

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        super().__init__(folder, separator, src_lang, tgt_lang, template)
        from vllm import LLM

        from .epsilon import EpsilonLogitsProcessor

        cpu = on_cpu()
        if device is not None and (device == "cpu") != cpu:
            raise InputError(self.folder, f"vLLM runs on {'the CPU' if cpu else 'the GPU'} here, not on {device}")
        if cpu and head_size(self.config) not in CPU_HEAD_SIZES:
            raise InputError(self.folder / "config.json", f"attention head size {head_size(self.config)}: vLLM's CPU "
                             f"build runs head sizes {', '.join(map(str, CPU_HEAD_SIZES))}")
        self.dtype = resolve_dtype(dtype)
        self.device = "cpu" if cpu else "cuda"
        if max_model_len is not None:
            self.max_positions = min(self.max_positions, int(max_model_len))
        self.engine_options: dict[str, Any] = {
            "tensor_parallel_size": int(tensor_parallel_size or 1),
            "gpu_memory_utilization": gpu_memory_utilization or (CPU_MEMORY_UTILIZATION if cpu else 0.9),
            "max_model_len": self.max_positions, "seed": 0 if seed is None else int(seed),
        }
        self.speculative = speculative if speculative not in (None, "none") else None
        if self.speculative == "ngram":
            self.engine_options["speculative_config"] = dict(NGRAM)
        key = (str(self.folder.resolve()), self.dtype, repr(sorted(self.engine_options.items())))
        options: dict[str, Any] = {"enforce_eager": not compiles()}
        if cpu:
            preload_without_spaces()
            one_worker = self.engine_options["tensor_parallel_size"] == 1
            options.update(cpu_engine(one_worker))
            if one_worker:  # the engine core in this process too (offline; a server's event loop needs its own)
                os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        if not compiles():
            os.environ["TORCHDYNAMO_DISABLE"] = "1"
        if key not in ENGINES:
            try:
                ENGINES[key] = LLM(model=str(self.folder), tokenizer=str(self.folder), dtype=self.dtype,
                                   enable_prefix_caching=True, disable_log_stats=False, max_logprobs=MAX_LOGPROBS,
                                   logits_processors=[] if self.speculative else [EpsilonLogitsProcessor], **options,
                                   **self.engine_options)
            except Exception as err:  # noqa: BLE001
                raise InputError(self.folder, f"vLLM could not start the model ({type(err).__name__}: {err})"
                                 ) from None
        self.llm: Any = ENGINES[key]
        self.net = self.model = self.llm

    def score(self, sources: Sequence[str], targets: Sequence[str], after_last_sep: bool = True,
              batch_size: int = 64) -> list[Scored]:
        """Log-prob of each target's answer given its source (:meth:`PromptedModel.forced_pairs`), from the engine's
        prompt log-probs, all pairs in one call."""
        return self.prompt_logprobs(self.forced_pairs(sources, targets, after_last_sep))

    def prompt_logprobs(self, pairs: Sequence[tuple[list[int], list[int]]]) -> list[Scored]:
        """For each (prompt, output), the log-prob of the output after the prompt: the engine's ``prompt_logprobs``
        of the output's positions in prompt + output."""
        from vllm import SamplingParams
        from vllm.inputs import TokensPrompt

        if not pairs:
            return []
        params = SamplingParams(temperature=0.0, max_tokens=1, prompt_logprobs=0, detokenize=False)
        outputs = self.llm.generate([TokensPrompt(prompt_token_ids=prompt + output) for prompt, output in pairs],
                                    params, use_tqdm=False)
        scored = []
        for (prompt, output), result in zip(pairs, outputs):
            steps = result.prompt_logprobs[len(prompt):]
            scored.append(Scored(sum(step[token].logprob for step, token in zip(steps, output)), len(output)))
        return scored


def _metric(llm, name: str) -> float:
    """A counter's value, or a histogram's count, of the engine's metrics (0 where it has none)."""
    total = 0.0
    for metric in llm.get_metrics():
        if metric.name == name:
            total += float(getattr(metric, "value", None) or getattr(metric, "count", 0) or 0)
    return total


class VLLMSearcher(PromptCounted):
    """The search of a :class:`VLLMModel`: each call's requests to the engine at once; ``beam`` 1 is greedy
    ``LLM.generate``, more is causal-lm's beam search over the engine's steps (:mod:`docnmt.decode.prompting.beam`);
    ``max_new_tokens`` limits an answer (its end token included).
    ``batch_size`` and ``max_tokens`` are the engine's to schedule (it fills its batches itself), kept for the
    interface."""

    vocabulary = "vocabulary"

    def __init__(self, model: VLLMModel, beam: int = 12, lenpen: float = 1.0, batch_size: int = 64,
                 max_new_tokens: int = 200, max_tokens: int | None = backend(BACKEND).max_tokens):
        self._setup(model, beam, lenpen, batch_size, max_tokens, max_new_tokens)
        if beam > MAX_BEAM:
            raise ValueError(f"beam {beam}: the vllm backend's engine serves beams of at most {MAX_BEAM}")
        if beam > 1 and keep_for(beam, model.ends) > MAX_LOGPROBS:
            raise ValueError(f"beam {beam}: with {len(model.ends)} end tokens a step asks for "
                             f"{keep_for(beam, model.ends)} log-probs, the engine gives at most {MAX_LOGPROBS}")
        self.llm = model.llm
        self._pieces: dict[int, str] = {}

    # ---- the engine's calls ---------------------------------------------------------------
    def _params(self, limit: int, **options):
        from vllm import SamplingParams

        end = self.model.prompter.answer_end
        return SamplingParams(max_tokens=limit, stop_token_ids=list(self.model.ends), logprobs=0,
                              stop=[end] if end is not None else None, include_stop_str_in_output=True,
                              **options)

    def _generate(self, prompts: Sequence[list[int]], params) -> list:
        """The engine's outputs of ``prompts`` (one ``SamplingParams`` or one each), its counters added."""
        from vllm.inputs import TokensPrompt

        steps = _metric(self.llm, "vllm:iteration_tokens_total")
        outputs = self.llm.generate([TokensPrompt(prompt_token_ids=list(p)) for p in prompts], params, use_tqdm=False)
        self.forward_calls += int(_metric(self.llm, "vllm:iteration_tokens_total") - steps)
        for prompt, result in zip(prompts, outputs):
            cached = int(result.num_cached_tokens or 0)
            generated = sum(len(c.token_ids) for c in result.outputs)
            self.tokens_cached += cached
            self.tokens_prefilled += len(prompt) - cached
            self.tokens_generated += generated
            self.decoder_positions += len(prompt) - cached + generated
        return outputs

    def _hypothesis(self, answer: Sequence[int], steps, lines: int) -> Hypothesis:
        """An answer's hypothesis (:meth:`PromptedModel.hypothesis`), cut after its first end token, its log-prob the
        sum of its tokens' (``steps``: each token's logprobs dict)."""
        answer = list(answer)
        length = next((n + 1 for n, t in enumerate(answer) if t in self.model.ends), len(answer))
        logprob = sum(step[token].logprob for step, token in zip(steps[:length], answer[:length]))
        return self.model.hypothesis(answer[:length], logprob / max(length, 1) ** self.lenpen, logprob, lines)

    def search(self, requests: Sequence[Request]) -> list[list[Hypothesis]]:
        """The ``beam`` best answers to each request's prompt, best first, as hypotheses of sentence ids."""
        prompts = [self.model.prompt(number, request, self.max_new_tokens)
                   for number, request in enumerate(requests, start=1)]
        lines = [self.model.answer_lines(request) for request in requests]
        if self.beam > 1:
            results = self._beam_search(prompts, lines)
        else:
            outputs = self._generate([p for p, _ in prompts], [self._params(limit, temperature=0.0)
                                                                for _, limit in prompts])
            results = [[self._hypothesis(c.token_ids, c.logprobs, n) for c in out.outputs]
                       for out, n in zip(outputs, lines)]
        self.batch_done(len(requests))
        return results

    def _beam_search(self, prompts: Sequence[tuple[list[int], int]], lines: Sequence[int]) -> list[list[Hypothesis]]:
        """Causal-lm's beam search (:func:`~docnmt.decode.prompting.beam.beam_search`) over the engine's steps, every
        request at once; each hypothesis's answer cut after its first end token (or the template's end text)."""
        stop = self.model.prompter.answer_end
        found = beam_search([p for p, _ in prompts], [limit for _, limit in prompts], self._step, self.beam,
                                  self.lenpen, self.model.ends, stop, self._piece if stop is not None else None)
        return [[self.model.hypothesis(e.tokens, e.score, sum(e.logprobs), n) for e in ended]
                for ended, n in zip(found, lines)]

    def _step(self, sequences: Sequence[Sequence[int]], keep: int) -> list[list[tuple[int, float]]]:
        """One engine step of a beam search: each sequence's ``keep`` most probable next tokens and log-probs."""
        from vllm import SamplingParams

        params = SamplingParams(max_tokens=1, logprobs=keep, temperature=0.0, detokenize=False)
        outputs = self._generate([list(s) for s in sequences], params)
        return [sorted(((int(t), float(lp.logprob)) for t, lp in out.outputs[0].logprobs[0].items()),
                       key=lambda pair: -pair[1])[:keep] for out in outputs]

    def _piece(self, token: int) -> str:
        """A token's text (where a plain template's end text may end an answer), decoded once a searcher."""
        if token not in self._pieces:
            self._pieces[token] = self.model.tokenizer.decode([token], clean_up_tokenization_spaces=False)
        return self._pieces[token]

    def sample(self, request: Request, count: int, epsilon: float, seed: int) -> list[Hypothesis]:
        """``count`` epsilon samples of the answer to the request's prompt (:mod:`docnmt.decode.sampling`), drawn by
        the engine with ``seed`` after its epsilon truncation (:mod:`.epsilon`); each sample's log-prob the model's."""
        from .epsilon import KEY

        if self.model.speculative:
            raise ValueError("epsilon sampling (MBR's samples) runs as the engine's logits processor, which vLLM does "
                             "not run under speculative decoding: decode.speculative none (--speculative none)")
        prompt, limit = self.model.prompt(1, request, self.max_new_tokens)
        (output,) = self._generate([prompt], self._params(limit, n=count, temperature=1.0, seed=int(seed),
                                                          extra_args={KEY: epsilon}))
        lines = self.model.answer_lines(request)
        return [self._hypothesis(c.token_ids, c.logprobs, lines) for c in output.outputs]

    def score_forced(self, requests: Sequence[Request], targets: Sequence[Sequence[int]],
                     ends: Sequence[int] | None = None) -> list[Scored]:
        """Log-prob of each target (a sentence's ids) as the answer to its request's prompt
        (:meth:`PromptedModel.forced`), from the engine's prompt log-probs, all requests in one call."""
        if len(targets) != len(requests) or (ends is not None and len(ends) != len(requests)):
            raise ValueError(f"expected one target (and end) per request ({len(requests)}), got {len(targets)}")
        pairs = [self.model.forced(number, request, target, None if ends is None else ends[number - 1])
                 for number, (request, target) in enumerate(zip(requests, targets), start=1)]
        for prompt, output in pairs:  # prompt log-probs are computed without the prefix cache
            self.tokens_prefilled += len(prompt) + len(output)
            self.decoder_positions += len(prompt) + len(output)
        return self.model.prompt_logprobs(pairs)

"""Build a tiny random-weight Llama with a locally trained byte-level BPE tokenizer (no download).

Run as a script by the `transformers_server` fixture: `python tests/tiny_llama.py OUT_DIR`. The model
has hidden size 64 and 2 layers (about 140k parameters), so `transformers serve` loads it on a CPU in
seconds. Its end-of-sequence token is chosen as the token greedy decoding of the benchmark's own
vocabulary settles into, so a request that does not suppress EOS really stops early, as a real model
does, and the serving client's length check has something to catch.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

SPECIAL = ["<s>", "</s>", "<pad>"]
CHAT_TEMPLATE = ("{% for message in messages %}{{ message['role'] }}: {{ message['content'] }}\n{% endfor %}"
                 "{% if add_generation_prompt %}assistant:{% endif %}")


def corpus() -> list[str]:
    """Training text: the serving benchmark's prompt vocabulary in many orders, plus some plain English."""
    import random

    from driftcheck.baselines.serving import PROMPT_WORDS

    rng = random.Random(7)
    lines = [" ".join(rng.choice(PROMPT_WORDS) for _ in range(40)) for _ in range(400)]
    return lines + ["The quick brown fox jumps over the lazy dog. Hello, world! 0123456789"] * 20


def train_tokenizer(out: Path) -> object:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=512, special_tokens=SPECIAL,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(corpus(), trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>")
    fast.chat_template = CHAT_TEMPLATE
    fast.save_pretrained(out)
    return fast


def attractor_token(model: object, tokenizer: object) -> int:
    """The token greedy decoding of benchmark-like prompts produces most often (a random model loops)."""
    import torch

    from driftcheck.baselines.serving import ServingPlan

    counts: Counter[int] = Counter()
    for prompt in ServingPlan(requests=4, prompt_words=16).prompts():
        ids = tokenizer(prompt, return_tensors="pt").input_ids  # type: ignore[operator]
        with torch.no_grad():
            out = model.generate(ids, max_new_tokens=24, do_sample=False, eos_token_id=None,  # type: ignore[attr-defined]
                                 pad_token_id=0)
        counts.update(out[0, ids.shape[1]:].tolist())
    return counts.most_common(1)[0][0]


def build(out: Path) -> dict[str, int]:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    out.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer(out)
    vocab = len(tokenizer)  # type: ignore[arg-type]
    config = LlamaConfig(vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                         bos_token_id=0, eos_token_id=1, pad_token_id=2, tie_word_embeddings=False)
    torch.manual_seed(20240601)
    model = LlamaForCausalLM(config).eval()
    eos = attractor_token(model, tokenizer)
    model.config.eos_token_id = eos
    model.generation_config.eos_token_id = eos
    model.generation_config.pad_token_id = 2
    model.save_pretrained(out)
    facts = {"parameters": sum(p.numel() for p in model.parameters()), "vocab_size": vocab, "eos_token_id": eos}
    (out / "tiny_llama.json").write_text(json.dumps(facts))
    return facts


if __name__ == "__main__":
    print(json.dumps(build(Path(sys.argv[1]))))

"""A synthetic decode: a fixed Llama-shaped decoder with seeded random weights, batch 1, KV cache.

Every tensor has a static shape (the attention spans the whole cache behind an additive mask, the
position lives in a tensor), so one decode step can be captured in a CUDA graph and replayed: the
same step eager and as a graph tells launch overhead apart from compute, as in serving stacks.
Weights come from a seeded generator on the device itself (drawing a few GB on the CPU would cost
more than the benchmark), so every machine of one device type decodes the same model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DecoderShape:
    """The model's dimensions; `new_tokens` tokens are generated per measured operation."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_len: int
    new_tokens: int

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


class SyntheticDecoder:
    """Greedy decoding of `shape.new_tokens` tokens from a one-token prompt."""

    def __init__(self, torch: Any, shape: DecoderShape, device: str, dtype: Any, seed: int = 0) -> None:
        self.torch, self.shape, self.device, self.dtype = torch, shape, device, dtype
        generator = torch.Generator(device=device).manual_seed(seed)

        def weight(*dims: int) -> Any:
            drawn = torch.randn(*dims, generator=generator, device=device, dtype=dtype)
            return drawn.mul_(1.0 / math.sqrt(dims[0]))

        h, f = shape.hidden, shape.ffn
        self.embed = weight(shape.vocab, h)
        self.layer_weights = [{"wq": weight(h, h), "wk": weight(h, h), "wv": weight(h, h), "wo": weight(h, h),
                               "gate": weight(h, f), "up": weight(h, f), "down": weight(f, h)}
                              for _ in range(shape.layers)]
        self.lm_head = weight(h, shape.vocab)
        cache_shape = (shape.layers, shape.heads, shape.max_len, shape.head_dim)
        self.k_cache = torch.zeros(cache_shape, device=device, dtype=dtype)
        self.v_cache = torch.zeros(cache_shape, device=device, dtype=dtype)
        half = shape.head_dim // 2
        inv_freq = 1.0 / (10000.0 ** (torch.arange(half, dtype=torch.float32) / half))
        angles = torch.outer(torch.arange(shape.max_len, dtype=torch.float32), inv_freq)
        self.cos = angles.cos().to(device=device, dtype=dtype)
        self.sin = angles.sin().to(device=device, dtype=dtype)
        self.token = torch.zeros(1, dtype=torch.long, device=device)
        self.pos = torch.zeros(1, dtype=torch.long, device=device)
        self.mask = torch.full((shape.max_len,), float("-inf"), device=device, dtype=dtype)
        self.graph: Any = None

    def reset(self) -> None:
        """Back to the start of a sequence: empty cache mask, position 0, token 1."""
        self.mask.fill_(float("-inf"))
        self.pos.zero_()
        self.token.fill_(1)

    def _rms_norm(self, x: Any) -> Any:
        return x * self.torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)

    def _rope(self, x: Any, cos: Any, sin: Any) -> Any:
        half = self.shape.head_dim // 2
        x1, x2 = x[..., :half], x[..., half:]
        return self.torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)

    def step(self) -> None:
        """One decode step in place: attend over the cache, write K/V, pick the next token greedily."""
        torch, shape = self.torch, self.shape
        self.mask.index_fill_(0, self.pos, 0.0)
        cos, sin = self.cos.index_select(0, self.pos), self.sin.index_select(0, self.pos)
        x = self.embed.index_select(0, self.token)
        for layer, w in enumerate(self.layer_weights):
            hidden = self._rms_norm(x)
            q = self._rope((hidden @ w["wq"]).view(shape.heads, shape.head_dim), cos, sin)
            k = self._rope((hidden @ w["wk"]).view(shape.heads, shape.head_dim), cos, sin)
            v = (hidden @ w["wv"]).view(shape.heads, shape.head_dim)
            self.k_cache[layer].index_copy_(1, self.pos, k.unsqueeze(1))
            self.v_cache[layer].index_copy_(1, self.pos, v.unsqueeze(1))
            scores = (q.unsqueeze(1) @ self.k_cache[layer].transpose(1, 2)) / math.sqrt(shape.head_dim)
            attn = torch.softmax((scores + self.mask).float(), dim=-1).to(self.dtype) @ self.v_cache[layer]
            x = x + attn.reshape(1, shape.hidden) @ w["wo"]
            hidden = self._rms_norm(x)
            x = x + (torch.nn.functional.silu(hidden @ w["gate"]) * (hidden @ w["up"])) @ w["down"]
        logits = self._rms_norm(x) @ self.lm_head
        self.token.copy_(logits.argmax(dim=-1))
        self.pos.add_(1)

    def generate(self) -> None:
        """Decode `new_tokens` tokens eagerly."""
        self.reset()
        for _ in range(self.shape.new_tokens):
            self.step()

    def capture(self) -> None:
        """Capture one step in a CUDA graph (after a warm-up on a side stream, as CUDA graphs require)."""
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                self.reset()
                self.step()
        torch.cuda.current_stream().wait_stream(side)
        self.reset()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.step()

    def generate_graphed(self) -> None:
        """Decode `new_tokens` tokens by replaying the captured step."""
        self.reset()
        for _ in range(self.shape.new_tokens):
            self.graph.replay()

    def tokens(self) -> list[int]:
        """Greedy tokens of a full eager generation (for checking that two runs decode the same)."""
        self.reset()
        out = []
        for _ in range(self.shape.new_tokens):
            self.step()
            out.append(int(self.token.item()))
        return out

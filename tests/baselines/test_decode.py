"""The synthetic decoder: seeded weights decode the same tokens every time, and the cache is used."""

from __future__ import annotations

import torch

from driftcheck.baselines.decode import DecoderShape, SyntheticDecoder

SHAPE = DecoderShape(hidden=64, layers=2, heads=4, ffn=128, vocab=256, max_len=16, new_tokens=8)


def test_same_seed_same_tokens_other_seed_other_model() -> None:
    with torch.inference_mode():
        first = SyntheticDecoder(torch, SHAPE, "cpu", torch.float32, seed=0).tokens()
        again = SyntheticDecoder(torch, SHAPE, "cpu", torch.float32, seed=0).tokens()
        other = SyntheticDecoder(torch, SHAPE, "cpu", torch.float32, seed=1).tokens()
    assert first == again
    assert len(first) == 8 and all(0 <= t < 256 for t in first)
    assert first != other


def test_generate_fills_the_cache_up_to_new_tokens() -> None:
    with torch.inference_mode():
        model = SyntheticDecoder(torch, SHAPE, "cpu", torch.float32)
        model.generate()
        assert int(model.pos.item()) == 8
        assert bool((model.mask[:8] == 0).all()) and bool(torch.isinf(model.mask[8:]).all())
        assert float(model.k_cache[:, :, :8].abs().sum()) > 0
        # reset starts a new sequence at position 0
        model.reset()
        assert int(model.pos.item()) == 0

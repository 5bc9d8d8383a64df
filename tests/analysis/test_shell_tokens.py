"""A fix made only of plain characters is split where its spaces are, exactly as shlex splits it."""

from __future__ import annotations

import random
import shlex

from driftcheck.analysis.explain.fixes import _PLAIN_WORD_CHARS, command_words, shell_tokens


def _by_shlex(text: str) -> list[str] | None:
    try:
        lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split = True
        return list(lexer)
    except ValueError:
        return None


def test_random_texts_are_split_as_shlex_splits_them() -> None:
    rng = random.Random(35)
    plain = sorted(_PLAIN_WORD_CHARS)
    awkward = list("\\'\"#;&|()\t\n\r") + ["\u00a0", "é"]
    for _ in range(20_000):
        alphabet = plain if rng.random() < 0.7 else plain + awkward
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        assert shell_tokens(text) == _by_shlex(text), repr(text)


def test_fixes_of_every_shape_keep_their_commands() -> None:
    for text in ["unset NCCL_P2P_DISABLE", "export OMP_NUM_THREADS=8", "sudo sysctl -w vm.swappiness=60",
                 "python3 -m pip install 'torch==2.7.0+cu128' --extra-index-url https://x/cu128",
                 "echo tsc | sudo tee /sys/devices/system/clocksource/clocksource0/current_clocksource",
                 "nvidia-smi -pl 300 && nvidia-smi -lgc 1980", "restore the BIOS setting (see the vendor manual)",
                 "export A='b c'; unset D", "  export X=1  "]:
        assert shell_tokens(text) == _by_shlex(text)
    assert command_words("export OMP_NUM_THREADS=8") == [["export", "OMP_NUM_THREADS=8"]]
    assert command_words("restore the BIOS setting") is None

"""How guessable a bootstrap admin key looks, estimated from the key alone.

``COSTWISE_ENV=prod`` refuses a ``COSTWISE_BOOTSTRAP_ADMIN_KEY`` that repeats part of
itself or is patterned (:func:`check_bootstrap_randomness`). The estimate is an upper
bound read off the characters, not a proof of randomness: words are not recognised.
"""

from __future__ import annotations

import math
from collections import Counter

from app.errors import Misconfigured

__all__ = [
    "MIN_BOOTSTRAP_KEY_BITS",
    "MIN_BOOTSTRAP_KEY_LENGTH",
    "check_bootstrap_randomness",
    "estimated_entropy_bits",
    "unrepeated_length",
]

MIN_BOOTSTRAP_KEY_LENGTH = 32
MIN_BOOTSTRAP_KEY_BITS = 96
#: a run of at least this many characters that occurs earlier in the key is a repeat:
#: it adds (almost) no information. In a random 32-character hex key such a run occurs
#: by chance about once in 40,000 keys; in ``secrets.token_urlsafe(32)``, practically never.
MIN_REPEAT = 6
#: longer keys are judged by their first this many characters (the estimate is quadratic)
MAX_ANALYSED_CHARACTERS = 1000


def _factorise(key: str) -> tuple[str, list[tuple[int, int]]]:
    """The key as LZ77 describes it: its literal characters, and its repeats as
    ``(position, length)``: runs of at least :data:`MIN_REPEAT` characters that occur
    earlier in the key (the earlier occurrence may overlap the run, so a periodic key is
    one unit and one repeat). Greedy, longest repeat first; quadratic in the length, so
    only the first :data:`MAX_ANALYSED_CHARACTERS` are read."""
    key = key[:MAX_ANALYSED_CHARACTERS]
    literals: list[str] = []
    repeats: list[tuple[int, int]] = []
    i, n = 0, len(key)
    while i < n:
        length = 0
        while i + length < n and key.find(key[i : i + length + 1], 0, i + length) >= 0:
            length += 1
        if length >= MIN_REPEAT:
            repeats.append((i, length))
            i += length
        else:
            literals.append(key[i])
            i += 1
    return "".join(literals), repeats


def estimated_entropy_bits(key: str) -> float:
    """A crude upper bound of the key's entropy: the key described as LZ77 does
    (:func:`_factorise`), its literal characters counted by the Shannon entropy of their
    frequencies (length x bits per character) and each repeat by where it starts and how
    long it is (log2 of each). Forty 'a' are 5 bits, 'ab' x 20 8, '0123456789' x 4 41,
    'correcthorsebatterystaple' + 'correcthorse' 92; ``secrets.token_urlsafe(32)`` about
    200, a 32-character hex key about 115. Words are not recognised: a passphrase of
    distinct words is counted as random letters."""
    literals, repeats = _factorise(key)
    n = len(literals)
    counts = Counter(literals).values()
    bits = -n * sum(c / n * math.log2(c / n) for c in counts) if n else 0.0
    bits += sum(math.log2(max(i, 1)) + math.log2(length) for i, length in repeats)
    return max(0.0, bits)


def unrepeated_length(key: str) -> int:
    """How many characters of the key are not part of a repeat (see :func:`_factorise`)."""
    return len(_factorise(key)[0])


def check_bootstrap_randomness(key: str) -> None:
    """Refuse a production bootstrap key that repeats itself or is patterned (the message
    names the setting and what is expected, never the key)."""
    advice = 'Use e.g. python -c "import secrets; print(secrets.token_urlsafe(32))"'
    unrepeated = unrepeated_length(key)
    if unrepeated < MIN_BOOTSTRAP_KEY_LENGTH:
        raise Misconfigured(
            "COSTWISE_BOOTSTRAP_ADMIN_KEY is not random enough for COSTWISE_ENV=prod: only "
            f"{unrepeated} of its {len(key)} characters are not a repeat of an earlier part "
            f"of it (a run of {MIN_REPEAT} or more characters seen before adds nothing); at "
            f"least {MIN_BOOTSTRAP_KEY_LENGTH} random characters needed. {advice}",
            field="COSTWISE_BOOTSTRAP_ADMIN_KEY",
        )
    bits = estimated_entropy_bits(key)
    if bits < MIN_BOOTSTRAP_KEY_BITS:
        raise Misconfigured(
            "COSTWISE_BOOTSTRAP_ADMIN_KEY is not random enough for COSTWISE_ENV=prod "
            f"(about {bits:.0f} bits by its character frequencies and repeats; at least "
            f"{MIN_BOOTSTRAP_KEY_BITS} needed): repeated or patterned characters are "
            f"guessable. {advice}",
            field="COSTWISE_BOOTSTRAP_ADMIN_KEY",
        )

"""The help-desk articles and the retriever under test."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass
class Article:
    id: str
    text: str


ARTICLES = [
    Article(
        "flat-tyre",
        "Fixing a flat tyre: take the wheel off, find the puncture, patch the inner tube "
        "and pump it back up.",
    ),
    Article(
        "tyre-pressure",
        "Tyre pressure: road tyres run at 80 to 100 psi, mountain bike tyres at 25 to 35 psi.",
    ),
    Article(
        "chain-care",
        "Chain care: wipe the chain with degreaser, let it dry, then put one drop of lube on "
        "each link.",
    ),
    Article(
        "squeaky-brakes",
        "Squeaky brakes: clean the rims or discs and check that the pads are not worn down.",
    ),
    Article(
        "gear-shifting",
        "Gear shifting: turn the barrel adjuster a quarter turn at a time until the chain "
        "moves cleanly.",
    ),
]

TOP_K = 2


def keywords(text: str) -> set[str]:
    """The words of four letters or more, lowercased (short words carry no topic)."""
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 4}


def search_articles(question: str) -> list[Article]:
    """The TOP_K articles sharing the most keywords with the question (ties: in the order
    of ARTICLES); articles sharing none are never returned."""
    wanted = keywords(question)
    overlaps = [(len(wanted & keywords(a.text)), i) for i, a in enumerate(ARTICLES)]
    ranked = sorted((o for o in overlaps if o[0] > 0), key=lambda o: (-o[0], o[1]))
    return [ARTICLES[i] for _, i in ranked[:TOP_K]]

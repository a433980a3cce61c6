"""Is user-facing text made of sentences? A checker for the words tests: fragments (no verb) and internal jargon.

Verbs come from a real part-of-speech tagger, TextBlob's Brill tagger (its lexicon and rules ship in the wheel, so
nothing is downloaded). Around it, what a tagger trained on news prose cannot do with our text:

- sentence splitting that leaves alone what is not an ending: decimals and durations (``37.8 s``), abbreviations
  (``e.g.``), host names, paths, class names and quoted log text (“…”: quoted as logged, never judged);
- masking before tagging: anything with a digit, a dot, a slash, an underscore or an inner capital (hosts, paths,
  settings, timestamps, versions, ``createRbw``) and the host names a verdict names become a plain name, a number
  with its unit a number and a noun, so ``lab-nn`` is not read as an adjective nor the ``s`` of ``37.8 s`` as a
  pronoun;
- the rule. A statement needs a finite verb (``VBZ``, ``VBP``, ``VBD`` or a modal) after its subject and in its
  main clause: not inside parentheses nor in a clause opened by ``as``, ``while``, ``which`` and the like. An
  instruction (a remediation step, a warning's advice) may instead open with an imperative, at its start, after a
  ``;`` or after a leading phrase or clause; the lexicon keeps one tag per word (``tune`` is a noun there), so a
  word counts as a verb in that place when the tagger says so or the lexicon knows its past form as a verb.

Limits: it finds missing verbs; it is no grammar. A noun the tagger reads as a verb (``writes``, ``totals``) makes a
fragment pass, and so does a participle after a noun with no preposition after it (``interval 6 h logged 09:00``);
subject–verb agreement is not checked; an instruction's first word is trusted to be meant as a verb when English
allows it (``slow``). Jargon is a short list of what must never reach a reader, grown from the texts it was run on;
snake_case identifiers are caught by their shape.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal

from textblob.en import lexicon as _lexicon
from textblob.en import tag as _tag

Kind = Literal["statement", "instruction"]

FINITE = frozenset({"VBZ", "VBP", "VBD", "MD"})
SUBORDINATORS = frozenset({"as", "while", "because", "which", "that", "when", "whose", "where", "whether", "if",
                           "since", "although", "though", "unless", "until", "once", "who", "whom", "what", "how",
                           "why"})
"""Words that open a clause which cannot stand alone: its verb does not make a sentence of the rest."""
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "incl.", "resp.")
UNITS = frozenset({"s", "ms", "min", "h", "d", "MiB", "KiB", "GiB", "MB", "GB", "KB", "%", "×"})
NOUN, NUMBER, QUOTE = "Thing", "5", "it"

IDENTIFIER = re.compile(r"(?<![\w./-])[a-z]+(?:_[a-z0-9]+)+(?![\w./-])")
"""A snake_case name (an evidence kind, an event type, a field): internal, never words; a block id is the exception."""
JARGON = (
    (r"\b(?:dn|nn|tm) (?:stall|pause|lock)s?\b", "an evidence kind's name: say a stalled block write, a pause"),
    (r"\bslow nn commands?\b", "a DataNode error kind's name: say slow processing of NameNode commands"),
    (r"\b(?:scanner lock|scan stats|scan reconcile|bad link|client slow)\b", "an evidence kind's name"),
    (r"\brefused (?:xceiver limit|disk full|no datanodes|safe mode|directory items|token expired)\b",
     "a refusal kind's name: say what HDFS refused and why"),
    (r"\bsymptoms?\b", "the ranking's word for evidence a cause explains: say what it also explains"),
    (r"\bas_of\b", "a field name: say when"),
    (r"\bnot derivable\b", "the outlook's shorthand: say what is unknown and why"),
    (r"\b[a-z]+\(s\)", "a plural left to the reader: count and say one or many"),
)
"""Internal words that must not reach a reader, each with what to say instead."""

_QUOTED = re.compile(r"“[^”]*”")
_PARENS = re.compile(r"\([^()]*\)")
_END = re.compile(r"(?<=[.!?\x01])\s+(?=\S)")
_TOKEN = re.compile(r"“[^”]*”|(?:[^\s,;:]|[,:](?=\S))+|[,;:]")
_TECHNICAL = re.compile(r"\d|[._/$=<>\\@#]|[a-z][A-Z]|^[A-Z]{2,}s?$|^[A-Z][a-z]+[A-Z]")


def sentences(text: str) -> list[str]:
    """The sentences of ``text``: a stop, ``!`` or ``?`` followed by a space ends one, unless it ends an abbreviation
    or sits inside quoted log text (a quote that ends on a stop ends its sentence too)."""
    quotes = _QUOTED.findall(text)
    masked = _QUOTED.sub(lambda m: "\x01" if m.group().endswith((".”", "!”", "?”")) else "\x00", text)
    out: list[str] = []
    start = 0
    for m in _END.finditer(masked):
        if not masked[start:m.start()].endswith(ABBREVIATIONS):
            out.append(masked[start:m.start()])
            start = m.end()
    out.append(masked[start:])
    restored = []
    for s in (s.strip() for s in out):
        for quote in [c for c in s if c in "\x00\x01"]:
            s = s.replace(quote, quotes.pop(0), 1)
        if s:
            restored.append(s)
    return restored


def _words(sentence: str, names: frozenset[str]) -> list[str]:
    """The sentence as tokens a news-trained tagger can read (see the module's masking)."""
    out: list[str] = []
    for raw in _TOKEN.findall(sentence.rstrip(".!?")):
        token = raw.strip("`'\"")
        if not token:
            continue
        if token.startswith("“"):
            out.append(QUOTE)
        elif token == "≈":
            out.append("about")
        elif token in UNITS and out and out[-1] == NUMBER:
            out[-1:] = [NUMBER, "units"]
        elif re.fullmatch(r"\d+\.\d+\.\d+[\w.-]*|\d+\.x", token):
            out.append(NOUN)  # a version names a release: "Hadoop 3.4.1 logs …" keeps its verb
        elif re.fullmatch(r"[<>≈~]?\d[\d.,:–-]*[a-zA-Z×%]*", token):
            out.append(NUMBER)
        elif token in names or _TECHNICAL.search(token):
            out.append(NOUN + ("s" if token.endswith("s") and token[-2:-1].islower() and "." not in token else ""))
        else:
            out.append(token)
    return out


@lru_cache(maxsize=4096)
def _tagged(words: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return tuple(_tag(" ".join(words), tokenize=False))


def _verb_capable(word: str) -> bool:
    """The lexicon keeps one tag per word: ``tune`` is a noun, ``tuned`` tells it is a verb too."""
    w = word.lower()
    forms = (w + "ed", w + "d", w[:-1] + "ied" if w.endswith("y") else "", w + w[-1:] + "ed")
    return any(_lexicon.get(f, "").startswith("VB") for f in forms if f)


def _finite(tagged: tuple[tuple[str, str], ...], i: int) -> bool:
    """Whether the i-th word is a finite verb. The lexicon's one tag per word needs two repairs: a past tense it
    keeps as a participle (``held``, ``stalled``) is finite after its subject when no preposition follows (``run on
    dn02 expected at …``, ``writes named by …`` are phrases), and a present tense it keeps as a base form (``cover``)
    is finite after a plural or pronoun subject."""
    tag = tagged[i][1]
    before = tagged[i - 1][1] if i else ""
    after = tagged[i + 1][1] if i + 1 < len(tagged) else ""
    if tag in FINITE:  # but "3 pauses", "13 writes" count things ("checkpoint 60 failed" names one)
        return not (tag in ("VBZ", "VBP") and before == "CD" and not (i > 1 and tagged[i - 2][1].startswith("NN")))
    if tag == "VBN":
        return before.startswith(("NN", "PRP", "CD")) and after not in ("IN", "TO")
    if tag == "VB":
        return before in ("NNS", "NNPS", "PRP")
    return False


def finite_verbs(sentence: str, kind: Kind = "statement", names: Iterable[str] = ()) -> list[str]:
    """The words that make ``sentence`` a sentence: finite verbs of its main clause, and for an instruction its
    imperative; empty for a fragment."""
    text = sentence
    while _PARENS.search(text):
        text = _PARENS.sub(" ", text)
    words = _words(text, frozenset(names))
    if not words:
        return []
    words[0] = words[0] if words[0] in (NOUN, NUMBER, QUOTE) else words[0].lower()
    tagged = _tagged(tuple(words))
    found: list[str] = []
    subordinate = False
    opening = True
    for i, (word, tag) in enumerate(tagged):
        if word in (",", ";", ":", "—"):
            opening = word == ";" or word == "," and (subordinate or not found)
            subordinate = False
            continue
        if word.lower() in SUBORDINATORS and tag in ("IN", "WDT", "WP", "WP$", "WRB"):  # not "that run", a determiner
            subordinate, opening = True, False
            continue
        if not subordinate:
            if i and _finite(tagged, i):  # a statement's verb has its subject before it
                found.append(word)
            elif opening and kind == "instruction" and (tag.startswith("VB") or _verb_capable(word)):
                found.append(word)
        opening = False
    return found


def fragments(text: str, kind: Kind = "statement", names: Iterable[str] = ()) -> list[str]:
    """The sentences of ``text`` without a verb of their own."""
    names = tuple(names)
    return [s for s in sentences(text) if not finite_verbs(s, kind, names)]


def jargon(text: str) -> list[str]:
    """Internal words in ``text``, each with what to say instead: the jargon list's and snake_case identifiers (a
    block id as logged aside). Quoted log text is not ours to word."""
    plain = _QUOTED.sub("", text)
    found = [f"{m.group()}: {why}" for pattern, why in JARGON for m in re.finditer(pattern, plain, re.IGNORECASE)]
    named = {f.split(":")[0] for f in found}
    found += [f"{t}: an internal identifier: say it in words" for t in IDENTIFIER.findall(plain)
              if not t.startswith("blk_") and t not in named]
    return list(dict.fromkeys(found))

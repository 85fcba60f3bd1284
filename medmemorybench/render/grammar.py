"""A seeded phrase grammar: templates with inline alternatives, optional parts, named sub-phrases and slots.

Syntax of a template string (the phrasing files of `render/templates/` use it everywhere):

- `{slot}`: a value from the ground truth, filled in last (never parsed, so a value cannot inject syntax);
- `[a|b|c]`: one of the alternatives, chosen by the seeded RNG; `[a|]` is an optional `a`; groups nest;
- `<name>`: a named sub-phrase of the file's `grammar:` section, expanded the same way.

`Grammar` parses every template once, checks references, and reports every problem with the file and key.
`tidy` then fixes the spacing and capitals a concatenation leaves, per language.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

Node = "str | Alt | Ref"


@dataclass(frozen=True)
class Ref:
    """A reference to a named sub-phrase."""

    name: str


@dataclass(frozen=True)
class Alt:
    """A choice among sequences."""

    options: tuple[tuple, ...]


_TOKEN = re.compile(r"\[|\]|\||<[A-Za-z0-9_.]+>|[^\[\]|<]+|<")
_SLOT = re.compile(r"\{([A-Za-z0-9_]+)\}")


class GrammarSyntaxError(ValueError):
    """A template that does not parse (unbalanced brackets, a stray `|`)."""


def parse(template: str) -> tuple:
    """A template as a sequence of text, `Alt` and `Ref` nodes.

    Raises:
        GrammarSyntaxError: on unbalanced `[`/`]` or a `|` outside a group.
    """
    tokens = _TOKEN.findall(template)
    position = 0

    def sequence(depth: int) -> tuple[list, str | None]:
        nonlocal position
        out: list = []
        while position < len(tokens):
            token = tokens[position]
            position += 1
            if token == "[":
                options = []
                while True:
                    seq, end = sequence(depth + 1)
                    options.append(tuple(seq))
                    if end == "]":
                        break
                    if end is None:
                        raise GrammarSyntaxError("unclosed '['")
                out.append(Alt(tuple(options)))
            elif token in ("]", "|"):
                if depth == 0:
                    raise GrammarSyntaxError(f"'{token}' outside a [...] group")
                return out, token
            elif token.startswith("<") and token.endswith(">") and len(token) > 2:
                out.append(Ref(token[1:-1]))
            else:
                out.append(token)
        return out, None

    seq, _ = sequence(0)
    return tuple(seq)


def slots_of(node_seq: tuple) -> set[str]:
    """The slots a parsed sequence uses directly (not through references)."""
    found: set[str] = set()
    for node in node_seq:
        if isinstance(node, str):
            found |= set(_SLOT.findall(node))
        elif isinstance(node, Alt):
            for option in node.options:
                found |= slots_of(option)
    return found


def refs_of(node_seq: tuple) -> set[str]:
    """The sub-phrases a parsed sequence references directly."""
    found: set[str] = set()
    for node in node_seq:
        if isinstance(node, Ref):
            found.add(node.name)
        elif isinstance(node, Alt):
            for option in node.options:
                found |= refs_of(option)
    return found


def top_level_text(node_seq: tuple) -> str:
    """The text every expansion contains (groups and references replaced by a separator), for the checks that a
    required substring ("{value} {unit}") is always said."""
    return "".join(node if isinstance(node, str) else "\x00" for node in node_seq)


@dataclass
class Grammar:
    """Named sub-phrases (each a list of parsed variants) and the expansion of templates over them."""

    rules: dict[str, list[tuple]] = field(default_factory=dict)

    def expand(self, seq: tuple, rng: random.Random, depth: int = 0,
               used: set[tuple[str, int]] | None = None) -> str:
        """One expansion of a parsed sequence (slots left as `{slot}`). `used` holds the sub-phrase variants said
        so far in a session: a named sub-phrase does not repeat a variant while another is left."""
        if depth > 20:
            raise RecursionError("phrase grammar nests more than 20 deep (a sub-phrase refers to itself?)")
        parts = []
        for node in seq:
            if isinstance(node, str):
                parts.append(node)
            elif isinstance(node, Alt):
                parts.append(self.expand(rng.choice(node.options), rng, depth + 1, used))
            else:
                variants = self.rules[node.name]
                indices = [i for i in range(len(variants)) if used is None or (node.name, i) not in used]
                index = rng.choice(indices or list(range(len(variants))))
                if used is not None and variants[index]:  # (an empty variant may come back)
                    used.add((node.name, index))
                parts.append(self.expand(variants[index], rng, depth + 1, used))
        return "".join(parts)

    def first(self, seq: tuple) -> str:
        """The expansion that takes the first option of every choice (no RNG needed)."""
        return "".join(node if isinstance(node, str) else self.first(node.options[0]) if isinstance(node, Alt)
                       else self.first(self.rules[node.name][0]) for node in seq)

    def reachable_slots(self, seq: tuple, seen: frozenset[str] = frozenset()) -> set[str]:
        """Every slot an expansion of `seq` may use, through references too."""
        found = slots_of(seq)
        for name in refs_of(seq) - seen:
            for variant in self.rules.get(name, []):
                found |= self.reachable_slots(variant, seen | {name})
        return found

    def reachable_refs(self, seq: tuple, seen: set[str]) -> None:
        """Add to `seen` every sub-phrase an expansion of `seq` may use."""
        for name in refs_of(seq):
            if name not in seen and name in self.rules:
                seen.add(name)
                for variant in self.rules[name]:
                    self.reachable_refs(variant, seen)


def fill(text: str, slots: dict[str, str]) -> str:
    """Put the slot values in (a value's own braces are left alone)."""
    return _SLOT.sub(lambda m: slots[m.group(1)], text)


# --- orthography ------------------------------------------------------------------------------------
# Two passes: `tidy` on the expanded template before the values go in (so a value's own text, "C. difficile",
# "500 mg", is never re-spaced or re-capitalised), then `finish` on the filled utterance for what only the
# values decide (a value ending in a full stop before the template's own, "a" before a value's vowel).

_SPACES = re.compile(r"[ \t]+")
_SPACE_BEFORE_PUNCT = re.compile(r" +([,.;:?!])")
_DOUBLE_STOP = re.compile(r"([.?!])[ ]*\.(?!\.)")
_COMMA_STOP = re.compile(r"[,;:] *([.?!])")
_DOUBLE_COMMA = re.compile(r", *,")
_SENTENCE_START = re.compile(r"(^|[.?!] +)([a-z][\w'-]*)")
_VALUE_START = re.compile(r"((?<![A-Z])(?<!\.[a-z])[.?!] +)([a-z])(?=[a-z' ])")
_ARTICLE = re.compile(r"(?<![\w.-])a ((?!one\b|once\b)[aeio]\w)")
_CJK = r"\u3000-\u303f\u3400-\u9fff\uff00-\uffef"
_SPACE_IN_CJK = re.compile(rf"(?<=[{_CJK}]) +| +(?=[{_CJK}])")
_CJK_STOP_DOUBLE = re.compile(r"([。！？])[。．.]")
_CJK_COMMA_STOP = re.compile(r"[，、；：]([。！？])")
_CJK_DOUBLE_COMMA = re.compile(r"，，+")


def _capitalize(match: re.Match) -> str:
    word = match.group(2)
    if any(c.isupper() for c in word[1:]):  # eGFR, mL, pH stay as they are
        return match.group(0)
    return match.group(1) + word[0].upper() + word[1:]


def tidy(text: str, language: str) -> str:
    """Spacing and sentence capitals of an expanded template, slots still unfilled."""
    if language == "zh":
        text = _SPACE_IN_CJK.sub("", _SPACES.sub(" ", text)).strip()
        return _CJK_COMMA_STOP.sub(r"\1", _CJK_DOUBLE_COMMA.sub("，", text))
    text = _SPACES.sub(" ", text).strip()
    text = _SPACE_BEFORE_PUNCT.sub(r"\1", text)
    text = _COMMA_STOP.sub(r"\1", _DOUBLE_COMMA.sub(",", text))
    return _SENTENCE_START.sub(_capitalize, text)


def finish(text: str, language: str) -> str:
    """What the filled values decide: a doubled full stop, a leading value's capital, "a" before a vowel."""
    if language == "zh":
        return _CJK_STOP_DOUBLE.sub(r"\1", _CJK_COMMA_STOP.sub(r"\1", text))
    text = _DOUBLE_STOP.sub(r"\1", _COMMA_STOP.sub(r"\1", text))
    text = _ARTICLE.sub(r"an \1", text)
    first = re.match(r"[a-z][\w'-]*", text)
    if first and not any(c.isupper() for c in first.group(0)[1:]):
        text = text[0].upper() + text[1:]
    # a value that opens a sentence mid-turn ("... ask away. previous stroke at 85 ..."), not after an initial
    # ("C. difficile") or an abbreviation ("e.g. x")
    return _VALUE_START.sub(lambda m: m.group(1) + m.group(2).upper(), text)

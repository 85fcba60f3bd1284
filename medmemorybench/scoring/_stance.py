"""The side a yes/no answer takes, read from its opening as a capable model words it: "No — given your sulfa
allergy ...", "I'd avoid it", "Unfortunately that isn't a good idea", "That should be fine", "You can take it",
"不建议", "可以的". "No problem" and "no reason not to" are yeses; "Yes, but avoid ..." takes no side.
"""

from __future__ import annotations

import re

from medmemorybench.scoring._reading import canonical_text

_NO_OPENINGS = re.compile(
    r"^(?:no\b(?!\s+(?:problem|issue|concern|reason not|worries|harm))|nope\b|not\b|never\b|unfortunately\b|sadly\b"
    r"|i'm afraid\b|i am afraid\b|i'd avoid|i would avoid|avoid\b|better not|best not|please don't|don't\b|do not\b"
    r"|you shouldn't|you should not|you can't|you cannot|you mustn't|i wouldn't|i would not|i don't recommend"
    r"|i do not recommend|i'd advise against|i would advise against|that's not|that is not|it's not|it is not"
    r"|it isn't|that isn't|it wouldn't|that wouldn't|it would not|it's best to avoid|it is best to avoid"
    r"|i'd hold off|i would hold off|hold off|not now|not any more|not anymore|no need|there's no need"
    r"|there is no need|you don't need|you do not need|you no longer need|that's not right|that isn't right"
    r"|that's not your dose|that is not your dose|i'd steer clear|i would steer clear|steer clear|best to steer clear"
    r"|i'd stay away|i would stay away|stay away|i'd rather you didn't|i would rather you didn't|i'd recommend against"
    r"|i would recommend against|i recommend against|i'd suggest avoiding|i would suggest avoiding|best avoided"
    r"|不可以|不能|不行|不用|不需要|没必要|不必|不对|不是这个|先别|暂时别|不建议|不宜|不适合|不要|不推荐|最好不要|最好别|别|不是|恐怕不|不太合适|不合适|不应该)")
_YES_OPENINGS = re.compile(
    r"^(?:yes\b|yeah\b|yep\b|sure\b|absolutely\b|definitely\b|certainly\b|of course\b|go ahead|by all means"
    r"|no problem|that's fine|that is fine|that should be fine|it's fine|it is fine|it should be fine|that's right"
    r"|that is right|correct\b|right\b|you can\b|you may\b|you could\b|it's safe|it is safe|that's safe|it's okay"
    r"|it's ok|that's okay|that's ok|that's correct|it's correct|fine\b|okay\b|ok\b"
    r"|可以|能|是的|没问题|当然|行|对|没错|是|需要|要接着|要继续|继续|接着|照常)")
_HEDGE = re.compile(r"\b(?:but|however|although|though|unless|provided|as long as|only if)\b|但是|不过|但|然而|除非")
_NEGATION = re.compile(r"\b(?:not|never|no|avoid|unsafe|n't)\b|n't|不|别|没")
_SENTENCE = re.compile(r"[.;!?\n。；！？]")


_ZH_LEAD = re.compile(r"^(?:(?:现在|目前|眼下|暂时|这段时间|以后|今后|您|你|还|也)\s*)+(?=不|别|没|可以|能)")
"""Words a Chinese answer puts before its side ("现在不用天天喷了", "您可以继续用", "目前还不需要"): time and person,
read past only where a negation or a "can" follows at once."""


_REASSURANCE = re.compile(r"^(?:don't worry|do not worry|not to worry"
                          r"|(?:您|你)?(?:不用|别|不要|无需)太?(?:担心|着急|紧张|害怕))[\s\W_]*")
"""A reassurance before the side ("Don't worry, you can take it", "不用担心，可以吃"): no "no"."""


def _opening(text: str) -> str:
    opening = re.sub(r"^[\s\W_]+", "", canonical_text(text))
    return _ZH_LEAD.sub("", _REASSURANCE.sub("", opening))


def polarity(text: str) -> str | None:
    """"yes" or "no" when the answer opens with a clear side, else None ("Yes, but ..." is None)."""
    opening = _opening(text)
    first = _SENTENCE.split(opening, maxsplit=1)[0]
    no, yes = _NO_OPENINGS.match(opening), _YES_OPENINGS.match(opening)
    if no and (not yes or no.end() >= yes.end()):
        return "no"
    if yes:
        rest = first[yes.end():]
        # "Yes, but ..." or "Yes, it is not ..." takes no side in its first sentence
        return None if _HEDGE.search(rest) or re.match(r"\W*(?:it|that|this)?\s*(?:is|'s|would)?\s*not\b", rest) \
            else "yes"
    return None

"""Secrets kept out of everything the project writes or prints: run options named like a secret, key-like strings,
URL credentials, Authorization values and the configured API key's own value."""

from __future__ import annotations

import re
from typing import Any

SECRET_NAME = re.compile(r"(key|token|secret|password|passwd|credential|auth)", re.IGNORECASE)
SECRET_VALUE = re.compile(r"\b(sk|pk|rk|hf|ghp|gho|xox[abp])[-_][A-Za-z0-9_\-]{8,}")
URL_USERINFO = re.compile(r"(?<=://)[^/@\s]+@")
URL_SECRET_PARAM = re.compile(r"(?<=[?&])((?:api[_-]?)?key|token|secret|password|sig|signature)=[^&#\s]+",
                              re.IGNORECASE)
AUTH_VALUE = re.compile(r"\b(Bearer|Basic|Digest)\s+[A-Za-z0-9._~+/=-]{6,}", re.IGNORECASE)
"""An Authorization header's credentials, as a server's error page may echo them (base64 user:password too)."""
REDACTED = "<redacted>"


def scrub(value: Any, name: str = "") -> Any:
    """`value` with every secret replaced: values of options named like a secret (api_key, token, ...; the
    *name* of an environment variable, `api_key_env`, is kept unless it looks like a key itself), and in every other
    string what `scrub_text` removes. Applied to everything a run records."""
    if isinstance(value, dict):
        return {k: scrub(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v, name) for v in value]
    if not isinstance(value, str):
        return value
    if SECRET_NAME.search(name) and not name.endswith("_env"):
        return REDACTED
    return scrub_text(value)


def scrub_text(text: str, secrets: tuple[str | None, ...] = ()) -> str:
    """A message (a server's error, an exception) with every secret in it replaced: the given secret values (the
    configured API key), Authorization credentials, key-like strings and URL credentials. Applied to every error
    that reaches a sample, a log or the terminal."""
    for secret in secrets:
        if secret and len(secret) >= 6:  # (a short "EMPTY" placeholder is no secret)
            text = text.replace(secret, REDACTED)
    text = AUTH_VALUE.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = SECRET_VALUE.sub(REDACTED, text)
    text = URL_USERINFO.sub(REDACTED + "@", text)
    return URL_SECRET_PARAM.sub(lambda m: f"{m.group(1)}={REDACTED}", text)

"""Where a report comes from: the project and library versions, the command, the time, and the gold it read.

`gold_sha256` hashes every file of the gold folder (databases over 64 MiB are named by size instead, so a
report stays quick to make); `gold_digest` is one hash over all of them, which `compare` checks.

The command is stored with its secrets redacted (`redacted_command`): a DSN's password (URL userinfo, a
`password=` of a libpq string or URL query), the value of an option or `NAME=value` whose name says password,
secret, token or key, and every other spelling of those values in the line (URL-encoded, base64, ...).
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import unquote

LIBRARIES = ("pandas", "numpy", "duckdb", "pyarrow", "sqlglot", "click")
HASH_LIMIT = 64 * 1024 * 1024


def provenance(gold, argv: list[str] | None = None) -> dict:
    """`gold`: the gold folder, or a list of the gold's files and folders (a benchmark read from its own
    files: BIRD's gold SQL and questions, test-suite's gold file, ...); None hashes nothing."""
    hashes = gold_hashes(Path(gold)) if isinstance(gold, str | Path) else _hashes_of(gold or [])
    return {
        "project_version": _version("spider-grade"),
        "command": redacted_command(argv if argv is not None else sys.argv),
        "utc_time": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "libraries": {name: _version(name) for name in LIBRARIES},
        "gold_sha256": hashes,
        "gold_digest": digest(hashes),
    }


REDACTED = "[redacted]"
_SECRET_NAME = r"[\w.-]*(?:pass(?:word|wd)?|pwd|secret|token|api[_-]?key|private[_-]?key)[\w.-]*"
# NAME=value in a libpq string, a URL query or an environment assignment; a libpq value may be quoted.
_ASSIGNED = re.compile(rf"(?i)(\b{_SECRET_NAME}\s*=\s*)('(?:[^'\\]|\\.)*'?|\"[^\"]*\"?|[^\s&;]*)")
_SECRET_OPTION = re.compile(rf"(?i)--?{_SECRET_NAME}|--(?:[\w-]+-)?dsn")


def redacted_command(argv: list[str]) -> str:
    """The command line as a shell would take it, with every secret it holds replaced by [redacted]."""
    found: list[str] = []
    words = []
    secret_next = False
    for word in map(str, argv):
        if secret_next and not _is_dsn(word):
            found.append(word)
            words.append(REDACTED)
        else:
            words.append(_redact_word(word, found))
        secret_next = bool(_SECRET_OPTION.fullmatch(word))
    from evaluators.execution.backends.base import redact  # every other spelling of the values found

    return redact(shlex.join(words), [s for s in found if len(s) >= 4])


def _is_dsn(word: str) -> bool:
    return "://" in word or "=" in word


def _redact_word(word: str, found: list[str]) -> str:
    name, equals, value = word.partition("=")
    if equals and name.startswith("-") and _SECRET_OPTION.fullmatch(name) and not _is_dsn(value):
        found.append(value)
        return f"{name}={REDACTED}"
    return _ASSIGNED.sub(lambda m: _hide(m, found), _redact_userinfo(word, found))


def _redact_userinfo(word: str, found: list[str]) -> str:
    """`scheme://user:password@host` keeps the user and host; the password goes (the last `@` ends it, as
    URL parsers read it)."""

    def hide(match: re.Match) -> str:
        found.extend({match.group(2), unquote(match.group(2))})
        return f"{match.group(1)}{REDACTED}@"

    return re.sub(r"(\w[\w+.-]*://[^/?#\s:@]*:)([^\s]*)@", hide, word)


def _hide(match: re.Match, found: list[str]) -> str:
    value = match.group(2)
    if not value or value == REDACTED:
        return match.group(0)
    found.append(value.strip("'\""))
    return f"{match.group(1)}{REDACTED}"


def _version(name: str) -> str | None:
    """The installed version of distribution `name`, as `importlib.metadata.version` finds it (the first
    `<name>-<version>.dist-info` folder along sys.path), read from the folder's name: importing
    importlib.metadata and its e-mail parser cost the report a tenth of a small run's time."""
    wanted = _normalized(name)
    for entry in sys.path:
        for folder in _listing(entry or "."):
            if folder.endswith(".dist-info"):
                distribution, _, version = folder[: -len(".dist-info")].partition("-")
                if version and _normalized(distribution) == wanted:
                    return version
    return None


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _listing(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def _hashes_of(paths: list) -> dict:
    """Each file under its own name, each folder's files under `folder/...` (the last part of its path)."""
    out = {}
    for path in map(Path, paths):
        if path.is_dir():
            out.update({f"{path.name}/{name}": value for name, value in gold_hashes(path).items()})
        elif path.is_file():
            size = path.stat().st_size
            out[path.name] = _sha256(path) if size <= HASH_LIMIT else f"size:{size}"
    return out


def gold_hashes(gold_dir: Path) -> dict:
    out = {}
    for folder, dirs, files in os.walk(gold_dir):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder) / name
            relative = path.relative_to(gold_dir).as_posix()
            size = path.stat().st_size
            out[relative] = _sha256(path) if size <= HASH_LIMIT else f"size:{size}"
    return out


def _sha256(path: Path) -> str:
    digest_ = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest_.update(block)
    return digest_.hexdigest()


def digest(hashes: dict) -> str:
    return hashlib.sha256("\n".join(f"{k}\t{v}" for k, v in sorted(hashes.items())).encode()).hexdigest()

"""A worker's own bare mirror of a repository's git remote, holding a patch's base and head.

Only git runs here, and git only fetches: no checkout, no hooks (``core.hooksPath`` is the null
device), no submodules, no configuration but ours, no prompt. The analysis then reads the
objects (``freezedebt_ci.analysis``), never the project's code. Each fetch is bounded in time,
the mirror on disk in size (an oversized one is removed), and one worker at a time fetches into
a mirror (a file lock).
"""

import base64
import fcntl
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from urllib.parse import urlsplit

from django.conf import settings

from evidence.models import Repository


class MirrorError(Exception):
    """The remote could not be read into the mirror; the message is safe to show (no secret)."""


_SHA = re.compile(r"^[0-9a-f]{7,64}$")


def mirror_path(repository: Repository) -> Path:
    return Path(settings.FREEZEDEBT_MIRROR_DIR) / f"repository-{repository.pk}.git"


def _environment(repository: Repository) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "/bin/false",
        "SSH_ASKPASS": "/bin/false",
        "GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o StrictHostKeyChecking=accept-new",
        "LC_ALL": "C",
    }
    config = {
        "core.hooksPath": os.devnull,
        "fetch.recurseSubmodules": "false",
        "protocol.ext.allow": "never",
        "credential.helper": "",
    }
    if repository.git_credential and urlsplit(repository.git_url).scheme in ("http", "https"):
        # In the environment, not the command line, where any local user could read it.
        token = base64.b64encode(f"x-access-token:{repository.git_credential}".encode()).decode()
        config["http.extraHeader"] = f"Authorization: Basic {token}"
    env["GIT_CONFIG_COUNT"] = str(len(config))
    for index, (key, value) in enumerate(config.items()):
        env[f"GIT_CONFIG_KEY_{index}"] = key
        env[f"GIT_CONFIG_VALUE_{index}"] = value
    return env


def _git(repository: Repository, path: Path, *args: str, timeout: float) -> str:
    try:
        done = subprocess.run(  # noqa: S603 - fixed git arguments; the URL is passed as data
            ["git", "-C", str(path), *args],  # noqa: S607 - git from PATH
            capture_output=True,
            env=_environment(repository),
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise MirrorError(f"git {args[0]} took longer than {timeout:g} s") from None
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        text = message[-1] if message else f"exit status {done.returncode}"
        if repository.git_credential:
            text = text.replace(repository.git_credential, "***")
        raise MirrorError(f"git {args[0]} failed: {text[:500]}")
    return done.stdout.decode("utf-8", "replace")


def _size(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += (Path(root) / name).lstat().st_size
            except OSError:
                continue
    return total


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _has(repository: Repository, path: Path, sha: str) -> bool:
    try:
        _git(repository, path, "cat-file", "-e", f"{sha}^{{commit}}", timeout=30)
    except MirrorError:
        return False
    return True


def mirror_fetch(repository: Repository, shas: tuple[str, ...]) -> Path:
    """The repository's mirror, holding every commit of ``shas`` (fetched when missing).

    Raises MirrorError when the remote is unreadable, a commit is not in it, a fetch takes
    longer than FREEZEDEBT_MIRROR_TIMEOUT seconds, or the mirror grows over
    FREEZEDEBT_MIRROR_MAX_BYTES (it is then removed).
    """
    if not repository.git_url:
        raise MirrorError("the repository has no git_url")
    for sha in shas:
        if not _SHA.match(sha):
            raise MirrorError(f"not a commit sha: {sha!r}")
    path = mirror_path(repository)
    timeout = settings.FREEZEDEBT_MIRROR_TIMEOUT
    with _locked(path):
        if not (path / "HEAD").exists():
            path.mkdir(parents=True, exist_ok=True)
            _git(repository, path, "init", "--quiet", "--bare", timeout=30)
        missing = [sha for sha in shas if not _has(repository, path, sha)]
        if missing:
            url = repository.git_url
            # Branches and tags first (any server serves them), then the commits themselves
            # (servers that allow it serve unadvertised commits, e.g. a pull request's head).
            _git(
                repository,
                path,
                "fetch",
                "--quiet",
                "--no-write-fetch-head",
                "--prune",
                "--",
                url,
                "+refs/heads/*:refs/heads/*",
                "+refs/tags/*:refs/tags/*",
                timeout=timeout,
            )
            still = [sha for sha in missing if not _has(repository, path, sha)]
            if still:
                # A server that refuses unadvertised commits: then they are simply absent.
                with suppress(MirrorError):
                    _git(repository, path, "fetch", "--quiet", "--", url, *still, timeout=timeout)
            absent = [sha for sha in still if not _has(repository, path, sha)]
            if absent:
                raise MirrorError(f"commit {', '.join(absent)} is not in {_shown(url)}")
        if _size(path) > settings.FREEZEDEBT_MIRROR_MAX_BYTES:
            shutil.rmtree(path, ignore_errors=True)
            raise MirrorError(
                f"the mirror grew over {settings.FREEZEDEBT_MIRROR_MAX_BYTES} bytes; removed"
            )
    return path


def _shown(url: str) -> str:
    """A remote's address without any user or password in it."""
    parts = urlsplit(url)
    if parts.scheme and parts.netloc and "@" in parts.netloc:
        return parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()
    return url

"""The two trees of a patch, read from git's object store: never from a working copy that the
patch's author may have arranged, and never from a description of the patch."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

#: git's file modes: a regular file, an executable, a symlink, a submodule (gitlink).
MODE_LINK, MODE_SUBMODULE = "120000", "160000"
_TIMEOUT = 300


class GitError(InputError):
    """A git command that failed: which one, and what git said."""

    def __init__(self, command: Sequence[str], message: str) -> None:
        self.command = " ".join(command)
        self.message = message
        super().__init__("git", [])

    def describe(self) -> str:
        return f"git {self.command}: {self.message}"

    def __str__(self) -> str:
        return self.describe()


@dataclass(frozen=True, slots=True)
class Entry:
    """One entry of a tree: ``oid`` is the blob's (or submodule commit's) object id."""

    mode: str
    oid: str
    path: str

    @property
    def is_file(self) -> bool:
        return self.mode not in (MODE_LINK, MODE_SUBMODULE)


@dataclass(frozen=True, slots=True, order=True)
class Changed:
    """One line of ``git diff --name-status -M``: ``status`` is its letter (A, M, D, R, C, T)."""

    path: str
    status: str
    old_path: str | None = None
    score: int | None = None


class Git:
    """Plumbing commands of one repository."""

    def __init__(self, repo: str | Path) -> None:
        self.repo = str(repo)
        # asked several times in one analysis; each answer is a git process
        self._toplevel: tuple[Path | None] | None = None

    def run(self, *args: str, data: bytes | None = None) -> bytes:
        command = ["git", "-C", self.repo, "-c", "core.quotePath=false", *args]
        try:
            # A fixed argv; refs reach git only after `rev-parse --verify` (see resolve).
            done = subprocess.run(  # noqa: S603
                command, input=data, capture_output=True, check=False, timeout=_TIMEOUT
            )
        except FileNotFoundError:
            raise GitError(args, "git is not installed (or not on PATH)") from None
        except subprocess.TimeoutExpired:
            raise GitError(args, f"took longer than {_TIMEOUT} s") from None
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise GitError(args, said[0] if said else f"exit status {done.returncode}")
        return done.stdout

    def git_dir(self) -> Path:
        out = self.run("rev-parse", "--absolute-git-dir").decode().strip()
        return Path(out)

    def toplevel(self) -> Path | None:
        """The work tree's top folder, or ``None`` in a bare repository."""
        if self._toplevel is None:
            try:
                self._toplevel = (Path(self.run("rev-parse", "--show-toplevel").decode().strip()),)
            except GitError:
                self._toplevel = (None,)
        return self._toplevel[0]

    def resolve(self, ref: str) -> str:
        """The commit a ref names, as a full object id."""
        if not ref or ref.startswith("-"):
            raise InputError.single("git", ref or "(empty)", "is not a revision")
        try:
            out = self.run(
                "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}"
            )
        except GitError:
            raise InputError.single(
                "git",
                ref,
                "names no commit of this repository (a shallow clone needs fetch-depth 0)",
            ) from None
        return out.decode().strip()

    def merge_base(self, base: str, head: str) -> str:
        """The merge base, as ``git diff BASE...HEAD`` uses it."""
        try:
            return self.run("merge-base", base, head).decode().strip()
        except GitError:
            raise InputError.single(
                "git", f"{base}...{head}", "these commits have no merge base"
            ) from None

    def tree(self, commit: str) -> dict[str, Entry]:
        """Every blob, symlink and submodule of a commit's tree, by path."""
        out = self.run("ls-tree", "-r", "-z", "--full-tree", commit)
        entries: dict[str, Entry] = {}
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, raw_path = record.partition(b"\t")
            mode, _kind, oid = meta.decode().split(" ")
            path = raw_path.decode("utf-8", "surrogateescape")
            entries[path] = Entry(mode, oid, path)
        return entries

    def diff(self, base: str, head: str) -> list[Changed]:
        """Changed paths between two commits, renames paired (``-M``)."""
        out = self.run("diff", "-z", "--name-status", "-M", "--no-ext-diff", base, head, "--")
        fields = out.split(b"\0")
        changes: list[Changed] = []
        i = 0
        while i < len(fields) and fields[i]:
            status = fields[i].decode()
            letter, digits = status[0], status[1:]
            if letter in "RC":
                old = fields[i + 1].decode("utf-8", "surrogateescape")
                new = fields[i + 2].decode("utf-8", "surrogateescape")
                changes.append(Changed(new, letter, old, int(digits) if digits else None))
                i += 3
            else:
                path = fields[i + 1].decode("utf-8", "surrogateescape")
                changes.append(Changed(path, letter))
                i += 2
        return sorted(changes)

    def untracked(self) -> list[str]:
        """Files of the work tree that git does not track and does not ignore."""
        if self.toplevel() is None:
            return []
        out = self.run("ls-files", "-z", "--others", "--exclude-standard", "--full-name", ":/")
        return sorted(p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p)

    def blobs(self, oids: Iterable[str]) -> dict[str, bytes]:
        """The contents of many blobs through one ``git cat-file --batch``.

        The requests are written from another thread: git answers while it reads, and a
        single thread that writes everything first can fill the pipe and wait forever."""
        wanted = list(dict.fromkeys(oids))
        if not wanted:
            return {}
        command = ["git", "-C", self.repo, "cat-file", "--batch"]
        # A fixed argv; the object ids come from ls-tree.
        proc = subprocess.Popen(  # noqa: S603
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert proc.stdin is not None and proc.stdout is not None  # noqa: S101 - set by PIPE

        def feed() -> None:
            assert proc.stdin is not None  # noqa: S101
            try:
                proc.stdin.write(b"".join(oid.encode() + b"\n" for oid in wanted))
            finally:
                proc.stdin.close()

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        found: dict[str, bytes] = {}
        out = proc.stdout
        try:
            for oid in wanted:
                header = out.readline().split()
                if len(header) == 2 and header[1] == b"missing":
                    continue
                if len(header) != 3:
                    raise GitError(("cat-file", "--batch"), f"unexpected answer for {oid}")
                size = int(header[2])
                found[oid] = out.read(size)
                out.read(1)  # the newline after each object
        finally:
            writer.join()
            out.close()
            proc.wait()
            if proc.stderr is not None:
                proc.stderr.close()
        return found

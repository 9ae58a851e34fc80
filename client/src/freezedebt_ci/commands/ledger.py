"""``freezedebt-ci ledger push``: send the freeze ledger of a default-branch commit (and its
fixture lock and oracle map)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..compression import maybe_gunzip
from ..exits import EXIT_PASS
from ..transport import Client
from .files import read_bytes
from .server import (
    ENV_TOKEN,
    ENV_URL,
    add_server_options,
    answer_object,
    commit_sha,
    guarded,
    server_client,
)


def add_parser(sub: Any) -> None:
    """Register ``ledger push`` on the ``freezedebt-ci`` parser."""
    ledger = sub.add_parser(
        "ledger",
        help="send the freeze ledger to the server (ledger push)",
        description="Freeze ledger commands.",
    )
    ledger_sub = ledger.add_subparsers(dest="ledger_command", required=True, metavar="COMMAND")
    push = ledger_sub.add_parser(
        "push",
        help="send the ledger file of the default branch",
        description="Send the freeze ledger of a default-branch commit; the server stores it\n"
        "as a new version and derives its events (opened, renewed, retired, edited).",
        epilog=LEDGER_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    push.add_argument("file", metavar="FILE", help="the ledger file (TOML or JSON)")
    push.add_argument(
        "--sha", type=commit_sha, required=True, help="commit the ledger file is from"
    )
    push.add_argument(
        "--fixture-lock", metavar="FILE", help="also send the fixture lock of that commit"
    )
    push.add_argument(
        "--oracle-map", metavar="FILE", help="also send the oracle map of that commit"
    )
    add_server_options(push)
    push.set_defaults(handler=guarded(_cmd_ledger_push, scope="ledger"))


def ledger_content_type(text: bytes) -> str:
    """``application/json`` for a JSON ledger (the same test the ledger reader uses)."""
    stripped = text.removeprefix(b"\xef\xbb\xbf").lstrip()
    after = stripped[1:].lstrip()[:1]
    if stripped[:1] == b"{" or (stripped[:1] == b"[" and after in (b"{", b"]")):
        return "application/json"
    return "application/toml"


def _describe_event(event: Any) -> str:
    if not isinstance(event, dict):
        return str(event)
    kind = event.get("kind", "event")
    freeze = event.get("freeze") or event.get("freeze_id") or ""
    extra = []
    if event.get("silent"):
        extra.append("silent renewal: the reason did not change")
    if kind == "renewed" and isinstance(event.get("chain"), int):
        extra.append(f"renewal #{event['chain']}")
    return f"{kind} {freeze}".strip() + (f" ({'; '.join(extra)})" if extra else "")


def _cmd_ledger_push(args: argparse.Namespace) -> int:
    client = server_client(args)
    data = maybe_gunzip(read_bytes(args.file), source=args.file, limit=64 << 20)
    answer = client.request(
        "PUT",
        "/api/v1/ledger",
        query={"sha": args.sha},
        body=data,
        content_type=ledger_content_type(data),
    )
    stored = answer_object(answer, "a ledger version", "version")
    events = stored.get("events") or []
    if answer.status == 200:
        print(f"ledger unchanged: the server already holds it as version {stored['version']}")
    else:
        print(f"ledger version {stored['version']} stored ({len(events)} events)")
    for event in events if isinstance(events, list) else []:
        print(f"  {_describe_event(event)}")
    # Stored all the same (the default branch's ledger is the truth), but said out loud: a
    # mistake in the ledger otherwise shows only as blocked patches later.
    for item in _list_of_objects(stored.get("invalid")):
        problems = item.get("problems")
        why = "; ".join(map(str, problems)) if isinstance(problems, list) else "invalid"
        print(f"invalid freeze {item.get('freeze')}: {why}")
    for item in _list_of_objects(stored.get("expired")):
        print(f"expired freeze {item.get('freeze')}: expired on {item.get('expires')}")
    for kind, path in (("fixture-lock", args.fixture_lock), ("oracle-map", args.oracle_map)):
        if path:
            _push_governance(client, kind, path, args.sha)
    return EXIT_PASS


def _push_governance(client: Client, kind: str, path: str, sha: str) -> None:
    """Send a fixture lock or oracle map as its bytes: the server keeps their sha256, which
    the analysis of a commit holding the same file records."""
    data = read_bytes(path)
    repo_path = Path(path).as_posix() if not Path(path).is_absolute() else Path(path).name
    answer = client.request(
        "PUT",
        f"/api/v1/governance/{kind}",
        query={"sha": sha, "path": repo_path},
        body=data,
        content_type="text/plain; charset=utf-8",
    )
    stored = answer_object(answer, f"a {kind} version", "version")
    state = "unchanged" if answer.status == 200 else "stored"
    print(f"{kind} {state}: version {stored['version']} (sha256 {str(stored.get('sha256'))[:12]})")


def _list_of_objects(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


LEDGER_EXAMPLE = f"""example (in the default branch's protected CI, with a ledger-scoped token):
  export {ENV_URL}=https://freezedebt.example.com {ENV_TOKEN}=fdk_...
  freezedebt-ci ledger push freeze_ledger.toml --sha "$(git rev-parse HEAD)" \\
      --fixture-lock fixtures.lock --oracle-map oracle_map.json

TOML is sent as application/toml, JSON as application/json.
exit status: 0 stored, 2 usage, invalid ledger or transport error"""

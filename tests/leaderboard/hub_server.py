"""A loopback server speaking the Hub endpoints `huggingface_hub` calls to create a repo, commit (optionally as a
pull request) and download a repo, recording every request so tests can check the payloads: the real client,
pointed at it with HF_ENDPOINT (a test double of the Hub, for tests only).

Endpoints (huggingface_hub 2.x, `hf_api.py`, `_commit_api.py`, `_snapshot_download.py`, `file_download.py`):
POST /api/repos/create; POST /api/validate-yaml (a README.md in a commit); POST
/api/{type}s/{org}/{name}/preupload/{rev} (every file is answered "regular", so its content comes inline); POST
/api/{type}s/{org}/{name}/commit/{rev}[?create_pr=1] with an NDJSON body: a header line, then one line per file
(base64); a commit without create_pr lands on the repo's files. GET /api/{type}s/{org}/{name}/revision/{rev}
(the commit sha), GET /api/{type}s/{org}/{name}/tree/{rev}[/{path}] (one page), HEAD and GET
/{type}s/{org}/{name}/resolve/{rev}/{path} (X-Repo-Commit, ETag: the git blob id).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

TOKEN = "hf_loopbacktesttoken000"
_REPO_PATH = re.compile(r"^/api/(?P<type>models|datasets|spaces)/(?P<repo>[^/]+/[^/]+)/(?P<op>preupload|commit)/"
                        r"(?P<rev>[^/?]+)$")
_READ_PATH = re.compile(r"^(?:/api)?/(?P<type>datasets|spaces)/(?P<repo>[^/]+/[^/]+)/(?P<op>revision|tree|resolve)/"
                        r"(?P<rev>[^/]+)(?:/(?P<path>.*))?$")


def blob_id(data: bytes) -> str:
    """The git blob id of a file's content (what the Hub reports as a regular file's oid)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Commit:
    """One commit the server received."""

    repo_type: str
    repo_id: str
    revision: str
    create_pr: bool
    summary: str
    description: str
    files: dict[str, bytes]


@dataclass
class LoopbackHub:
    """The server's record: every request (method, path, query, headers, body) and the commits it made."""

    requests: list[tuple[str, str, dict, dict, bytes]] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    created: list[dict] = field(default_factory=list)
    repos: dict[str, dict[str, bytes]] = field(default_factory=dict)
    """"datasets/ORG/NAME" -> path -> content on main (commits without create_pr land here; tests may seed it)."""
    url: str = ""

    def sha(self, repo: str) -> str:
        """The repo's commit: a digest of its files."""
        files = self.repos.get(repo, {})
        return hashlib.sha1("".join(f"{p}:{blob_id(d)}" for p, d in sorted(files.items())).encode()).hexdigest()

    def paths(self) -> list[str]:
        return [f"{method} {path}" for method, path, _, _, _ in self.requests]


def _handler(hub: LoopbackHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # (quiet)
            pass

        def _reply(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _read(self, with_body: bool) -> None:
            url = urlparse(self.path)
            hub.requests.append((self.command, url.path, parse_qs(url.query), dict(self.headers), b""))
            match = _READ_PATH.match(url.path)
            repo = f"{match['type']}/{match['repo']}" if match else ""
            if match is None or repo not in hub.repos:
                self._reply(404, {"error": "Repository not found"})
                return
            files, sha = hub.repos[repo], hub.sha(repo)
            if match["op"] == "revision":
                self._reply(200, {"id": match["repo"], "sha": sha, "siblings": [{"rfilename": p} for p in files]})
            elif match["op"] == "tree":
                under = (match["path"] or "").strip("/")
                self._reply(200, [{"type": "file", "oid": blob_id(d), "size": len(d), "path": p}
                                  for p, d in sorted(files.items()) if not under or p.startswith(under + "/")])
            elif match["path"] not in files:
                self._reply(404, {"error": "Entry not found"})
            else:
                data = files[match["path"]]
                self.send_response(200)
                for name, value in (("X-Repo-Commit", sha), ("ETag", f'"{blob_id(data)}"'),
                                    ("Content-Length", str(len(data))), ("Content-Type", "application/octet-stream")):
                    self.send_header(name, value)
                self.end_headers()
                if with_body:
                    self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            self._read(with_body=True)

        def do_HEAD(self) -> None:  # noqa: N802
            self._read(with_body=False)

        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            url = urlparse(self.path)
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            query = parse_qs(url.query)
            hub.requests.append(("POST", url.path, query, dict(self.headers), body))
            if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                self._reply(401, {"error": "Invalid credentials in Authorization header"})
                return
            if url.path == "/api/repos/create":
                payload = json.loads(body)
                hub.created.append(payload)
                kind = {"dataset": "datasets/", "space": "spaces/"}.get(payload.get("type"), "")
                self._reply(200, {"url": f"{hub.url}/{kind}{payload['organization']}/{payload['name']}"})
                return
            if url.path == "/api/validate-yaml":
                self._reply(200, {"errors": [], "warnings": []})
                return
            match = _REPO_PATH.match(url.path)
            if match is None:
                self._reply(404, {"error": f"no route {url.path}"})
                return
            if match["op"] == "preupload":
                files = json.loads(body)["files"]
                self._reply(200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                            for f in files]})
                return
            lines = [json.loads(line) for line in body.splitlines() if line.strip()]
            header = next(item["value"] for item in lines if item["key"] == "header")
            files = {item["value"]["path"]: base64.b64decode(item["value"]["content"])
                     for item in lines if item["key"] == "file"}
            create_pr = query.get("create_pr") == ["1"]
            if not create_pr:
                hub.repos.setdefault(f"{match['type']}/{match['repo']}", {}).update(files)
            hub.commits.append(Commit(match["type"][:-1], match["repo"], match["rev"], create_pr, header["summary"],
                                      header.get("description", ""), files))
            number = len(hub.commits)
            prefix = "" if match["type"] == "models" else f"{match['type']}/"
            self._reply(200, {"commitUrl": f"{hub.url}/{prefix}{match['repo']}/commit/{number:040x}",
                              "commitOid": f"{number:040x}",
                              "pullRequestUrl": f"{hub.url}/{prefix}{match['repo']}/discussions/{number}"
                              if create_pr else None})

    return Handler


class serve_hub:  # noqa: N801 - used as a context manager, like a function
    """Start the loopback Hub on a free port for a `with` block; yields its `LoopbackHub` record."""

    def __enter__(self) -> LoopbackHub:
        self.hub = LoopbackHub()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.hub))
        self.hub.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self.hub

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

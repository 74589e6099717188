"""Submit jobs to a LAVA server over its XML-RPC API (the one lavacli uses) and wait for them.

LAVA_URL (https://lava.example.org, or its /RPC2), LAVA_USER and LAVA_TOKEN; the token travels as
the URL's credentials, as lavacli sends it."""
from __future__ import annotations

import time
import xmlrpc.client
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from . import FarmJobFailed, FarmUnreachable

FINISHED = "Finished"


def rpc_url(url: str, user: str | None = None, token: str | None = None) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FarmUnreachable(f"LAVA_URL {url!r} is not an http(s) URL")
    path = parts.path.rstrip("/")
    if not path.endswith("/RPC2"):
        path += "/RPC2"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    if user and token:
        netloc = f"{quote(user, safe='')}:{quote(token, safe='')}@{netloc}"
    return urlunsplit((parts.scheme, netloc, path, "", ""))


def _transport(https: bool, timeout: float):
    base = xmlrpc.client.SafeTransport if https else xmlrpc.client.Transport

    class Timed(base):
        def make_connection(self, host):
            conn = super().make_connection(host)
            conn.timeout = timeout
            return conn
    return Timed()


class Farm:
    def __init__(self, url: str, user: str | None = None, token: str | None = None, timeout: float = 30.0):
        self.url = url
        full = rpc_url(url, user, token)
        self.proxy = xmlrpc.client.ServerProxy(full, allow_none=True,
                                               transport=_transport(full.startswith("https:"), timeout))

    def _call(self, what: str, *args):
        try:
            return getattr(self.proxy, what)(*args)
        except xmlrpc.client.Fault as e:
            if e.faultCode in (401, 403):
                raise FarmUnreachable(f"LAVA at {self.url} refuses the token ({e.faultString})") from None
            raise FarmJobFailed(f"LAVA at {self.url}: {what} failed: {e.faultString}") from None
        except xmlrpc.client.ProtocolError as e:
            raise FarmUnreachable(f"LAVA at {self.url} answered {e.errcode} {e.errmsg}") from None
        except (OSError, xmlrpc.client.Error) as e:
            raise FarmUnreachable(f"cannot reach LAVA at {self.url}: {e}") from None

    def submit(self, definition: str) -> int:
        ids = self._call("scheduler.jobs.submit", definition)
        return int(ids[0] if isinstance(ids, list) else ids)

    def state(self, job_id: int) -> dict:
        return self._call("scheduler.jobs.show", job_id)

    def wait(self, job_id: int, timeout: float, poll: float = 5.0) -> dict:
        end = time.monotonic() + timeout
        while True:
            st = self.state(job_id)
            if st.get("state") == FINISHED:
                return st
            if time.monotonic() > end:
                raise FarmJobFailed(f"LAVA job {job_id} not finished after {timeout:g} s "
                                    f"(state {st.get('state')}); see {self.url}/scheduler/job/{job_id}")
            time.sleep(poll)

    def log(self, job_id: int) -> str:
        """The whole job log as the server stores it (output.yaml: '- {...}' lines)."""
        text, line = [], 0
        while True:
            finished, data = self._call("scheduler.jobs.logs", job_id, line)
            if isinstance(data, xmlrpc.client.Binary):
                data = data.data.decode("utf-8", "replace")
            chunk = str(data or "")
            text.append(chunk)
            line += sum(1 for l in chunk.splitlines() if l.startswith("- "))
            if finished or not chunk:
                return "".join(text)


def fetch(farm: Farm, job_id: int, out_dir: Path, job_text: str) -> Path:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "job.yaml").write_text(job_text)
    (out_dir / "output.yaml").write_text(farm.log(job_id))
    return out_dir

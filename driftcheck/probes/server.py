"""`server` probe: what a running inference engine reports about itself (`snapshot --server URL`).

The settings of the serving engine — speculative decoding, CUDA-graph batch sizes, attention and
sampling backends, memory fraction, chunked prefill, parallel sizes, quantization — move tok/s as much
as any package, and only the running server knows the values it resolved. The probe asks it over HTTP
(SGLang `/get_server_info` and `/get_model_info`, vLLM `/version` and the configuration gauges of
`/metrics`, any server's `/v1/models`) and records the answers keyed by argument name, so a restarted
server with one flag changed diffs as that one flag. Secrets among the arguments (`api_key`) are kept
as digests. An unreachable server is `unavailable` with the reason.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from driftcheck.hosts import Host
from driftcheck.probes.base import Probe, ProbeOptions, ProbeUnavailable
from driftcheck.probes.redact import Redactor
from driftcheck.serving.engine import Scrub, describe, gather_replies
from driftcheck.serving.http import ServerError, parse_url

_SECRET_ARG_PARTS = ("api_key", "password", "secret", "token_value", "hf_token", "access_key", "private_key")


def _is_loopback(url: str) -> bool:
    hostname = parse_url(url).hostname.lower()
    if hostname == "localhost" or hostname.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False


def is_secret_argument(name: str) -> bool:
    """Whether a server argument's name says its value is a credential (`api_key`, `ssl_keyfile_password`)."""
    lowered = name.lower()
    return any(part in lowered for part in _SECRET_ARG_PARTS)


def redacting_scrub(redactor: Redactor) -> Scrub:
    """A Scrub that digests credential arguments and strips credentials from every other string."""
    def scrub(key: str, value: str) -> str:
        if value and is_secret_argument(key):
            return redactor.digest(value)
        return redactor.scrub_value(value)

    return scrub


class ServerProbe(Probe):
    """Built with the user's redactor: a server's arguments can hold its API key."""

    name = "server"
    description = "a running SGLang / vLLM / OpenAI-compatible server's own report of its settings (--server URL)"
    timeout_s = 30.0
    needs_redactor = True
    cheap = True
    on_request = True
    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor

    @classmethod
    def requested(cls, options: ProbeOptions) -> bool:
        return bool(options.server_url)

    def gather(self, host: Host, options: ProbeOptions) -> Any:
        url = options.server_url
        if not url:
            raise ProbeUnavailable("no server asked for (snapshot --server URL)")
        if host.capabilities.recorded:
            raise ProbeUnavailable("a recording holds no server answers; ask the live server")
        if not host.capabilities.in_process and _is_loopback(url):
            # Asked from this machine, a loopback URL would describe a server here, not on that host.
            raise ProbeUnavailable(f"{url} is this machine's loopback, not {host.name}'s; give a URL this machine "
                                   "reaches, or run the snapshot on that host")
        try:
            # Up to six GETs must fit the probe's limit even when each one times out.
            return gather_replies(url, timeout_s=4.0)
        except ServerError as exc:
            raise ProbeUnavailable(str(exc)) from None

    def parse(self, raw: Any) -> dict[str, Any]:
        if not isinstance(raw, dict) or not isinstance(raw.get("replies"), dict):
            raise ValueError("server probe output has no replies")
        return describe(raw, redacting_scrub(self.redactor))

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
from typing import TYPE_CHECKING

from driftcheck.hosts import Host
from driftcheck.probes.base import Probe, ProbeOptions, ProbeUnavailable
from driftcheck.probes.redact import Redactor, is_secret_name
from driftcheck.serving.http import ServerError, parse_url
from driftcheck.snapshot.jsontypes import JSONObject, JSONValue, object_or_empty

if TYPE_CHECKING:
    from driftcheck.serving.engine import Scrub

# The engines' replies (`serving.engine`) and their releases' flag tables (`serving.flag_tables`, ~7 ms of
# import) are imported where a server or its log is read: every snapshot and run imports this probe, few ask it.
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
    return is_secret_name(name) or any(part in lowered for part in _SECRET_ARG_PARTS)


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
    description = ("a running SGLang / vLLM / OpenAI-compatible server's own report of its settings (--server URL), "
                   "and the settings its log says it started with (--server-log FILE)")
    timeout_s = 30.0
    needs_redactor = True
    cheap = True
    on_request = True
    def __init__(self, redactor: Redactor) -> None:
        self.redactor = redactor

    @classmethod
    def requested(cls, options: ProbeOptions) -> bool:
        return bool(options.server_url or options.server_log)

    def gather(self, host: Host, options: ProbeOptions) -> JSONObject:
        url = options.server_url
        log = _startup_lines(host, options.server_log) if options.server_log else None
        if not url:
            if log is None:
                raise ProbeUnavailable("no server asked for (snapshot --server URL or --server-log FILE)")
            if log["why"] is not None:
                raise ProbeUnavailable(str(log["why"]))
            return {"url": None, "server_log": log}
        if host.capabilities.recorded:
            raise ProbeUnavailable("a recording holds no server answers; ask the live server")
        if not host.capabilities.in_process and _is_loopback(url):
            # Asked from this machine, a loopback URL would describe a server here, not on that host.
            raise ProbeUnavailable(self.redactor.text(f"{url} is this machine's loopback, not {host.name}'s; give a "
                                                      "URL this machine reaches, or run the snapshot on that host"))
        from driftcheck.serving.engine import gather_replies
        try:
            # Up to six GETs must fit the probe's limit even when each one times out.
            raw = gather_replies(url, timeout_s=4.0)
        except ServerError as exc:
            # The reason names the URL, which may carry a user and password: the outcome enters the snapshot.
            raise ProbeUnavailable(self.redactor.text(str(exc))) from None
        raw["launch"] = self._launch(host, url)
        if log is not None:
            raw["server_log"] = log
        return raw

    def _launch(self, host: Host, url: str) -> JSONObject:
        """The command line of the engine process listening on the URL's port, read through the host:
        {found, why, cmdline, flags}. Read on the machine itself only: over SSH it would cost one round
        trip per process."""
        if not host.capabilities.in_process:
            return _no_launch(f"the launch command line is read on the server's machine only, not over {host.kind}")
        # The launch and startup-log readers are imported where a server is asked for: every snapshot imports this
        # module (the probes are one table), few ask for a server, and their tables cost ~3 ms to import.
        from driftcheck.serving.launch import config_file_of, engine_of, launch_flags, listening_port

        port = parse_url(url).port
        try:
            pids = [name for name in host.list_dir("/proc") if name.isdigit()]
        except OSError:
            return _no_launch("/proc cannot be listed here")
        found: list[tuple[str, list[str]]] = []
        for pid in pids:
            try:
                argv = [part.decode("utf-8", "replace") for part in host.read_bytes(f"/proc/{pid}/cmdline").split(b"\0")
                        if part]
            except OSError:
                continue
            engine = engine_of(argv)
            if engine is not None and listening_port(argv, engine[1]) == port:
                found.append((pid, argv))
        if len(found) != 1:
            why = (f"no SGLang or vLLM server started with --port {port} runs here (or its command line is not ours "
                   "to read)" if not found else f"{len(found)} engine processes name port {port}: which one answers "
                   "is not known")
            return _no_launch(why)
        pid, raw_argv = found[0]
        argv = self.redactor.argv(raw_argv)
        launch: JSONObject = {"found": True, "why": None, "cmdline": argv, "flags": launch_flags(argv)}
        config_path = config_file_of(raw_argv)
        if config_path is not None:
            launch["config_file"] = self._config_file(host, pid, config_path)
        return launch

    def _config_file(self, host: Host, pid: str, path: str) -> JSONObject:
        """vLLM's `--config FILE`, read where the server reads it (a relative path from its working
        directory): {path, settings} with the YAML parsed, or {path, why} when it cannot be read."""
        # Imported here: only a server started with --config has a file to parse, and every snapshot imports
        # this probe's module (the probes are listed in one table) without asking for it.
        import yaml

        where = path if path.startswith("/") else f"/proc/{pid}/cwd/{path}"
        try:
            loaded = yaml.safe_load(host.read_bytes(where).decode("utf-8", "replace"))
        except (OSError, yaml.YAMLError) as exc:
            return {"path": path, "settings": None, "why": f"{type(exc).__name__}: {exc}"}
        settings = _scrubbed_tree(loaded, redacting_scrub(self.redactor)) if isinstance(loaded, dict) else None
        return {"path": path, "settings": settings, "why": None if settings is not None else "not a YAML mapping"}

    def parse(self, raw: JSONValue) -> JSONObject:
        if not isinstance(raw, dict):
            raise ValueError("server probe output is not an object")
        log = raw.get("server_log")
        if isinstance(raw.get("replies"), dict):
            from driftcheck.serving.engine import describe

            data = describe(raw, redacting_scrub(self.redactor))
            launch = raw.get("launch")
            data["launch"] = resolved_launch(launch, data.get("engine"), data.get("version")) \
                if isinstance(launch, dict) else _no_launch("not recorded by this driftcheck version")
        elif isinstance(log, dict):
            data = {"url": None, "engine": "unknown", "version": None, "endpoints": {}, "http_server": None,
                    "models": {}, "launch": _no_launch("no running server asked (--server-log alone)")}
        else:
            raise ValueError("server probe output has no replies and no server log")
        if isinstance(log, dict):
            data = with_startup_log(data, log, redacting_scrub(self.redactor))
        # A server's reply is another program's text: a token at any depth (a top-level `token`, a nested
        # `{"password": ...}`, `auth_token` in a rank's state), a model root URL with credentials, a `Server:`
        # header holding a token shape, all pass the same redaction as the arguments.
        return object_or_empty(self.redactor.json(data))


def _scrubbed_tree(value: object, scrub: Scrub, key: str = "") -> JSONValue:
    """A parsed YAML file as JSON, every string scrubbed under the key it sits at (an `api-key:` digested)."""
    if isinstance(value, dict):
        return {str(inner): _scrubbed_tree(item, scrub, str(inner).replace("-", "_")) for inner, item in value.items()}
    if isinstance(value, list):
        return [_scrubbed_tree(item, scrub, key) for item in value]
    if isinstance(value, str):
        return scrub(key, value)
    return value if value is None or isinstance(value, (bool, int, float)) else str(value)


def _startup_lines(host: Host, path: str) -> JSONObject:
    """The server log at `path` on `host`, as the lines the startup reader reads (a log a server appends to for
    weeks is mostly request lines): {path, lines, why}; `why` says why it could not be read."""
    from driftcheck.serving.startup_log import STARTUP_PIECES, is_startup_line, read_startup_log

    try:
        # Line by line: only the lines that may be a start's are kept, never the whole file or its text.
        raw = host.read_lines(path, STARTUP_PIECES)
    except FileNotFoundError:
        return {"path": path, "lines": None, "why": f"server log {path}: no such file on {host.name}"}
    except PermissionError:
        return {"path": path, "lines": None, "why": f"server log {path}: not readable by this user on {host.name}"}
    except OSError as exc:
        return {"path": path, "lines": None, "why": f"server log {path}: {exc.strerror or exc} on {host.name}"}
    lines = [line for piece in raw for line in piece.decode("utf-8", "replace").splitlines() if is_startup_line(line)]
    if read_startup_log("\n".join(lines)) is None:
        return {"path": path, "lines": lines, "why": f"server log {path} holds no vLLM `non-default args:` line and no "
                                                     "SGLang `server_args=` line: not the log of an engine's start"}
    return {"path": path, "lines": lines, "why": None}


def with_startup_log(data: JSONObject, log: JSONObject, scrub: Scrub) -> JSONObject:
    """`data` with the settings of the engine start its log holds: each under the name the engine gives it
    (the names of `server_args`), where the running server did not report it (what a running server resolved
    is the better fact), secrets scrubbed as the server's own arguments are. vLLM logs only the arguments that
    differ from its parser's defaults; the others take the default of its release's flag table, so a flag
    dropped on B is a change, not a setting known on one side only. The engine is the log's, unless a running
    server of the other engine or of another release answered (then the log, of another start, is not merged).
    `server_log`
    records the file, the version its start line names, which settings it gave, where the defaults came from
    and which values were kept as their text."""
    from driftcheck.serving.startup_log import read_startup_log

    lines = log.get("lines")
    start = read_startup_log("\n".join(str(line) for line in lines)) if isinstance(lines, list) else None
    record: JSONObject = {"path": log.get("path"), "found": False, "why": log.get("why"), "engine": None,
                          "version": None, "fields": [], "defaults_from": None, "as_text": []}
    if start is None:
        return {**data, "server_log": record}
    record.update(engine=start.engine, version=start.version, as_text=list(start.as_text))
    engine, running = data.get("engine"), data.get("version")
    if engine in ("sglang", "vllm") and engine != start.engine:
        record["why"] = f"the log is of a {start.engine} start, the server asked is {engine}: not merged"
        return {**data, "server_log": record}
    if running is not None and start.version is not None and running != start.version:
        # An older start the log kept (the server has been upgraded since, or the log is another server's).
        record["why"] = f"the log's last start is {start.engine} {start.version}, the server answers {running}: " \
                        "not merged"
        return {**data, "server_log": record}
    version = running if running is not None else start.version
    args = dict(object_or_empty(data.get("server_args")))
    given = [field for field in start.settings if field not in args]
    for field in given:
        args[field] = _scrubbed_tree(start.settings[field], scrub, field)
    from driftcheck.serving.flag_tables import table_for

    table = None if start.complete else table_for(start.engine, version)
    if table is not None:
        for field, spec in table.fields.items():
            args.setdefault(field, spec.default)
    record.update(found=True, fields=sorted(given),
                  defaults_from=f"{table.engine} {table.version} parser table" if table is not None else None)
    return {**data, "engine": start.engine, "version": version, "server_args": dict(sorted(args.items())),
            "server_log": record}


def resolved_launch(launch: JSONObject, engine: JSONValue, version: JSONValue) -> JSONObject:
    """The launch record with its flags read as the engine's parser reads them, by field (`-tp 8` ->
    tensor_parallel_size: 8, `--tp 4` on SGLang -> tp_size: 4), when the release's flag table is known;
    `flags_by` says which table (or that the flags are only split by name)."""
    from driftcheck.serving.flag_tables import table_for
    from driftcheck.serving.launch import vllm_argv

    argv = launch.get("cmdline")
    table = table_for(engine, version)
    if not launch.get("found") or not isinstance(argv, list) or table is None:
        return {**launch, "flags_by": None}
    words = [str(word) for word in argv]
    if table.engine == "vllm":
        config = launch.get("config_file")
        words = vllm_argv(words, config.get("settings") if isinstance(config, dict) else None,
                          table.config_false_negated)
    return {**launch, "flags": table.fields_of(words), "flags_by": f"{table.engine} {table.version} parser table"}


def _no_launch(why: str) -> JSONObject:
    """The launch command line unknown, and why: not found here, not ours to read, not read over SSH."""
    return {"found": False, "why": why, "cmdline": None, "flags": None}

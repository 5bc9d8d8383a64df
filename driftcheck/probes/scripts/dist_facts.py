# Distributions the interpreter running this script can see, and the files their binaries live in.
# Stdlib only, Python 3.8+: it runs in the *target* interpreter (a benchmark venv, possibly on another
# host) where driftcheck is not installed. Prints one JSON object. Modes (first argument):
#   packages                 every distribution on sys.path, with its compiled files from RECORD
#   files [--lib PATH]...    stat of every compiled file of every distribution, of the given system
#                            libraries, and a summary of the JIT caches
#   hash [--jobs N] PATH...  streaming sha256 of each PATH, N threads at once (0: up to 4, one per CPU)
import csv
import getpass
import json
import os
import re
import stat
import sys

COMPILED_SUFFIXES = (".so", ".pyd", ".cubin", ".fatbin", ".ptx", ".dll")
_VERSIONED_SO = re.compile(r"\.so(\.\d+)+$")
# In every path is_compiled accepts: one of COMPILED_SUFFIXES (".so" also begins the versioned ones).
_COMPILED_MARK = re.compile(r"\.(?:so|pyd|cubin|fatbin|ptx|dll)", re.IGNORECASE)
# What makes csv.reader read a RECORD other than line by line, or splitlines() split it elsewhere than at "\n".
_NOT_PLAIN = ('"', "\0", "\v", "\f", "\x1c", "\x1d", "\x1e")
# A carriage return that does not begin a CRLF line end.
_LONE_CR = re.compile("\r(?!\n)")


def is_compiled(path):
    """Whether a file holds machine or GPU code (a shared object, a cubin, a fatbin, PTX)."""
    lower = path.lower()
    return lower.endswith(COMPILED_SUFFIXES) or bool(_VERSIONED_SO.search(lower))


def read_text(path):
    """The content of `path` as text, or None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return None


# Headers already read by this process: the `packages` and `files` answers of one facts_batch run read the
# same METADATA files.
_HEADERS = {}  # type: dict[str, dict[str, str]]


def metadata_headers(path):
    """Name and Version from a METADATA/PKG-INFO file: the headers end at the first blank line."""
    if path not in _HEADERS:
        _HEADERS[path] = _read_headers(path)
    return dict(_HEADERS[path])


def _read_headers(path):
    """metadata_headers's answer, read from the file."""
    found = {}
    try:
        with open(path, "rb") as handle:
            for raw in handle:
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if not line:
                    break
                key, sep, value = line.partition(":")
                if sep and key in ("Name", "Version") and key not in found:
                    found[key] = value.strip()
    except OSError:
        pass
    return found


def lines_within(text, limit):
    """Whether no line of `text` (cut at "\n") is longer than `limit` characters.

    Where every aligned piece of limit // 2 characters holds a line end, no line can be longer: torch's RECORD
    is answered in a few dozen finds, not a split into tens of thousands of lines. Otherwise the lines are
    measured.
    """
    if len(text) <= limit:
        return True
    step = max(limit // 2, 1)
    if all(text.find("\n", start, start + step) >= 0 for start in range(0, len(text), step)):
        return True
    return max(map(len, text.split("\n"))) <= limit


def compiled_lines(text):
    """The lines of a RECORD that may name a compiled file, read as csv.reader would read all of them.

    torch's RECORD alone has tens of thousands of lines, nearly all of .py files: reading each as CSV was most
    of this script's work. A row whose path has no compiled suffix is never kept, so where every line is a
    plain one (ASCII; no quote, which may join lines; no NUL and no field past csv's limit, which fail the
    whole RECORD; only newline or CRLF breaks, as pip and uv write them) only lines holding a suffix are read.
    """
    plain = (text.isascii() and not any(mark in text for mark in _NOT_PLAIN)
             and ("\r" not in text or _LONE_CR.search(text) is None)
             and lines_within(text, csv.field_size_limit()))
    if not plain:
        return text.splitlines()
    lines = []
    last_start = -1
    for match in _COMPILED_MARK.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        if start == last_start:
            continue
        end = text.find("\n", match.end())
        line = text[start:] if end < 0 else text[start:end]
        lines.append(line[:-1] if line.endswith("\r") else line)
        last_start = start
    return lines


# RECORDs already read by this process: the `packages` and `files` answers of one facts_batch run read the
# same ones, and torch's alone is tens of thousands of lines.
_RECORDS = {}  # type: dict[str, list[list[object]] | None]

# A directory where this interpreter's parsed RECORDs are kept between runs, named by driftcheck on its own machine
# (hosts/local.py; facts_batch keeps the scripts' compiled code there too); unset over SSH and in replays, where
# every RECORD is read. Reading the RECORDs of a venv with torch is ~20 ms of every snapshot, twice per
# `driftcheck run`; a kept parse is reused only while the RECORD's size, mtime, ctime, inode and device are all
# those it was parsed at, so a RECORD rewritten (a reinstall, an edit, one file replaced by another) is read again.
FACTS_CACHE_VARIABLE = "DRIFTCHECK_FACTS_CACHE"
# This process's view of its cache file: "file", "kept" (as read: RECORD path -> [identity, rows]), "used" (what
# this process looked up, to be written back), "changed".
_KEPT = {}  # type: dict[str, object]


def record_compiled(meta_dir):
    """[relative path, hash, size] of each compiled file a RECORD lists; None when there is no readable RECORD.

    A damaged RECORD (a NUL byte, a broken quote) costs that one distribution its file list, not the
    whole answer: the other packages are still described.
    """
    if meta_dir not in _RECORDS:
        _RECORDS[meta_dir] = _read_record(meta_dir)
    rows = _RECORDS[meta_dir]
    return None if rows is None else [list(row) for row in rows]


def _read_record(meta_dir):
    """record_compiled's answer: kept from an earlier run of this interpreter while the RECORD is unchanged
    (FACTS_CACHE_VARIABLE), else read from the file."""
    path = os.path.join(meta_dir, "RECORD")
    kept = record_cache()
    # Taken before the read: a RECORD rewritten after it has another identity the next time.
    identity = file_identity(path) if kept is not None else None
    if identity is not None:
        entry = kept["kept"].get(path)
        if kept_rows_fit(entry, identity):
            kept["used"][path] = entry
            return [list(row) for row in entry[1]]
    rows = _parse_record(path)
    if identity is not None and rows is not None:
        kept["used"][path] = [identity, rows]
        kept["changed"] = True
    return rows


def _parse_record(path):
    """[relative path, hash, size] of each compiled file the RECORD at `path` lists, read from the file."""
    text = read_text(path)
    if text is None:
        return None
    rows = []
    try:
        for row in csv.reader(compiled_lines(text)):
            if not row or not is_compiled(row[0]):
                continue
            digest = row[1] if len(row) > 1 and row[1] else None
            size = int(row[2]) if len(row) > 2 and row[2].isdigit() else None
            rows.append([row[0], digest, size])
    except csv.Error:
        return None
    return rows


def file_identity(path):
    """What a stat says of the content of the file at `path` (unchanged while all five are); None when it cannot
    be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def kept_rows_fit(entry, identity):
    """Whether a kept entry ([identity, rows]) was parsed from the file as `identity` describes it, and holds rows
    of the shape _parse_record gives: anything else in the file (another version's, a damaged one) is a miss."""
    if not isinstance(entry, list) or len(entry) != 2 or entry[0] != identity or not isinstance(entry[1], list):
        return False
    for row in entry[1]:
        if not (isinstance(row, list) and len(row) == 3 and isinstance(row[0], str)
                and (row[1] is None or isinstance(row[1], str))
                and (row[2] is None or (isinstance(row[2], int) and not isinstance(row[2], bool)))):
            return False
    return True


def record_cache():
    """This process's view of the kept RECORD parses (_KEPT), loaded once; None when none is named."""
    if not _KEPT:
        directory = os.environ.get(FACTS_CACHE_VARIABLE)
        if not directory:
            _KEPT["file"] = None
        else:
            import zlib  # where used: only a local snapshot names a cache

            # One file per interpreter: each keeps only the RECORDs its own sys.path shows.
            key = "\0".join((sys.executable, sys.prefix, sys.version)).encode("utf-8", "surrogateescape")
            _KEPT["file"] = os.path.join(directory, f"records-{zlib.crc32(key):08x}.json")
            _KEPT["kept"] = _load_kept(_KEPT["file"])
            _KEPT["used"] = {}
            _KEPT["changed"] = False
    return _KEPT if _KEPT["file"] else None


def _load_kept(path):
    """The entries of the cache file at `path`; {} when it is missing or is not what save_record_cache writes."""
    try:
        with open(path, "rb") as handle:
            doc = json.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError):
        return {}
    entries = doc.get("records") if isinstance(doc, dict) else None
    return entries if isinstance(entries, dict) else {}


def save_record_cache():
    """Write back the RECORD parses this process used, when any was read anew or a kept one was not used (a
    distribution gone); replaced whole, so a reader sees the old file or the new one. A cache that cannot be
    written costs only the next run's reading."""
    kept = record_cache()
    if kept is None or (not kept["changed"] and set(kept["used"]) == set(kept["kept"])):
        return
    temporary = f"{kept['file']}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(kept["file"]), mode=0o700, exist_ok=True)
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump({"records": kept["used"]}, handle)
        os.replace(temporary, kept["file"])
    except OSError:
        import contextlib  # where used: only where the cache cannot be written

        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return
    kept["kept"] = dict(kept["used"])
    kept["changed"] = False


def wheel_info(meta_dir):
    """The tags and Root-Is-Purelib of a WHEEL file; (None, None) without one."""
    text = read_text(os.path.join(meta_dir, "WHEEL"))
    if text is None:
        return None, None
    tags = []
    purelib = None
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "Tag":
            tags.append(value.strip())
        elif key.strip() == "Root-Is-Purelib":
            purelib = value.strip().lower() == "true"
    return tags, purelib


def read_json(path):
    """The JSON at `path`; None when absent, a marker when it does not parse."""
    text = read_text(path)
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return {"unparsable": text[:200]}


# Real paths resolved by this process. os.path.realpath walks (lstat) every component of a path anew: the
# ~600 compiled files of a snapshot lie in ~100 directories, so resolving each directory once takes ~4,800
# lstat calls down to a few hundred.
_REAL = {}  # type: dict[str, str]


def real_path(path):
    """os.path.realpath(path), each directory of an absolute, normalized path resolved once per process.

    A name that is not a symbolic link resolves to itself inside its parent's real path; a link (or a path
    of another shape) is left to os.path.realpath, so the answer is the same as realpath's, missing
    components and link loops included.
    """
    known = _REAL.get(path)
    if known is not None:
        return known
    if not path.startswith("/") or path.startswith("//") or os.path.normpath(path) != path:
        return os.path.realpath(path)
    parent, name = os.path.split(path)
    if not name:  # the root
        return path
    candidate = os.path.join(real_path(parent), name)
    real = os.path.realpath(candidate) if os.path.islink(candidate) else candidate
    _REAL[path] = real
    return real


def search_path():
    """sys.path entries that are directories, in order, each real directory once."""
    seen = set()
    entries = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        if real in seen:
            continue
        seen.add(real)
        entries.append(entry)
    return entries


# The distributions found by this process: the `packages` and `files` answers of one facts_batch run each
# ask, and sys.path does not change between them.
_DISTRIBUTIONS = []  # type: list[list[tuple[str, str, str]]]


def distributions():
    """Every *.dist-info / *.egg-info directory on sys.path, in import order."""
    if not _DISTRIBUTIONS:
        _DISTRIBUTIONS.append(_find_distributions())
    return list(_DISTRIBUTIONS[0])


def _find_distributions():
    """distributions's answer, read from the directories of sys.path."""
    found = []
    seen = set()
    for entry in search_path():
        try:
            names = sorted(os.listdir(entry))
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            meta_dir = os.path.join(entry, name)
            real = real_path(meta_dir)
            if real in seen:
                continue
            seen.add(real)
            found.append((entry, name, meta_dir))
    return found


def describe(entry, name, meta_dir):
    """Everything the packages probe records about one distribution."""
    egg = name.endswith(".egg-info")
    if egg and not os.path.isdir(meta_dir):
        headers = metadata_headers(meta_dir)  # a single-file PKG-INFO named *.egg-info
        compiled = None
        tags, purelib, installer, direct_url = None, None, None, None
    else:
        headers = metadata_headers(os.path.join(meta_dir, "PKG-INFO" if egg else "METADATA"))
        compiled = record_compiled(meta_dir)
        tags, purelib = wheel_info(meta_dir)
        installer_text = read_text(os.path.join(meta_dir, "INSTALLER"))
        installer = installer_text.strip() if installer_text else None
        direct_url = read_json(os.path.join(meta_dir, "direct_url.json"))
    stem = name.rsplit(".", 1)[0]
    return {
        "name": headers.get("Name") or stem.split("-")[0],
        "version": headers.get("Version") or (stem.split("-")[1] if "-" in stem else None),
        "location": entry,
        "metadata_dir": name,
        "format": "egg-info" if egg else "dist-info",
        "installer": installer,
        "direct_url": direct_url,
        "wheel_tags": tags,
        "root_is_purelib": purelib,
        "compiled": compiled,
    }


def conda_packages(prefix):
    """The conda-meta records of a conda prefix; None when `prefix` is not a conda env."""
    meta = os.path.join(prefix, "conda-meta")
    if not os.path.isdir(meta):
        return None
    packages = []
    try:
        names = sorted(os.listdir(meta))
    except OSError:
        return None
    for name in names:
        if not name.endswith(".json"):
            continue
        doc = read_json(os.path.join(meta, name))
        if not isinstance(doc, dict) or "name" not in doc:
            continue
        packages.append({"name": doc.get("name"), "version": doc.get("version"), "build": doc.get("build"),
                         "channel": doc.get("channel"), "file": name})
    return {"prefix": prefix, "packages": packages}


def packages_mode():
    """The `packages` answer: every distribution on sys.path, and conda-meta when present."""
    described = [describe(*found) for found in distributions()]
    save_record_cache()
    return {
        "interpreter": sys.executable,
        "prefix": sys.prefix,
        "sys_path": [p for p in sys.path if p],
        "distributions": described,
        "conda": conda_packages(sys.prefix),
    }


def stat_of(path):
    """Size, mtime, inode and real path of `path`, or the name of the error that stopped the stat."""
    try:
        # lstat first: for a file that is not a link it is the stat, and says that the real path is the file's
        # own name in its directory's real path.
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            st = os.stat(path)
    except OSError as exc:
        return {"path": path, "error": type(exc).__name__}
    return {"path": path, "real_path": real_path(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
            "inode": st.st_ino, "device": st.st_dev}


def jit_cache_dirs():
    """Where the JIT compilers that matter keep their caches, honouring their variables."""
    home = os.path.expanduser("~")
    env = os.environ
    try:
        user = getpass.getuser()  # what torch names its inductor cache directory after
    except (KeyError, OSError, ImportError):
        user = str(os.getuid()) if hasattr(os, "getuid") else "unknown"
    return {
        "triton": env.get("TRITON_CACHE_DIR") or os.path.join(home, ".triton", "cache"),
        "torch_inductor": env.get("TORCHINDUCTOR_CACHE_DIR") or os.path.join("/tmp", f"torchinductor_{user}"),
        "flashinfer": os.path.join(env.get("FLASHINFER_WORKSPACE_BASE") or home, ".cache", "flashinfer"),
        "cuda_compute_cache": env.get("CUDA_CACHE_PATH") or os.path.join(home, ".nv", "ComputeCache"),
        "vllm": env.get("VLLM_CACHE_ROOT") or os.path.join(home, ".cache", "vllm"),
        "deep_gemm": env.get("DG_JIT_CACHE_DIR") or os.path.join(home, ".deep_gemm"),
    }


def summarize_dir(path):
    """Files, bytes and a digest of the (path, size) listing of a directory; None when absent."""
    if not os.path.isdir(path):
        return None
    listing = []
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            try:
                size = os.lstat(full).st_size
            except OSError:
                continue
            total += size
            listing.append(f"{os.path.relpath(full, path)}\0{size}")
    listing.sort()
    import hashlib  # where used: most runs of this script hash nothing (a snapshot starts it every time)

    digest = hashlib.sha256("\n".join(listing).encode("utf-8", "surrogateescape")).hexdigest()
    return {"path": path, "files": len(listing), "bytes": total, "listing_digest": digest}


def files_mode(args):
    """The `files` answer: stat and RECORD facts of every compiled file, system libraries, JIT caches."""
    libs = [args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "--lib"]
    dists = []
    for entry, name, meta_dir in distributions():
        # Only what a file check needs: no WHEEL, INSTALLER or direct_url.json to read here.
        egg = name.endswith(".egg-info")
        if egg and not os.path.isdir(meta_dir):
            continue
        headers = metadata_headers(os.path.join(meta_dir, "PKG-INFO" if egg else "METADATA"))
        info = {"name": headers.get("Name") or name.split("-")[0], "version": headers.get("Version")}
        compiled = record_compiled(meta_dir) or []
        files = []
        for relative, digest, size in compiled:
            full = os.path.normpath(os.path.join(entry, relative))
            files.append({"relative": relative, "record_hash": digest, "record_size": size, "stat": stat_of(full)})
        dists.append({"name": info["name"], "version": info["version"], "location": entry, "files": files})
    save_record_cache()
    return {
        "interpreter": sys.executable,
        "distributions": dists,
        "libraries": [stat_of(path) for path in libs],
        "jit_caches": {name: summarize_dir(path) for name, path in sorted(jit_cache_dirs().items())},
    }


def sha256_of(path):
    """The sha256 and byte count of a file, read in 1 MiB blocks, or the error that stopped it."""
    import hashlib  # where used: most runs of this script hash nothing (a snapshot starts it every time)

    digest = hashlib.sha256()
    size = 0
    try:
        with open(path, "rb") as handle:
            while True:
                block = handle.read(1 << 20)
                if not block:
                    break
                digest.update(block)
                size += len(block)
    except OSError as exc:
        return {"error": type(exc).__name__}
    return {"sha256": digest.hexdigest(), "size": size}


def hash_mode(args):
    """The `hash` answer: sha256 of each path, hashed on several threads."""
    import threading  # where used: only this mode starts threads (a snapshot starts this script every time)

    jobs = 1
    if args[:1] == ["--jobs"]:
        jobs = int(args[1]) or min(4, os.cpu_count() or 1)
        args = args[2:]
    results = {}
    pending = list(args)
    lock = threading.Lock()

    def work():
        # hashlib releases the GIL on large blocks, so threads hash on several cores at once.
        while True:
            with lock:
                if not pending:
                    return
                path = pending.pop()
            outcome = sha256_of(path)
            with lock:
                results[path] = outcome

    threads = [threading.Thread(target=work) for _ in range(min(jobs, len(args)) or 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def main(argv):
    """Run the mode named by the first argument and print its JSON; the exit code."""
    mode = argv[0] if argv else "packages"
    if mode == "packages":
        result = packages_mode()
    elif mode == "files":
        result = files_mode(argv[1:])
    elif mode == "hash":
        result = hash_mode(argv[1:])
    else:
        sys.stderr.write(f"unknown mode {mode!r}\n")
        return 2
    sys.stdout.write(json.dumps(result))
    return 0


# Run as `python -c SOURCE ARGS`; facts_batch loads the source once and calls main for each of its parts.
if __name__ == "__main__":
    # Answered, and flushed: the interpreter's own shutdown is work nobody but the waiting snapshot waits for.
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

# What the torch of the interpreter running this script was built with. Stdlib only, Python 3.8+: it
# runs in the *target* interpreter. By default it reads files only (torch/version.py, the versions of
# the bundled nvidia-* and triton wheels) and never imports torch, which costs a second or more and can
# crash; with --deep it imports torch for the runtime facts. Prints one JSON object.
import importlib.util
import json
import os
import re
import sys


def normalize(name):
    """A distribution name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def version_py(path):
    """The literal assignments of torch/version.py (__version__, git_version, cuda, hip, debug, ...)."""
    import ast  # only where torch is installed (a snapshot starts this script every time)

    try:
        with open(path, "rb") as handle:
            tree = ast.parse(handle.read())
    except (OSError, SyntaxError, ValueError):
        return None
    values = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if not isinstance(target, ast.Name):
            continue
        try:
            values[target.id] = ast.literal_eval(value)
        except ValueError:
            continue
    return values


def cuda_wheels():
    """Versions of the wheels torch loads its CUDA libraries and compiler from.

    Read from the *.dist-info directory names (`nvidia_cudnn_cu12-9.1.0.70.dist-info`), as the wheel
    spec writes them: no metadata file is opened and importlib.metadata is not loaded.
    """
    found = {}  # type: dict[str, str]
    seen = set()
    for entry in sys.path:
        if not entry or not os.path.isdir(entry) or os.path.realpath(entry) in seen:
            continue
        seen.add(os.path.realpath(entry))
        try:
            names = sorted(os.listdir(entry))
        except OSError:
            continue
        for name in names:
            if not name.endswith(".dist-info"):
                continue
            parts = name[: -len(".dist-info")].split("-")
            if len(parts) < 2:
                continue
            dist = normalize(parts[0])
            if dist.startswith("nvidia-") or dist in ("triton", "pytorch-triton", "pytorch-triton-rocm"):
                found.setdefault(dist, parts[1])
    return dict(sorted(found.items()))


def torch_dist_version():
    """torch's version from its dist-info directory name, when version.py does not say."""
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        try:
            names = os.listdir(entry)
        except OSError:
            continue
        for name in sorted(names):
            if name.startswith("torch-") and name.endswith(".dist-info"):
                return name[len("torch-"): -len(".dist-info")]
    return None


def attempt(function, default=None):
    """The value of `function()`, or `default` when it raises."""
    try:
        return function()
    except Exception:  # noqa: BLE001 - one fact that cannot be read must not lose the others
        return default


def deep_facts():
    """What an imported torch reports: build versions, devices, backend flags, build config."""
    import torch  # noqa: F401 - the point of --deep

    facts = {
        "version": str(torch.__version__),
        "git_version": attempt(lambda: torch.version.git_version),
        "cuda": attempt(lambda: torch.version.cuda),
        "hip": attempt(lambda: torch.version.hip),
        "debug": attempt(lambda: bool(torch.version.debug)),
        "cudnn": attempt(lambda: torch.backends.cudnn.version()),
        "nccl": attempt(lambda: torch.cuda.nccl.version()),
        "cuda_available": attempt(lambda: bool(torch.cuda.is_available()), False),
        "device_count": attempt(lambda: int(torch.cuda.device_count()), 0),
        "arch_list": attempt(lambda: list(torch.cuda.get_arch_list()), []),
        "config_show": attempt(lambda: torch.__config__.show()),
    }
    devices = {}
    if facts["cuda_available"]:
        for index in range(facts["device_count"]):
            devices[str(index)] = {
                "name": attempt(lambda i=index: torch.cuda.get_device_name(i)),
                "capability": attempt(lambda i=index: ".".join(str(n) for n in torch.cuda.get_device_capability(i))),
            }
    facts["devices"] = devices
    cuda = torch.backends.cuda
    cudnn = torch.backends.cudnn
    facts["backends"] = {
        "cudnn_enabled": attempt(lambda: bool(cudnn.enabled)),
        "cudnn_benchmark": attempt(lambda: bool(cudnn.benchmark)),
        "cudnn_deterministic": attempt(lambda: bool(cudnn.deterministic)),
        "cudnn_allow_tf32": attempt(lambda: bool(cudnn.allow_tf32)),
        "matmul_allow_tf32": attempt(lambda: bool(cuda.matmul.allow_tf32)),
        "matmul_allow_fp16_reduced_precision": attempt(
            lambda: bool(cuda.matmul.allow_fp16_reduced_precision_reduction)),
        "matmul_allow_bf16_reduced_precision": attempt(
            lambda: bool(cuda.matmul.allow_bf16_reduced_precision_reduction)),
        "float32_matmul_precision": attempt(lambda: torch.get_float32_matmul_precision()),
        "flash_sdp_enabled": attempt(lambda: bool(cuda.flash_sdp_enabled())),
        "mem_efficient_sdp_enabled": attempt(lambda: bool(cuda.mem_efficient_sdp_enabled())),
        "math_sdp_enabled": attempt(lambda: bool(cuda.math_sdp_enabled())),
        "cudnn_sdp_enabled": attempt(lambda: bool(cuda.cudnn_sdp_enabled())),
        "deterministic_algorithms": attempt(lambda: bool(torch.are_deterministic_algorithms_enabled())),
        "mkldnn_available": attempt(lambda: bool(torch.backends.mkldnn.is_available())),
        "mkl_available": attempt(lambda: bool(torch.backends.mkl.is_available())),
        "openmp_available": attempt(lambda: bool(torch.backends.openmp.is_available())),
        "num_threads": attempt(lambda: int(torch.get_num_threads())),
        "num_interop_threads": attempt(lambda: int(torch.get_num_interop_threads())),
    }
    return facts


def main(argv):
    """Print the torch facts of this interpreter (importing torch only with --deep); the exit code."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        sys.stdout.write(json.dumps({"installed": False, "interpreter": sys.executable}))
        return 0
    location = list(spec.submodule_search_locations)[0]
    result = {
        "installed": True,
        "interpreter": sys.executable,
        "location": location,
        "version_py": version_py(location + "/version.py"),
        "dist_version": torch_dist_version(),
        "cuda_wheels": cuda_wheels(),
        "deep": None,
    }
    if "--deep" in argv:
        try:
            result["deep"] = deep_facts()
        except Exception as exc:  # noqa: BLE001 - reported, so the probe can say torch fails to import
            result["import_error"] = f"{type(exc).__name__}: {exc}"
    sys.stdout.write(json.dumps(result, default=str))
    return 0


# Run as `python -c SOURCE ARGS`; facts_batch loads the source once and calls main for each of its parts.
if __name__ == "__main__":
    # Answered, and flushed: the interpreter's own shutdown is work nobody but the waiting snapshot waits for.
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)

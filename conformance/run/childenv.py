"""The environment variables through which a framework or compiler loads code or trusted
data from a folder, and the rule that none of them reaches a framework process pointing
into a checkout (docs/security.md, "Every door, listed").

The list was measured (``strace`` of every framework and mode running real cases, and the
frameworks' sources; docs/security.md gives the evidence): each variable names a folder or
file whose content a framework imports, ``dlopen``\\ s, unpickles, compiles into kernels or
reads as configuration. Your environment is yours, and these variables pass through as you
set them, except where one points into a checkout (the current folder's git work tree, the
run's case folders and rootdir): there a pull request could write what it names, so the
framework process does not get it, and one line says so. The compilers' own cache folders
(``TORCHINDUCTOR_CACHE_DIR``, ...) are not in this list: :mod:`conformance.run.caches`
replaces them whatever they say.

Pure: no framework.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path
from typing import Callable, Iterable, Mapping

# variable -> what loads from it
PATH_VARIABLES: dict[str, str] = {
    # the interpreter and the dynamic loader
    "PYTHONHOME": "the standard library", "PYTHONUSERBASE": "user site-packages (and TensorFlow's plugins)",
    "PYTHONPYCACHEPREFIX": "compiled bytecode", "PYTHONSTARTUP": "a startup script",
    "LD_LIBRARY_PATH": "shared libraries", "LD_PRELOAD": "shared libraries loaded first", "LD_AUDIT": "audit libraries",
    # the C++ compiler inductor runs
    "CPATH": "headers", "C_INCLUDE_PATH": "headers", "CPLUS_INCLUDE_PATH": "headers", "LIBRARY_PATH": "libraries",
    "GCC_EXEC_PREFIX": "compiler programs", "COMPILER_PATH": "compiler programs",
    # torch
    "TORCH_EXTENSIONS_DIR": "C++ extensions", "TORCH_HOME": "hub code and weights",
    "TORCH_CUSTOM_PYTHONPATH": "the import path of inductor's helper processes",
    "TORCHINDUCTOR_CUTLASS_DIR": "headers compiled into kernels",
    "TORCHINDUCTOR_CK_DIR": "headers compiled into kernels",
    "TORCH_COMPILE_DEBUG_DIR": "debug output",
    # JAX and XLA
    "PJRT_NAMES_AND_LIBRARY_PATHS": "PJRT plugin libraries", "TPU_LIBRARY_PATH": "the TPU runtime library",
    # TensorFlow
    "KERAS_HOME": "keras.json (settings read at import)",
    # Paddle
    "FLAGS_op_dir": "custom operator libraries", "CUSTOM_DEVICE_ROOT": "custom device libraries",
    "PADDLE_EXTENSION_DIR": "C++ extensions", "CINN_CONFIG_PATH": "CINN's configuration",
    "FLAGS_cinn_kernel_cache_save_path": "compiled CINN kernels",
    "FLAGS_trt_engine_serialized_path": "serialized TensorRT engines", "TRITON_KERNEL_CACHE_DIR": "Triton kernels",
    # MindSpore
    "MS_OP_PLUGIN_PATH": "operator plugin libraries", "MS_COMPILER_CACHE_PATH": "compiled graphs",
    "MINDSPORE_DUMP_CONFIG": "a dump configuration", "MS_CUSTOM_DEPEND_CONFIG_PATH": "custom operator dependencies",
    "ASCEND_CUSTOM_OPP_PATH": "custom operator packages", "ASCEND_OPP_PATH": "operator packages",
    "MS_OM_PATH": "offline models",
}
# Paddle reads every FLAGS_* at import: the ones that name library folders
PATH_VARIABLE_SUFFIXES = ("_dir",)
PATH_VARIABLE_PREFIXES = ("FLAGS_",)
# options inside XLA_FLAGS / TF_XLA_FLAGS that name what XLA reads: an option pointing into a
# checkout is dropped, the others kept
FLAG_VARIABLES = ("XLA_FLAGS", "TF_XLA_FLAGS")
FLAG_OPTIONS = (
    "--tf_xla_persistent_cache_directory", "--tf_xla_persistent_cache_prefix",
    "--xla_gpu_per_fusion_autotune_cache_dir", "--xla_gpu_experimental_autotuner_cache_dir",
    "--xla_gpu_load_autotune_results_from", "--xla_gpu_kernel_cache_file", "--xla_gpu_ptx_file",
    "--xla_gpu_llvm_ir_file", "--xla_gpu_cuda_data_dir", "--xla_gpu_gemm_autotuner_override_file",
    "--xla_gpu_pgle_profile_file_or_directory_path",
)


def _is_path_variable(name: str) -> bool:
    return name in PATH_VARIABLES or (name.startswith(PATH_VARIABLE_PREFIXES) and name.endswith(PATH_VARIABLE_SUFFIXES))


def installation() -> list[Path]:
    """The folders this interpreter and its packages are installed in. The frameworks are
    loaded from there whatever a variable says, so a variable naming a folder inside them
    (MindSpore adds its own ``.../site-packages/mindspore/lib/plugin/cpu`` to
    ``LD_LIBRARY_PATH`` at import) gives a pull request nothing it would not have already:
    it is passed on even when the installation lies inside the checkout (a ``.venv`` in it)."""
    paths = sysconfig.get_paths()
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, paths["purelib"], paths["platlib"]}
    return sorted(Path(os.path.abspath(f)) for f in folders if f)


def _inside(value: str, roots: list[Path], exempt: Iterable[Path] = ()) -> bool:
    """Whether an absolute path, or one of a list (``:`` or ``,`` separated, ``name=path``
    or ``name:path`` elements included), lies in one of ``roots``, as written or resolved,
    and not in one of ``exempt`` (the interpreter's installation). A relative path is the
    framework process's own business: it starts in an empty folder of its own, so a
    relative path cannot reach a checkout."""
    for part in value.replace(",", os.pathsep).replace("=", os.pathsep).split(os.pathsep):
        if not os.path.isabs(part):
            continue
        if any(_under(part, folder) for folder in exempt):
            continue
        if any(_under(part, root) for root in roots):
            return True
    return False


def _under(part: str, root: Path) -> bool:
    path, real = Path(os.path.normpath(part)), Path(os.path.realpath(part))
    real_root = Path(os.path.realpath(root))
    return path == root or root in path.parents or real == real_root or real_root in real.parents


def checked(environ: Mapping[str, str], checkouts: Iterable[Path | str],
            installed: Iterable[Path | str] | None = None) -> tuple[dict[str, str], list[str]]:
    """``environ`` without the variables (and XLA options) that point into ``checkouts``
    (outside the ``installed`` folders, by default this interpreter's :func:`installation`),
    and one line for each dropped, saying what would have been loaded from there."""
    roots = [Path(os.path.abspath(c)) for c in checkouts]
    # an installation that holds a checkout (a prefix of /usr with the checkout in /usr/src,
    # a virtual environment made at the checkout's root) exempts nothing
    folders = [Path(os.path.abspath(f)) for f in (installation() if installed is None else installed)]
    exempt = [folder for folder in folders if not any(folder == root or folder in root.parents for root in roots)]
    env = dict(environ)
    notes: list[str] = []
    if not roots:
        return env, notes
    for name in sorted(environ):
        value = environ[name]
        if _is_path_variable(name) and _inside(value, roots, exempt):
            del env[name]
            what = PATH_VARIABLES.get(name, "libraries")
            notes.append(f"{name}={value} is not passed to the framework processes: it points into the checkout, and "
                         f"the framework would load {what} from there (a pull request could put files there)")
        elif name in FLAG_VARIABLES:
            kept: list[str] = []
            dropped: list[str] = []
            for option in value.split():
                flag = option.split("=", 1)[0]
                target = option.split("=", 1)[1] if "=" in option else ""
                (dropped if flag in FLAG_OPTIONS and target and _inside(target, roots, exempt) else kept).append(option)
            if dropped:
                env[name] = " ".join(kept)
                notes.append(f"{name}: {' '.join(dropped)} is not passed to the framework processes: it points into "
                             "the checkout, and XLA would read compiled code or tuning data from there")
    return env, notes


def say(notes: list[str], warn: Callable[[str], None]) -> None:
    for note in notes:
        warn(note)

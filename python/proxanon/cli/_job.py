"""Jobs: an ``anonymize`` run written down as a TOML file, and turned back into the same
command (docs/guide/jobs.md).

A job holds the input file and its SHA-256, the output file, every ``anonymize`` option as
parsed (``[parameters]``, keyed by the option's name without its dashes), the hierarchy
files with their SHA-256 and the proxanon version. ``proxanon run`` turns it back into the
``anonymize`` command line and runs that, so both go through one parser and one
:func:`proxanon.cli.anonymize.run`. Paths in the file are relative to the job file's folder.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NoReturn

from proxanon import __version__
from proxanon.cli import _toml
from proxanon.cli._options import pairs
from proxanon.cli._status import UsageError

#: Namespace entries that are no parameter of the run: where its files are, whether to
#: overwrite them, how much it prints, and the parser's own entries. Hierarchies are
#: recorded with their hashes.
NOT_PARAMETERS = frozenset({"command", "run", "input", "table", "output", "force", "report",
                            "html", "save_job", "dask", "hierarchy", "quiet", "verbose",
                            "sensitive_output", "verbosity", "judged", "epsilon_optional",
                            "frontier", "include_original", "max_seconds",
                            "large_class"})

_HEADER = ("A proxanon job: `proxanon run {name}` repeats this anonymization byte for byte.\n"
           "Paths are relative to the folder of this file; see docs/guide/jobs.md.")


def sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def parameters(args: argparse.Namespace) -> dict[str, Any]:
    """The command's options as parsed, by option name (``best-effort``); unset ones (None)
    are left out, as a TOML file cannot hold them."""
    return {dest.replace("_", "-"): value for dest, value in vars(args).items()
            if dest not in NOT_PARAMETERS and value is not None and not callable(value)}


def hierarchy_files(args: argparse.Namespace) -> dict[str, dict[str, str]]:
    """Per column of ``--hierarchy``, the file as given and its SHA-256."""
    files = pairs(getattr(args, "hierarchy", None), "--hierarchy")
    for column, path in files.items():
        if not os.path.isfile(path):
            raise UsageError(f"hierarchy file for column {column!r} not found: {path}")
    return {column: {"path": path, "sha256": sha256(path)} for column, path in files.items()}


def provenance(args: argparse.Namespace, input_path: str) -> dict[str, Any]:
    """What a JSON report says about the run: the input's hash, the parameters and the
    hierarchy files."""
    return {"input_sha256": sha256(input_path), "parameters": parameters(args),
            "hierarchies": hierarchy_files(args)}


def toml_loads(text: str) -> dict[str, Any]:
    """Reads TOML with the standard library's ``tomllib`` (Python 3.11+), or ``tomli`` on
    Python 3.10."""
    name = "tomllib" if sys.version_info >= (3, 11) else "tomli"
    try:
        reader: Any = importlib.import_module(name)
    except ImportError:
        raise ImportError("reading a job file needs Python 3.11 or later, or the tomli "
                          "package on Python 3.10: pip install tomli") from None
    try:
        document: dict[str, Any] = reader.loads(text)
    except reader.TOMLDecodeError as exc:
        raise ValueError(str(exc)) from None
    return document


def _relative(path: str | os.PathLike[str], folder: Path) -> str:
    """``path`` relative to ``folder`` where it can be (else absolute), with ``/``."""
    absolute = Path(path).resolve()
    try:
        return Path(os.path.relpath(absolute, folder)).as_posix()
    except ValueError:  # another drive (Windows)
        return absolute.as_posix()


def _outputs(args: argparse.Namespace, folder: Path) -> dict[str, str]:
    """The table's path, and the sensitive table's where a release writes two."""
    outputs = {"path": _relative(args.output, folder)}
    if getattr(args, "sensitive_output", None) is not None:
        outputs["sensitive"] = _relative(args.sensitive_output, folder)
    return outputs


def job_text(args: argparse.Namespace, target: Path) -> str:
    """The job file of an ``anonymize`` run, for writing at ``target``."""
    if args.input == "-":
        raise UsageError("--save-job needs an input file: standard input can be neither "
                         "hashed nor read again")
    folder = target.resolve().parent
    document = {
        "proxanon": __version__, "command": "anonymize",
        "input": {"path": _relative(args.input, folder), "sha256": sha256(args.input)},
        "output": _outputs(args, folder),
        "parameters": parameters(args),
        "hierarchies": {column: {"path": _relative(entry["path"], folder),
                                 "sha256": entry["sha256"]}
                        for column, entry in hierarchy_files(args).items()},
    }
    return _toml.dumps(document, _HEADER.format(name=target.name))


def _bad(job: Path, problem: str) -> NoReturn:
    raise UsageError(f"job {job}: {problem}")


def _table(document: Mapping[str, Any], key: str, job: Path) -> Mapping[str, Any]:
    value = document.get(key, {})
    if not isinstance(value, Mapping):
        _bad(job, f"[{key}] must be a table")
    return value


def _file(entry: Any, where: str, job: Path, *, hashed: bool = True) -> tuple[Path, str]:
    """A ``path`` (resolved against the job's folder) and its recorded ``sha256``."""
    if not isinstance(entry, Mapping) or not isinstance(entry.get("path"), str) or (
            hashed and not isinstance(entry.get("sha256"), str)):
        wanted = "path and sha256" if hashed else "path"
        _bad(job, f"[{where}] needs {wanted} (strings)")
    return job.resolve().parent / entry["path"], str(entry.get("sha256", ""))


def _check_hash(path: Path, recorded: str, what: str, job: Path) -> None:
    if not path.is_file():
        _bad(job, f"{what} {path} is not found")
    found = sha256(path)
    if found != recorded:
        _bad(job, f"{what} {path} has changed since the job was saved (SHA-256 {found[:12]}..., "
                  f"the job records {recorded[:12]}...), so the run could not be repeated; "
                  "restore the file, or run proxanon anonymize on it with --save-job to make "
                  "a new job")


def _option_values(key: str, value: Any, job: Path) -> list[str]:
    """The command-line words of one parameter."""
    option = f"--{key}"
    if isinstance(value, bool):
        return [option] if value else []
    if isinstance(value, list):
        return [word for item in value for word in _option_values(key, item, job)]
    if isinstance(value, (int, float, str)):
        # One word, so that a value starting with "-" is not taken for an option.
        return [f"{option}={repr(value) if isinstance(value, float) else value}"]
    _bad(job, f"parameter {key!r} holds a {type(value).__name__}; use a string, a number, "
              "true/false or a list")


def job_argv(job: Path, *, output: str | None, any_version: bool) -> tuple[list[str], str]:
    """The ``anonymize`` command line of a job file, after checking that its input and
    hierarchy files are the ones it recorded; and a note when the version differs."""
    try:
        document = toml_loads(job.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"job {job} cannot be read: {exc.strerror}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        _bad(job, f"not a TOML file ({exc})")
    unknown = sorted(set(document) - {"proxanon", "command", "input", "output", "parameters",
                                      "hierarchies"})
    if unknown or document.get("command") != "anonymize":
        _bad(job, f"not an anonymize job (command {document.get('command')!r}"
                  + (f", unknown entries {unknown})" if unknown else ")"))
    note = ""
    saved_by = document.get("proxanon")
    if not isinstance(saved_by, str):
        _bad(job, "it does not say which proxanon version saved it (proxanon = \"...\")")
    if saved_by != __version__:
        if not any_version:
            _bad(job, f"it was saved by proxanon {saved_by}, this is proxanon {__version__}, "
                      "whose output may differ; pass --any-version to run it anyway")
        note = (f"note: the job was saved by proxanon {saved_by} and run by proxanon "
                f"{__version__}; the output may differ from the first run's")
    source, recorded = _file(document.get("input"), "input", job)
    _check_hash(source, recorded, "input", job)
    outputs = document.get("output")
    if output is None:
        output = str(_file(outputs, "output", job, hashed=False)[0])
    argv = ["anonymize", str(source), f"--output={output}"]
    if isinstance(outputs, Mapping) and isinstance(outputs.get("sensitive"), str):
        argv.append(f"--sensitive-output={job.resolve().parent / outputs['sensitive']}")
    for key, value in _table(document, "parameters", job).items():
        if key.replace("-", "_") in NOT_PARAMETERS:
            _bad(job, f"[parameters] cannot set {key!r}; it is recorded elsewhere or given to "
                      "proxanon run")
        argv += _option_values(key, value, job)
    for column, entry in _table(document, "hierarchies", job).items():
        path, recorded = _file(entry, f"hierarchies.{column}", job)
        _check_hash(path, recorded, f"hierarchy file of column {column!r}", job)
        argv.append(f"--hierarchy={column}={path}")
    return argv, note

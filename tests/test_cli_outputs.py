"""Outputs the command line refuses or follows (docs/guide/command-line.md#conventions-of-every-
subcommand): a FIFO, a device or a socket is refused with or without --force (outputs replace
a file, which would not reach a pipe's reader), a symbolic link is followed and kept, and no
file the job reads, its hierarchies included, is written over, nor the job file that
`proxanon run` reads."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from proxanon.datasets import load_adult
from tests.conftest import ARX_ADULT


def command(*extra: str) -> list[str]:
    order = "education=" + ",".join(load_adult().data["education"].cat.categories)
    return [sys.executable, "-m", "proxanon", "anonymize", str(ARX_ADULT / "adult.csv"),
            "--qi", "age,sex", "--sensitive", "education", "--order", order, "--k", "10",
            "--delta", "0", "-q", *extra]


def run(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*extra), capture_output=True, text=True, cwd=tmp_path,
                          timeout=300, check=False)


def refused(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    for needle in needles:
        assert needle in done.stderr


@pytest.mark.parametrize("force", [[], ["--force"]])
@pytest.mark.slow
def test_a_fifo_a_device_and_a_socket_are_refused(tmp_path: Path, force: list[str]) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    refused(run(tmp_path, "-o", str(fifo), *force), "pipe", "FIFO")
    assert fifo.exists() and not fifo.is_file()
    refused(run(tmp_path, "-o", os.devnull, *force), os.devnull, "character device")
    assert Path(os.devnull).is_char_device()
    where = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(where))
        refused(run(tmp_path, "-o", str(where), *force), "socket")
        assert where.is_socket()
    finally:
        server.close()


def test_a_symbolic_link_is_followed_and_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real.name)
    done = run(tmp_path, "-o", str(link), "--force")
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and os.readlink(link) == real.name
    assert real.read_text().startswith("sex;age;")


@pytest.mark.slow
def test_the_jobs_hierarchy_file_is_not_written_over(tmp_path: Path) -> None:
    tree = tmp_path / "sex.csv"
    tree.write_bytes((ARX_ADULT / "adult_hierarchy_sex.csv").read_bytes())
    before = tree.read_bytes()
    refused(run(tmp_path, "--hierarchy", f"sex={tree}", "-o", str(tree), "--force"),
            "refusing to write over the input file", str(tree))
    refused(run(tmp_path, "--hierarchy", f"sex={tree}", "-o", str(tmp_path / "out.csv"),
                "--report", str(tree), "--force"), str(tree))
    assert tree.read_bytes() == before


def test_the_job_file_is_not_written_over_by_its_run(tmp_path: Path) -> None:
    """`proxanon run JOB.toml` reads the job file: no output of the run may replace it."""
    job = tmp_path / "job.toml"
    saved = run(tmp_path, "-o", str(tmp_path / "out.csv"), "--save-job", str(job))
    assert saved.returncode == 0, saved.stderr
    before = job.read_bytes()
    for option in ("-o", "--report", "--html"):
        done = subprocess.run([sys.executable, "-m", "proxanon", "run", str(job), option,
                               str(job), "--force"], capture_output=True, text=True,
                              cwd=tmp_path, timeout=300, check=False)
        refused(done, "refusing to write over the input file", str(job))
    assert job.read_bytes() == before

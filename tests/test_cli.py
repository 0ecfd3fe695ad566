"""The installed ``proxanon`` console script, run as a user would: real CSV files in a
temporary folder, a subprocess per command, exit status and output checked.

Exit status contract (``proxanon.cli``): 0 satisfied, 1 infeasible (nothing written), 2 usage
errors and bad input, both with one ``proxanon: ...`` line on standard error and no
traceback, 3 a table that does not satisfy the principle (``--best-effort`` output, or an
``audit`` that finds violations).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import ARX_ADULT, load_uci_adult

QI = ["age", "sex", "race", "marital-status"]
SENSITIVE = ["education-num", "hours-per-week"]
PRIVACY = ["--k", "10", "--epsilon", "0.05", "--delta", "0.6"]
COLUMNS = ["--qi", ",".join(QI), "--sensitive", ",".join(SENSITIVE)]
EDUCATION_ORDER = ("Preschool,1st-4th,5th-6th,7th-8th,9th,10th,11th,12th,HS-grad,Some-college,"
                   "Assoc-voc,Assoc-acdm,Bachelors,Masters,Prof-school,Doctorate")
SAMPLE_ROWS = 3000
FULL_ROWS = 30162
TIMEOUT = 120


def _hierarchy_args() -> list[str]:
    args = []
    for column in ("sex", "race", "marital-status"):
        args += ["--hierarchy", f"{column}={ARX_ADULT / f'adult_hierarchy_{column}.csv'}"]
    return args


@pytest.fixture(scope="module")
def exe() -> str:
    path = shutil.which("proxanon")
    if path is None:
        pytest.fail("the `proxanon` console script is not on PATH; install the package with "
                    "`pip install --no-build-isolation -Cbuild-dir=build/dev -e .`")
    return path


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return load_uci_adult()


@pytest.fixture(scope="module")
def sample(adult: pd.DataFrame) -> pd.DataFrame:
    return adult.sample(n=SAMPLE_ROWS, random_state=7).reset_index(drop=True)


@pytest.fixture
def run(exe: str, tmp_path: Path):
    """Runs ``proxanon ARGS`` in tmp_path with stdout and stderr captured (not a terminal)."""
    def _run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([exe, *args], capture_output=True, text=True, cwd=tmp_path,
                              timeout=TIMEOUT, check=False)
    return _run


@pytest.fixture
def sample_csv(sample: pd.DataFrame, tmp_path: Path) -> Path:
    path = tmp_path / "in.csv"
    sample.to_csv(path, index=False)
    return path


def assert_usage_error(proc: subprocess.CompletedProcess[str], *needles: str,
                       status: int = 2) -> str:
    """Exit ``status`` (2: usage), one ``proxanon:`` line on stderr naming every needle, no
    traceback."""
    assert proc.returncode == status, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("proxanon:"), proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def assert_published(inp: pd.DataFrame, out: pd.DataFrame, qi: list[str],
                     sensitive: list[str], k: int) -> None:
    """Same rows and columns plus ``group``; non-QI columns unchanged; groups of >= k rows
    that publish one QI tuple each."""
    assert list(out.columns) == [*inp.columns, "group"]
    assert len(out) == len(inp)
    for column in inp.columns:
        if column not in qi:
            pd.testing.assert_series_equal(out[column], inp[column], check_dtype=False,
                                           obj=column)
    for column in sensitive:
        assert (out[column].to_numpy() == inp[column].to_numpy()).all(), column
    sizes = out.groupby("group").size()
    assert sizes.min() >= k
    assert (out.groupby("group")[qi].nunique() == 1).all().all()


# --- anonymize and audit: the happy paths ------------------------------------------------


@pytest.mark.slow
def test_anonymize_then_audit(run, sample: pd.DataFrame, sample_csv: Path,
                              tmp_path: Path) -> None:
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", *COLUMNS, *PRIVACY,
               *_hierarchy_args())
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "proxanon anonymization: satisfied" in proc.stdout
    assert "NOT satisfied" not in proc.stdout
    assert f"wrote {SAMPLE_ROWS:,} rows to out.csv" in proc.stdout
    assert proc.stderr == ""  # captured, so not a terminal: no progress lines

    out = pd.read_csv(tmp_path / "out.csv", skipinitialspace=True)
    assert_published(sample, out, QI, SENSITIVE, k=10)
    # The hierarchies were used: their values (or roots) are what the table publishes.
    assert set(out["sex"]) <= {"Male", "Female", "*"}
    assert set(out["marital-status"]) <= {
        *sample["marital-status"], "spouse present", "spouse not present", "*"}

    check = run("audit", "out.csv", *COLUMNS, *PRIVACY)
    assert check.returncode == 0, (check.stdout, check.stderr)
    assert "satisfied" in check.stdout
    assert "NOT satisfied" not in check.stdout
    assert check.stderr == ""


@pytest.mark.parametrize("give_sep", [True, False], ids=["--sep", "sniffed"])
@pytest.mark.slow
def test_semicolon_separated_input_keeps_its_separator(run, sample: pd.DataFrame,
                                                       tmp_path: Path, give_sep: bool) -> None:
    (tmp_path / "in.csv").write_text(sample.to_csv(sep=";", index=False), encoding="utf-8")
    sep = ["--sep", ";"] if give_sep else []
    proc = run("anonymize", "in.csv", "-o", "out.csv", *sep, *COLUMNS, *PRIVACY,
               *_hierarchy_args())
    assert proc.returncode == 0, proc.stderr
    assert "satisfied" in proc.stdout and "wrote" in proc.stdout

    header = (tmp_path / "out.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header == ";".join([*sample.columns, "group"])
    out = pd.read_csv(tmp_path / "out.csv", sep=";")
    assert_published(sample, out, QI, SENSITIVE, k=10)

    check = run("audit", "out.csv", *sep, *COLUMNS, *PRIVACY)
    assert check.returncode == 0, (check.stdout, check.stderr)


@pytest.mark.slow
def test_full_adult(run, adult: pd.DataFrame, tmp_path: Path) -> None:
    assert len(adult) == FULL_ROWS
    adult.to_csv(tmp_path / "adult.csv", index=False)
    proc = run("anonymize", "adult.csv", "-o", "out.csv", *COLUMNS, *PRIVACY,
               *_hierarchy_args())
    assert proc.returncode == 0, proc.stderr
    assert "proxanon anonymization: satisfied" in proc.stdout
    assert f"wrote {FULL_ROWS:,} rows to out.csv" in proc.stdout
    assert proc.stderr == ""  # quiet when piped, also on the larger run

    out = pd.read_csv(tmp_path / "out.csv", skipinitialspace=True)
    assert_published(adult, out, QI, SENSITIVE, k=10)

    check = run("audit", "out.csv", *COLUMNS, *PRIVACY)
    assert check.returncode == 0, (check.stdout, check.stderr)
    assert "satisfied" in check.stdout and "NOT satisfied" not in check.stdout


def test_audit_of_raw_input_finds_violations(run, sample_csv: Path) -> None:
    # Every row is its own QI combination or close to it: groups far below k, risks of 1.
    proc = run("audit", sample_csv.name, *COLUMNS, *PRIVACY)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "NOT satisfied" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_a_reader_leaving_early_keeps_the_verdict(exe: str, sample_csv: Path,
                                                 tmp_path: Path) -> None:
    # `proxanon audit t.csv | head -1` in a script: the pipe closes before the report is
    # printed; the exit status must still say the table does not satisfy the principle.
    proc = subprocess.Popen([exe, "audit", sample_csv.name, *COLUMNS, *PRIVACY], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    status = proc.wait(timeout=TIMEOUT)
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    assert status == 3, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr, stderr


@pytest.mark.parametrize("where", ["ascii", "full"])
@pytest.mark.slow
def test_a_summary_standard_output_cannot_take_keeps_the_verdict(exe: str, sample_csv: Path,
                                                                 tmp_path: Path,
                                                                 where: str) -> None:
    # A console whose encoding lacks epsilon, or a full disk: status 3, no traceback.
    import os

    if where == "full" and not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    env = {**os.environ, "PYTHONIOENCODING": "ascii"} if where == "ascii" else None
    table = pd.read_csv(sample_csv)
    table["sex"] = table["sex"].str.replace("Male", "Mâle")  # printed among the worst groups
    table.to_csv(tmp_path / "accents.csv", index=False)
    with open(os.devnull if where == "ascii" else "/dev/full", "w") as sink:
        proc = subprocess.run([exe, "audit", "accents.csv", *COLUMNS, *PRIVACY], cwd=tmp_path,
                              stdout=sink, stderr=subprocess.PIPE, text=True, env=env,
                              timeout=TIMEOUT, check=False)
    assert proc.returncode == 3, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) <= 1, proc.stderr


def test_text_sensitive_column_with_order(run, sample: pd.DataFrame, sample_csv: Path,
                                          tmp_path: Path) -> None:
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", "--qi", "age,sex",
               "--sensitive", "education", "--order", f"education={EDUCATION_ORDER}",
               *PRIVACY, *_hierarchy_args()[:2])
    assert proc.returncode == 0, proc.stderr
    assert "satisfied" in proc.stdout and "NOT satisfied" not in proc.stdout
    out = pd.read_csv(tmp_path / "out.csv", skipinitialspace=True)
    assert_published(sample, out, ["age", "sex"], ["education"], k=10)

    check = run("audit", "out.csv", "--qi", "age,sex", "--sensitive", "education",
                "--order", f"education={EDUCATION_ORDER}", *PRIVACY)
    assert check.returncode == 0, (check.stdout, check.stderr)


def test_force_overwrites_existing_output(run, sample_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    out.write_text("old contents\n", encoding="utf-8")
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", "--force", *COLUMNS, *PRIVACY,
               *_hierarchy_args())
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(out)
    assert len(table) == SAMPLE_ROWS and "group" in table.columns


@pytest.mark.slow
def test_best_effort_writes_infeasible_table(run, sample: pd.DataFrame, sample_csv: Path,
                                             tmp_path: Path) -> None:
    args = [*COLUMNS, "--k", "10", "--epsilon", "0.5", "--delta", "1.0"]
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", "--best-effort", *args,
               *_hierarchy_args())
    assert proc.returncode == 3, proc.stderr  # written, but not satisfied
    assert "NOT satisfied" in proc.stdout
    assert "wrote" in proc.stdout
    out = pd.read_csv(tmp_path / "out.csv", skipinitialspace=True)
    assert list(out.columns) == [*sample.columns, "group"] and len(out) == SAMPLE_ROWS
    # The independent audit agrees the published table violates the parameters.
    check = run("audit", "out.csv", *args)
    assert check.returncode == 3 and "NOT satisfied" in check.stdout


# --- demo ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_demo_with_output(run, tmp_path: Path) -> None:
    proc = run("demo", "-o", "demo.csv")
    assert proc.returncode == 0, proc.stderr
    assert "proxanon anonymization: satisfied" in proc.stdout
    assert "demo.csv" in proc.stdout
    assert proc.stderr == ""
    table = pd.read_csv(tmp_path / "demo.csv", sep=";")
    assert len(table) == FULL_ROWS
    assert "group" in table.columns

    again = run("demo", "-o", "demo.csv")  # exists now: refused without --force
    assert_usage_error(again, "--force")


def test_demo_without_output_prints_an_existing_path(run) -> None:
    proc = run("demo")
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    assert " to " in last, proc.stdout
    path = Path(last.rsplit(" to ", 1)[1].strip())
    try:
        assert path.is_absolute() and path.is_file(), path
        assert len(pd.read_csv(path, sep=";")) == FULL_ROWS
    finally:
        if path.is_file() and path.parent.name.startswith("proxanon-demo-"):
            shutil.rmtree(path.parent)


# --- help -----------------------------------------------------------------------------------


def test_python_dash_m_help(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "proxanon", "--help"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=TIMEOUT, check=False)
    assert proc.returncode == 0, proc.stderr
    for command in ("anonymize", "audit", "demo"):
        assert command in proc.stdout


@pytest.mark.slow
def test_subcommand_help_and_missing_subcommand(run) -> None:
    proc = run("anonymize", "--help")
    assert proc.returncode == 0
    for option in ("--qi", "--sensitive", "--hierarchy", "--order", "--best-effort", "--force"):
        assert option in proc.stdout
    bare = run()
    assert bare.returncode == 2 and "Traceback" not in bare.stderr and bare.stderr


# --- error paths: exit 2, one line on stderr, no traceback, no output file ----------------


@pytest.mark.slow
def test_missing_input_file(run, tmp_path: Path) -> None:
    assert_usage_error(run("anonymize", "nope.csv", "-o", "out.csv", *COLUMNS, *PRIVACY),
                       "nope.csv")
    assert not (tmp_path / "out.csv").exists()
    assert_usage_error(run("audit", "nope.csv", *COLUMNS, *PRIVACY), "nope.csv")


@pytest.mark.slow
def test_missing_qi_column(run, sample_csv: Path, tmp_path: Path) -> None:
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", "--qi", "age,no-such-column",
               "--sensitive", "education-num", *PRIVACY)
    assert_usage_error(proc, "no-such-column")
    assert not (tmp_path / "out.csv").exists()
    assert_usage_error(run("audit", sample_csv.name, "--qi", "age,no-such-column",
                           "--sensitive", "education-num", *PRIVACY), "no-such-column")


@pytest.mark.parametrize(("option", "value"), [("--k", "ten"), ("--k", "2.5"),
                                               ("--epsilon", "abc"), ("--delta", "half")])
@pytest.mark.slow
def test_bad_number_is_an_argparse_error(run, sample_csv: Path, tmp_path: Path, option: str,
                                         value: str) -> None:
    numbers = {"--k": "10", "--epsilon": "0.05", "--delta": "0.6", option: value}
    args = [part for pair in numbers.items() for part in pair]
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", *COLUMNS, *args)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("proxanon anonymize: error:") and option in last, proc.stderr
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.slow
def test_delta_out_of_range(run, sample_csv: Path, tmp_path: Path) -> None:
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", *COLUMNS, "--k", "10",
               "--epsilon", "0.05", "--delta", "1.5")
    assert_usage_error(proc, "delta", "1.5")
    assert not (tmp_path / "out.csv").exists()
    assert_usage_error(run("audit", sample_csv.name, *COLUMNS, "--k", "10", "--epsilon",
                           "0.05", "--delta", "1.5"), "delta")


def test_existing_output_needs_force(run, sample_csv: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    out.write_bytes(b"keep me\n")
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", *COLUMNS, *PRIVACY)
    assert_usage_error(proc, "out.csv", "--force")
    assert out.read_bytes() == b"keep me\n"


@pytest.mark.parametrize("spelling", ["same", "absolute", "dotted"])
@pytest.mark.slow
def test_output_over_input_refused_even_with_force(run, sample_csv: Path, tmp_path: Path,
                                                   spelling: str) -> None:
    before = sample_csv.read_bytes()
    out = {"same": sample_csv.name, "absolute": str(sample_csv),
           "dotted": f"./{sample_csv.name}"}[spelling]
    proc = run("anonymize", sample_csv.name, "-o", out, "--force", *COLUMNS, *PRIVACY,
               *_hierarchy_args())
    assert_usage_error(proc, "input")
    assert sample_csv.read_bytes() == before


@pytest.mark.slow
def test_output_is_a_folder(run, sample_csv: Path, tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    proc = run("anonymize", sample_csv.name, "-o", "folder", "--force", *COLUMNS, *PRIVACY)
    assert_usage_error(proc, "folder")
    assert_usage_error(run("anonymize", sample_csv.name, "-o", "nowhere/out.csv", *COLUMNS,
                           *PRIVACY), "nowhere")


@pytest.mark.slow
def test_hierarchy_missing_data_values(run, sample_csv: Path, tmp_path: Path) -> None:
    (tmp_path / "sex.csv").write_text("Male;*\n", encoding="utf-8")
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", *COLUMNS, *PRIVACY,
               "--hierarchy", "sex=sex.csv")
    assert_usage_error(proc, "sex", "Female")
    assert not (tmp_path / "out.csv").exists()
    # A real ARX file for another column: none of the data's values is in it.
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", *COLUMNS, *PRIVACY,
               "--hierarchy", f"sex={ARX_ADULT / 'adult_hierarchy_race.csv'}")
    assert_usage_error(proc, "sex", "Male", "Female")


def test_nonexistent_hierarchy_file(run, sample_csv: Path, tmp_path: Path) -> None:
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", *COLUMNS, *PRIVACY,
               "--hierarchy", "sex=no-such-hierarchy.csv")
    assert_usage_error(proc, "no-such-hierarchy.csv")
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("value", ["sex", "sex=", "=sex.csv"])
@pytest.mark.slow
def test_hierarchy_needs_column_equals_file(run, sample_csv: Path, value: str) -> None:
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", *COLUMNS, *PRIVACY,
               "--hierarchy", value)
    assert_usage_error(proc, "--hierarchy")


def test_infeasible_parameters(run, sample_csv: Path, tmp_path: Path) -> None:
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", *COLUMNS, "--k", "10",
               "--epsilon", "0.5", "--delta", "1.0", *_hierarchy_args())
    line = assert_usage_error(proc, "infeasible", "--best-effort", status=1)
    assert "epsilon" in line and "delta" in line  # advice on which parameters to change
    assert "on_infeasible" not in line  # the Python keyword means nothing on the command line
    assert proc.stdout == ""
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.slow
def test_text_sensitive_column_needs_order(run, sample_csv: Path, tmp_path: Path) -> None:
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", "--qi", "age,sex",
               "--sensitive", "education", *PRIVACY)
    assert_usage_error(proc, "education", "--order")
    assert not (tmp_path / "out.csv").exists()
    assert_usage_error(run("audit", sample_csv.name, "--qi", "age,sex", "--sensitive",
                           "education", *PRIVACY), "--order")


def test_order_missing_a_level(run, sample_csv: Path) -> None:
    partial = EDUCATION_ORDER.replace(",Doctorate", "")
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", "--qi", "age,sex",
               "--sensitive", "education", "--order", f"education={partial}", *PRIVACY)
    assert_usage_error(proc, "--order", "Doctorate")


def test_a_qi_number_a_class_leaves_whole_is_published_as_written(run, tmp_path: Path) -> None:
    """1.50 stays 1.50 (not 1.5) and 2134.0 stays 2134.0 where every row of the class writes
    it so; where a class's rows write one number two ways, or hold several, the library's
    label. (A column written with leading zeros, 02134, is text: see test_text_columns.)"""
    (tmp_path / "in.csv").write_text(
        "zip,inc\n2134.0,1\n2134.0,5\n2134.0,9\n2139,2\n2139,6\n2140,10\n"
        "1.50,3\n1.50,7\n1.50,11\n2.0,4\n2,8\n2.00,12\n")
    proc = run("anonymize", "in.csv", "-o", "out.csv", "--qi", "zip", "--sensitive", "inc",
               "--k", "3", "--epsilon", "0.1", "--delta", "0.5")
    assert proc.returncode == 0, proc.stderr
    given = pd.read_csv(tmp_path / "in.csv", dtype=str)
    out = pd.read_csv(tmp_path / "out.csv", dtype=str)
    assert out["inc"].tolist() == given["inc"].tolist()  # every row, in order
    whole = 0
    for _, rows in out.groupby("group").groups.items():
        texts, published = given.loc[rows, "zip"], set(out.loc[rows, "zip"])
        numbers = set(pd.to_numeric(texts))
        if texts.nunique() == 1:
            assert published == {texts.iloc[0]}  # as written
            whole += 1
        elif len(numbers) == 1:
            assert published == {np.format_float_positional(numbers.pop(), trim="-")}
        else:
            assert len(published) == 1 and published.pop().startswith("[")
    assert whole >= 1


@pytest.mark.slow
def test_a_sensitive_column_of_dates_is_compared_as_dates(run, tmp_path: Path) -> None:
    """ISO dates (or a column named in --dates) are a sensitive scale, like the library's
    date columns; the output keeps the cells as written."""
    text = ("q,d\n1,2020-01-01\n1,2020-06-01\n1,2021-01-01\n"
            "2,2020-02-01\n2,2020-07-01\n2,2021-02-01\n")
    (tmp_path / "in.csv").write_text(text)
    for extra in ([], ["--dates", "d"]):
        proc = run("anonymize", "in.csv", "-o", "out.csv", "--force", "--qi", "q",
                   "--sensitive", "d", "--k", "3", "--epsilon", "0.1", "--delta", "0.5", *extra)
        assert proc.returncode == 0, proc.stderr
        out = pd.read_csv(tmp_path / "out.csv", dtype=str)
        assert out["d"].tolist() == pd.read_csv(tmp_path / "in.csv", dtype=str)["d"].tolist()
    proc = run("audit", "out.csv", "--qi", "q", "--sensitive", "d", "--k", "3",
               "--epsilon", "0.1", "--delta", "0.5")
    assert proc.returncode == 0, proc.stderr + proc.stdout


@pytest.mark.parametrize("mark", ["NaN", "nan", "NA", "null", "?"])
@pytest.mark.slow
def test_a_missing_value_mark_in_a_sensitive_column_is_named_as_missing(run, tmp_path: Path,
                                                                       mark: str) -> None:
    (tmp_path / "in.csv").write_text(f"q,s\n1,1\n1,{mark}\n1,3\n2,4\n2,5\n2,6\n")
    proc = run("anonymize", "in.csv", "-o", "out.csv", "--qi", "q", "--sensitive", "s",
               "--k", "3", "--epsilon", "0.1", "--delta", "0.5")
    assert_usage_error(proc, "'s' has a missing value", repr(mark), "line 3", "--missing drop")


@pytest.mark.parametrize("mark", ["NaN", "-nan", "NA", "?"])
@pytest.mark.slow
def test_a_missing_value_mark_in_a_qi_column_of_numbers_is_missing_not_text(
        run, tmp_path: Path, mark: str) -> None:
    """One mark would make the column text and publish every row as '*': it is named as
    missing, and --missing drop leaves its row out with the column still numbers."""
    rows = [f"{i},{i % 5},{i}" for i in range(30)]
    rows[4] = f"{mark},3,4"  # file line 6
    (tmp_path / "in.csv").write_text("a,b,c\n" + "\n".join(rows) + "\n")
    args = ("--qi", "a", "--sensitive", "b", "--k", "5", "--epsilon", "0.1", "--delta", "0.5")
    proc = run("anonymize", "in.csv", "-o", "out.csv", *args)
    assert_usage_error(proc, "'a' has a missing value", repr(mark), "line 6", "--missing drop")
    proc = run("anonymize", "in.csv", "-o", "out.csv", *args, "--missing", "drop")
    assert proc.returncode == 0, proc.stderr
    assert "left out 1 row(s)" in proc.stdout
    out = pd.read_csv(tmp_path / "out.csv", dtype=str)
    assert len(out) == 29 and "*" not in set(out["a"])  # intervals of numbers, not text


def test_order_repeating_a_level(run, sample_csv: Path) -> None:
    repeated = EDUCATION_ORDER + ",Doctorate"
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", "--qi", "age,sex",
               "--sensitive", "education", "--order", f"education={repeated}", *PRIVACY)
    assert_usage_error(proc, "--order education", "'Doctorate' given more than once")


@pytest.mark.parametrize(("content", "needle"), [
    (b"", "in.csv"),
    (b"a,b,c\n1,2,3\n1,2,3,4\n", "in.csv"),
    (b"\xff\xfea,b\n1,2\n", "in.csv"),
])
@pytest.mark.slow
def test_unreadable_csv(run, tmp_path: Path, content: bytes, needle: str) -> None:
    (tmp_path / "in.csv").write_bytes(content)
    assert_usage_error(run("audit", "in.csv", "--qi", "a", "--sensitive", "b", "--k", "1",
                           "--epsilon", "0.1", "--delta", "0.5"), needle)


def run_on_a_terminal(args: list[str], cwd: Path,
                      on_output: Callable[[bytes, subprocess.Popen[bytes]], None] | None = None,
                      timeout: float = 300) -> tuple[int, bytes]:
    """Runs ``proxanon ARGS`` with standard error on a pseudo-terminal and progress shown at
    once; ``on_output(all output so far, process)`` is called as output arrives. Returns the
    exit status and everything written to the terminal."""
    import os
    import pty
    import select
    import time

    exe = shutil.which("proxanon")
    assert exe is not None
    primary, secondary = pty.openpty()
    proc = subprocess.Popen([exe, *args], stdout=subprocess.PIPE, stderr=secondary, cwd=cwd,
                            env=dict(os.environ, PROXANON_PROGRESS_DELAY="0"))
    os.close(secondary)
    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([primary], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # the other side closed: the process is gone
                break
            if not chunk:
                break
            seen += chunk
            if on_output is not None:
                on_output(seen, proc)
        elif proc.poll() is not None:
            break
    proc.communicate(timeout=timeout)
    os.close(primary)
    return proc.returncode, seen


def test_progress_shows_on_a_terminal(tmp_path, sample_csv):
    """With standard error on a terminal (a pseudo-terminal here), the progress bar shows
    the stages with their elapsed time."""
    status, seen = run_on_a_terminal(
        ["anonymize", str(sample_csv), "--qi", "age,sex,race,marital-status",
         "--sensitive", "education-num,hours-per-week", "--k", "10", "--epsilon", "0.05",
         "--delta", "0.6", "-o", str(tmp_path / "tty.csv")], tmp_path)
    assert status == 0
    assert b"proxanon: prepare (00:0" in seen and b"elapsed)" in seen


@pytest.mark.slow
def test_suppress_leaves_rows_out_within_the_budget(run, tmp_path, sample_csv, sample):
    """Infeasible for the repair alone; --suppress leaves a few rows out and the result audits."""
    out = tmp_path / "suppressed.csv"
    args = ["--qi", "age,sex,race,marital-status", "--sensitive",
            "education-num,hours-per-week", "--k", "10", "--epsilon", "0.1", "--delta", "0.6"]
    proc = run("anonymize", str(sample_csv), *args, "--suppress", "0.1", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "suppressed" in proc.stdout
    published = pd.read_csv(out)
    assert 0.9 * len(sample) <= len(published) < len(sample)
    check = run("audit", str(out), *args)
    assert check.returncode == 0, check.stdout
    too_small = run("anonymize", str(sample_csv), *args, "--suppress", "0.0001",
                    "-o", str(tmp_path / "no.csv"))
    assert too_small.returncode == 1
    assert "--suppress" in too_small.stderr and "max_suppression" not in too_small.stderr
    assert not (tmp_path / "no.csv").exists()


def test_text_sensitive_column_with_a_hierarchy_uses_taxonomy_distance(run, tmp_path, sample):
    """A text sensitive column with --hierarchy needs no --order: taxonomy distance."""
    path = tmp_path / "occupations.csv"
    sample.to_csv(path, index=False)
    hierarchy = ARX_ADULT / "adult_hierarchy_occupation.csv"
    out = tmp_path / "occupations-anon.csv"
    proc = run("anonymize", str(path), "--qi", "age,sex", "--sensitive", "occupation",
               "--hierarchy", f"occupation={hierarchy}", "--k", "10", "--epsilon", "0",
               "--delta", "0.7", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "taxonomy" in proc.stdout
    published = pd.read_csv(out)
    for _, members in published.groupby("group"):
        t = int(np.floor(0.3 * (len(members) - 1) + 1e-9))
        assert members["occupation"].value_counts().max() <= t + 1


def test_an_unknown_metric_is_refused_with_the_choices(run, sample_csv: Path) -> None:
    proc = run("anonymize", sample_csv.name, "-o", "out.csv", "--qi", "age,sex",
               "--sensitive", "education", "--k", "5", "--epsilon", "0.1", "--delta", "0.5",
               "--metric", "l3")
    assert proc.returncode == 2
    assert "'l3'" in proc.stderr and "min_component" in proc.stderr


@pytest.mark.slow
def test_audit_measures_prints_and_reports_the_measures_of_the_published_classes(
        run, sample_csv: Path, tmp_path: Path) -> None:
    import json

    from proxanon import privacy_measures

    out = tmp_path / "anon.csv"
    privacy = ["--k", "5", "--epsilon", "0.05", "--delta", "0.6"]
    qi, sens = "age,sex,race", "education-num,hours-per-week"
    assert run("anonymize", str(sample_csv), "--qi", qi, "--sensitive", sens, *privacy,
               "-o", str(out)).returncode == 0
    proc = run("audit", str(out), "--qi", qi, "--sensitive", sens, *privacy, "--measures",
               "--epsilon-m", "2", "--report", "audit.json")
    assert proc.returncode == 0, proc.stderr
    published = pd.read_csv(out)
    expected = privacy_measures(published.astype({c: str for c in qi.split(",")}),
                                quasi_identifiers=qi.split(","), sensitive=sens.split(","),
                                epsilon_m=2.0)
    assert f"  k-anonymity          : {expected.k_anonymity}\n" in proc.stdout
    assert (f"distinct {expected.l_diversity}, entropy {expected.entropy_l_diversity}"
            in proc.stdout)
    assert f"  t-closeness          : {expected.t_closeness:.4f}\n" in proc.stdout
    assert f"m {expected.epsilon_m_anonymity} at epsilon 2" in proc.stdout
    saved = json.loads((tmp_path / "audit.json").read_text())["measures"]
    assert saved["k_anonymity"] == expected.k_anonymity >= 5
    assert saved["t_closeness"] == pytest.approx(expected.t_closeness)
    assert saved["records_at_risk"] == expected.records_at_risk

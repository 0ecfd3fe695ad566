"""The disclosure-risk report (proxanon.html_report): its numbers are audit's and evaluate's,
it needs nothing outside the file, it renders in a browser, and big tables stay small."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from html.parser import HTMLParser
from typing import Any

import numpy as np
import pandas as pd
import pytest

import proxanon
from proxanon import evaluate
from proxanon.audit import audit
from proxanon.html_report import (
    MAX_CLASSES,
    anonymization_html,
    audit_html,
    lookup,
    read_numbers,
    write_html,
)

QI = ["age", "sex", "race"]
SENSITIVE = ["education-num", "hours-per-week"]
PRIVACY = {"k": 10, "epsilon": 0.05, "delta": 0.6}
QUERIES = {"qd": 1, "s": 0.2, "n_queries": 100, "seed": 3}


class _Page(HTMLParser):
    """Collects the tags (with attributes) and the figures bound to the numbers block."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.figures: list[tuple[list[Any], Any, str]] = []
        self._open: list[tuple[list[Any], Any]] = []
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.tags.append((tag, values))
        if "data-key" in values:
            self._open.append((json.loads(values["data-key"] or ""),
                               json.loads(values["data-value"] or "")))
            self._text = []

    def handle_data(self, data: str) -> None:
        self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "span" and self._open:
            key, value = self._open.pop()
            self.figures.append((key, value, "".join(self._text)))


def _parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    return page


@pytest.fixture(scope="module")
def sample(uci_adult: pd.DataFrame) -> pd.DataFrame:
    return uci_adult.head(3000).reset_index(drop=True)


@pytest.fixture(scope="module")
def result(sample: pd.DataFrame) -> proxanon.Anonymization:
    return proxanon.anonymize(sample, quasi_identifiers=QI, sensitive=SENSITIVE, **PRIVACY)


@pytest.fixture(scope="module")
def page(result: proxanon.Anonymization, sample: pd.DataFrame) -> str:
    return anonymization_html(result, sample, queries=QUERIES)


def _brute_reidentification(groups: np.ndarray, sens: pd.DataFrame, k: int) -> dict[str, Any]:
    """The re-identification measures by hand, one class at a time."""
    sizes, distinct = {}, {}
    for g in np.unique(groups[groups >= 0]):
        rows = sens[groups == g]
        sizes[g] = len(rows)
        distinct[g] = len({tuple(r) for r in rows.itertuples(index=False)})
    total = sum(sizes.values())
    return {"k_anonymity": min(sizes.values()),
            "prosecutor_risk": 1.0 / min(sizes.values()),
            "small_class_share_2k": sum(s for s in sizes.values() if s < 2 * k) / total,
            "l_diversity": min(distinct.values())}


def test_anonymization_numbers_equal_audit_and_evaluate(result, sample, page):
    numbers = read_numbers(page)
    check = audit(result.table, groups="group", sensitive=SENSITIVE, **PRIVACY)
    assert numbers["audit"] == {**check.summary(), "n_suppressed_rows": 0}
    assert numbers["parameters"]["k"] == PRIVACY["k"]
    assert numbers["parameters"]["sensitive"] == SENSITIVE
    utility = numbers["utility"]
    assert utility["gcp"] == evaluate.gcp(sample, result)
    assert utility["loss"] == evaluate.loss(sample, result)
    assert utility["ncp"] == evaluate.ncp(sample, result)
    assert utility["discernibility"] == evaluate.discernibility(result)
    workload = evaluate.count_query_error(sample, result, **QUERIES)
    assert utility["count_query_error"] == workload.mean_relative_error
    brute = _brute_reidentification(result.groups, sample[SENSITIVE], PRIVACY["k"])
    assert numbers["reidentification"] == pytest.approx(brute)
    worst = numbers["worst_classes"]
    assert len(worst) == min(MAX_CLASSES, check.n_groups)
    assert worst[0]["risk"] == check.max_risk
    assert set(numbers["seconds"]) >= {"total", "audit", "evaluate", "report"}


def test_every_figure_shown_is_bound_to_its_number(page):
    numbers = read_numbers(page)
    figures = _parse(page).figures
    keys = {tuple(key) for key, _, _ in figures}
    for needed in [("audit", "max_risk"), ("audit", "satisfied"), ("utility", "gcp"),
                   ("reidentification", "l_diversity"), ("utility", "count_query_error"),
                   ("scaling", 1, "epsilon_units"), ("worst_classes", 0, "risk")]:
        assert needed in keys
    for key, value, text in figures:
        assert value == lookup(numbers, key), key
        if isinstance(value, float) and key[0] == "seconds":
            # Timings rounded: hundredths below 10 s.
            assert text == "<0.01" or float(text.replace(",", "")) == pytest.approx(
                value, abs=0.05), (key, text)
        elif isinstance(value, float) and text.endswith("%"):
            # Shares as percentages, to a tenth of a percent.
            assert key[-1] in {"vulnerability", "small_class_share_2k"}, key
            assert text == "<0.1%" or float(text[:-1]) / 100 == pytest.approx(
                value, abs=5e-4), (key, text)
        elif isinstance(value, float):
            assert float(text.replace(",", "").split()[0]) == pytest.approx(
                value, rel=1e-3, abs=5e-5), (key, text)


def test_shares_are_percentages_timings_rounded_classes_named_by_group(page):
    figures = {tuple(key): text for key, _, text in _parse(page).figures}
    for key in [("audit", "vulnerability"), ("reidentification", "small_class_share_2k")]:
        assert re.fullmatch(r"<0\.1%|\d+\.\d%", figures[key]), (key, figures[key])
    timings = [text for key, text in figures.items() if key[0] == "seconds"]
    assert timings and all(re.fullmatch(r"<0\.01|\d\.\d\d|\d\d\.\d|[\d,]+", t)
                           for t in timings), timings
    # The worst classes are named by their group, as proxanon audit names them.
    assert '<table class="worst"><tr><th>group</th>' in page


def test_the_page_references_nothing_outside_itself(page):
    tags = _parse(page).tags
    assert {tag for tag, _ in tags}.isdisjoint({"link", "iframe", "object", "embed"})
    for tag, attrs in tags:
        for name in ("src", "href", "srcset", "action", "poster", "data"):
            value = attrs.get(name)
            assert value is None or value.startswith(("data:", "#")), (tag, name, value)
        if tag == "script":
            assert attrs.get("type") == "application/json" and "src" not in attrs
    assert sum(tag == "img" for tag, _ in tags) >= 5
    outside = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)
    assert not re.search(r"https?:|//|url\(|@import", outside)


SCALES = [
    # (metric, weights, sensitive_ranges, the range epsilon is read against)
    *[(metric, [0.25, 0.75], None, 80_000.0) for metric in ("l1", "l2", "linf")],
    *[(metric, [0.25, 0.75], {"income": (0.0, 200_000.0)}, 200_000.0)
      for metric in ("l1", "l2", "linf")],
    ("variational", None, None, 1.0),  # probabilities as given: no rescaling
]


@pytest.mark.parametrize(("metric", "weights", "ranges", "span"), SCALES)
@pytest.mark.slow
def test_epsilon_in_the_column_units_is_the_neighbour_distance(metric, weights, ranges, span):
    """A difference of exactly epsilon-in-units in one column (the others equal) makes
    neighbours; a little more does not, for every weighted metric, whatever scale the check
    used (the column's own range, a given one, or the variational distance's [0, 1])."""
    income = [0.0, 0.0, 80_000.0, 40_000.0] if metric != "variational" else [0.0, 0.0, 0.5, 0.3]
    base = pd.DataFrame({"q": ["a"] * 4, "income": income, "score": [0.5, 0.5, 0.0, 1.0]})
    options = {"quasi_identifiers": ["q"], "sensitive": ["income", "score"], "k": 1,
               "epsilon": 0.1, "delta": 0.0, "metric": metric, "weights": weights,
               "sensitive_ranges": ranges}
    check = audit(base, **options)
    low, high = check.scales["income"]
    assert high - low == span
    scaling = read_numbers(audit_html(check, base, quasi_identifiers=["q"],
                                      sensitive=["income", "score"]))["scaling"]
    window = {entry["column"]: entry["epsilon_units"] for entry in scaling}
    assert window["income"] > 0
    for factor, neighbours in ((1.0, True), (1.01, False)):
        table = base.copy()
        table.loc[1, "income"] = factor * window["income"]  # rows 0 and 1: income apart
        counts = audit(table, **options).neighbour_counts
        assert bool(counts[0] >= 1) == neighbours, (metric, factor)


def test_dates_read_epsilon_in_days_and_taxonomy_columns_have_no_range():
    days = np.array([0.0, 0.0, 500.0, 1000.0])
    base = pd.DataFrame({"q": ["a"] * 4, "when": pd.Timestamp("2020-01-01")
                         + pd.to_timedelta(days, "D"), "inc": [10, 20, 30, 40]})
    tree = proxanon.Hierarchy.from_dict({"*": {"low": [10, 20], "high": [30, 40]}})
    check = audit(base, quasi_identifiers=["q"], sensitive=["when", "inc"], k=1, epsilon=0.1,
                  delta=0.0, hierarchies={"inc": tree})
    assert check.taxonomies == ("inc",) and check.scales == {}
    scaling = {entry["column"]: entry for entry in read_numbers(
        audit_html(check, base, quasi_identifiers=["q"], sensitive=["when", "inc"]))["scaling"]}
    assert scaling["inc"]["kind"] == "taxonomy" and scaling["inc"]["epsilon_units"] is None
    assert scaling["when"]["kind"] == "date"

    options = dict(quasi_identifiers=["q"], sensitive=["when"], k=1, epsilon=0.1, delta=0.0)
    # A row left out (group -1) is neither audited nor part of the span.
    far = pd.concat([base, base.iloc[:1].assign(when=pd.Timestamp("1900-01-01"))],
                    ignore_index=True)
    groups = np.r_[np.zeros(4, dtype=np.int64), -1]
    left_out = audit(far, groups, sensitive=["when"], k=1, epsilon=0.1, delta=0.0)
    scaling = read_numbers(audit_html(left_out, far, sensitive=["when"],
                                      groups=groups))["scaling"]
    assert scaling[0]["epsilon_units"] == pytest.approx(100.0)
    check = audit(base, **options)
    scaling = {entry["column"]: entry for entry in read_numbers(
        audit_html(check, base, quasi_identifiers=["q"], sensitive=["when"]))["scaling"]}
    window = scaling["when"]["epsilon_units"]  # 0.1 of 1000 days
    assert scaling["when"]["unit"] == "days" and window == pytest.approx(100.0)
    for factor, neighbours in ((1.0, True), (1.01, False)):
        table = base.copy()
        table.loc[1, "when"] = table.loc[0, "when"] + pd.Timedelta(days=factor * window)
        assert bool(audit(table, **options).neighbour_counts[0] >= 1) == neighbours, factor


def _published_foreign_table() -> pd.DataFrame:
    """A table another tool might publish: generalized QIs, three classes, the second one
    holding near-identical incomes (violating), the third one too small."""
    rng = np.random.default_rng(5)
    spread = rng.uniform(20_000, 120_000, size=12).round(-2)
    return pd.DataFrame({
        "zip": ["130**"] * 12 + ["148**"] * 12 + ["150**"] * 3,
        "age": ["[20-29]"] * 12 + ["[30-39]"] * 12 + ["[40-49]"] * 3,
        "income": np.concatenate([spread, 50_000 + np.arange(12) * 10.0,
                                  [10_000.0, 60_000.0, 130_000.0]]),
    })


@pytest.mark.slow
def test_audit_of_any_published_table_through_the_command(tmp_path):
    table = _published_foreign_table()
    source = tmp_path / "published.csv"
    table.to_csv(source, index=False)
    target = tmp_path / "report.html"
    args = ["report", str(source), "--qi", "zip,age", "--sensitive", "income", "--k", "5",
            "--epsilon", "0.05", "--delta", "0.5", "-o", str(target)]
    proc = subprocess.run([sys.executable, "-m", "proxanon", *args], capture_output=True,
                          text=True, check=False, timeout=120)
    assert proc.returncode == 3, proc.stderr  # the table violates: audit's exit status
    numbers = read_numbers(target)
    check = audit(table, quasi_identifiers=["zip", "age"], sensitive=["income"], k=5,
                  epsilon=0.05, delta=0.5)
    assert numbers["audit"] == {**check.summary(), "n_suppressed_rows": 0}
    assert not check.satisfied and check.violating_groups.size and check.small_groups.size
    order = [entry["group"] for entry in numbers["worst_classes"]]
    assert order[:2] == [int(check.violating_groups[0]), int(check.small_groups[0])]
    brute = _brute_reidentification(
        table.groupby(["zip", "age"]).ngroup().to_numpy(), table[["income"]], 5)
    assert numbers["reidentification"] == pytest.approx(brute)
    text = target.read_text(encoding="utf-8")
    # The violating class's published QI values and some of its incomes (50,000 to 50,110).
    assert "148**" in text and "[30-39]" in text and re.search(r"\b50[01]\d0\b", text)
    scaling = numbers["scaling"][0]
    assert scaling["epsilon_units"] == pytest.approx(0.05 * (130_000 - 10_000))
    again = subprocess.run([sys.executable, "-m", "proxanon", *args], capture_output=True,
                           text=True, check=False, timeout=120)
    assert again.returncode == 2 and "--force" in again.stderr


def test_audit_report_to_html_matches_the_function(tmp_path):
    table = _published_foreign_table()
    check = audit(table, quasi_identifiers=["zip", "age"], sensitive=["income"], k=5,
                  epsilon=0.05, delta=0.5)
    path = tmp_path / "r.html"
    check.to_html(path, table, quasi_identifiers=["zip", "age"], sensitive=["income"])
    assert read_numbers(path)["audit"]["max_risk"] == check.max_risk
    bare = read_numbers(audit_html(check))  # no table: the figures of the audit alone
    assert bare["audit"] == read_numbers(path)["audit"]
    assert bare["reidentification"]["l_diversity"] is None


def test_mismatched_tables_are_refused_with_a_clear_error():
    table = _published_foreign_table()
    check = audit(table, quasi_identifiers=["zip", "age"], sensitive=["income"], k=5,
                  epsilon=0.05, delta=0.5)
    with pytest.raises(ValueError, match="rows but the audit covered"):
        audit_html(check, table.head(10), quasi_identifiers=["zip"], sensitive=["income"])
    with pytest.raises(ValueError, match="not the ones audited"):
        audit_html(check, table, quasi_identifiers=["zip"], sensitive=["income"],
                   groups=np.zeros(len(table), dtype=np.int64))
    with pytest.raises(ValueError, match=r"column\(s\) \['wage'\]"):
        audit_html(check, table, quasi_identifiers=["zip", "age"], sensitive=["wage"])
    with pytest.raises(ValueError, match="max_classes must be >= 1"):
        audit_html(check, table, quasi_identifiers=["zip", "age"], sensitive=["income"],
                   max_classes=0)


def test_queries_need_the_original(result):
    with pytest.raises(ValueError, match="needs original"):
        anonymization_html(result, queries=QUERIES)


def test_suppressed_rows_are_reported_and_measured(uci_adult):
    """A result with rows left out: evaluate.discernibility counts published classes only
    (it used to fail on the -1 labels), and the page reports the suppressed rows."""
    sample = uci_adult.head(3000).reset_index(drop=True)
    result = proxanon.anonymize(sample, quasi_identifiers=QI, sensitive=SENSITIVE, k=10,
                                epsilon=0.1, delta=0.6, on_infeasible="suppress",
                                max_suppression=0.2)
    left_out = int((result.groups < 0).sum())
    assert left_out > 0
    sizes = np.bincount(result.groups[result.groups >= 0])
    assert evaluate.discernibility(result) == int((sizes[sizes > 0] ** 2).sum())
    numbers = read_numbers(anonymization_html(result, sample))
    assert numbers["audit"]["n_suppressed_rows"] == 0  # the audit covers published rows
    assert len(result.report.suppressed_rows) == left_out
    assert numbers["audit"]["n_rows"] == len(sample) - left_out
    brute = _brute_reidentification(result.groups, sample[SENSITIVE], 10)
    assert numbers["reidentification"] == pytest.approx(brute)


@pytest.mark.slow
def test_big_results_give_a_small_page():
    """Plots are binned and the worst classes capped: 20 times more rows, a page about as
    big."""
    rng = np.random.default_rng(0)
    pages = []
    for n in (2_000, 40_000):
        groups = np.arange(n) // 10
        table = pd.DataFrame({"zip": (groups * 7 % 1000).astype(str),
                              "age": (groups % 37).astype(str),
                              "income": rng.normal(50_000, 9_000, n).round()})
        check = audit(table, groups=groups, sensitive=["income"], k=10, epsilon=0.02,
                      delta=0.6)
        text = audit_html(check, table, quasi_identifiers=["zip", "age"],
                          sensitive=["income"], groups=groups)
        assert len(read_numbers(text)["worst_classes"]) == MAX_CLASSES
        pages.append(len(text))
    assert pages[1] < 1.5 * pages[0]


def test_write_is_atomic_and_leaves_an_ordinary_file(tmp_path):
    target = tmp_path / "report.html"
    target.write_text("old", encoding="utf-8")
    write_html("<html>new</html>", target)
    assert target.read_text(encoding="utf-8") == "<html>new</html>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    with pytest.raises(ValueError, match="does not exist"):
        write_html("x", tmp_path / "missing" / "r.html")
    with pytest.raises(ValueError, match="is a folder"):
        write_html("x", tmp_path)


def test_missing_matplotlib_names_the_extra(monkeypatch):
    table = _published_foreign_table()
    check = audit(table, quasi_identifiers=["zip", "age"], sensitive=["income"], k=5,
                  epsilon=0.05, delta=0.5)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"proxanon\[report\]"):
        audit_html(check, table, quasi_identifiers=["zip", "age"], sensitive=["income"])


@pytest.mark.slow
def test_anonymize_command_writes_the_report_too(tmp_path, sample):
    source = tmp_path / "in.csv"
    sample[QI + SENSITIVE].to_csv(source, index=False)
    out, page = tmp_path / "out.csv", tmp_path / "out.html"
    proc = subprocess.run(
        [sys.executable, "-m", "proxanon", "anonymize", str(source), "--qi", ",".join(QI),
         "--sensitive", ",".join(SENSITIVE), "--k", "10", "--epsilon", "0.05", "--delta",
         "0.6", "-o", str(out), "--html", str(page)],
        capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    published = pd.read_csv(out)
    check = audit(published, groups="group", sensitive=SENSITIVE, **PRIVACY)
    assert read_numbers(page)["audit"] == {**check.summary(), "n_suppressed_rows": 0}
    assert "Internal version" not in page.read_text()
    # --include-original makes the internal page; without --html it is refused.
    base = [sys.executable, "-m", "proxanon", "anonymize", str(source), "--qi", ",".join(QI),
            "--sensitive", ",".join(SENSITIVE), "--k", "10", "--epsilon", "0.05", "--delta",
            "0.6", "-o", str(out), "--force", "--include-original"]
    internal = subprocess.run([*base, "--html", str(page)], capture_output=True, text=True,
                              check=False, timeout=120)
    assert internal.returncode == 0, internal.stderr
    assert "Internal version" in page.read_text()
    refused = subprocess.run(base, capture_output=True, text=True, check=False, timeout=120)
    assert refused.returncode == 2 and "--html" in refused.stderr


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.mark.browser
def test_the_page_renders_in_headless_chromium(tmp_path, result, sample):
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install headless Chromium (.ci/run installs Debian's chromium)")
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium)")
    path = tmp_path / "report.html"
    result.to_html(path, sample, queries=QUERIES)
    shot = tmp_path / "report.png"
    proc = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--window-size=1200,2400", f"--screenshot={shot}", path.as_uri()],
        capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0 and shot.is_file(), proc.stderr
    from matplotlib.image import imread

    pixels = imread(shot)
    assert pixels.shape[:2] == (2400, 1200)
    # Rendered content, not a blank page: the plots and text give many distinct colours.
    colours = np.unique((pixels[..., :3] * 255).astype(np.uint8).reshape(-1, 3), axis=0)
    assert len(colours) > 50


def test_a_mondrian_result_without_epsilon_says_its_verdict_is_vacuous(sample):
    result = proxanon.anonymize(sample, quasi_identifiers=QI, sensitive=SENSITIVE, k=10,
                                method="mondrian", l=2)
    text = anonymization_html(result, sample)
    assert "asked for no (ε, δ)" in text
    numbers = read_numbers(text)
    brute = _brute_reidentification(result.groups, sample[SENSITIVE], 10)
    assert numbers["reidentification"] == pytest.approx(brute)
    assert brute["l_diversity"] >= 2


def test_published_intervals_spread_their_rows_without_losing_any():
    """The 'after' histogram of a numeric QI: every row is counted once, and classes of one
    value land where the original rows are."""
    from proxanon._report.plots import _edges, _spread

    rng = np.random.default_rng(2)
    values = rng.integers(17, 91, size=5000).astype(np.float64)
    groups = rng.integers(0, 300, size=5000)
    edges = _edges(values)
    assert _spread(values, groups, edges).sum() == pytest.approx(len(values))
    exact = np.arange(len(values))  # every row its own class: published exactly
    assert _spread(values, exact, edges) == pytest.approx(np.histogram(values, edges)[0])


def test_the_page_shows_no_original_value_unless_asked():
    """A report meant to be shared with the table: on a table where each ZIP code is held by
    fewer than k rows (so none is published exactly), no ZIP code appears on the page and
    no figure shows the original column; ``include_original=True`` makes an internal
    version, marked as such, that draws them."""
    rng = np.random.default_rng(5)
    n = 400
    zips = [f"{z:05d}" for z in rng.choice(np.arange(10_000, 10_400), n, replace=True)]
    table = pd.DataFrame({"zip": zips, "age": rng.integers(20, 70, n),
                          "pay": rng.integers(0, 10, n) * 1000.0})
    counts = table["zip"].value_counts()
    assert counts.max() < 10
    masking = proxanon.Hierarchy.from_dict({"*": {
        f"{p}**": [z for z in sorted(set(zips)) if z.startswith(p)]
        for p in sorted({z[:3] for z in zips})}})
    result = proxanon.anonymize(table, quasi_identifiers=["zip", "age"], sensitive=["pay"], k=10,
                                delta=0, hierarchies={"zip": masking})
    assert not set(result.table["zip"]) & set(zips)  # no ZIP published exactly
    shared = anonymization_html(result, table)
    # The page's text and labels (not its images' bytes or its JSON block of numbers).
    words = re.sub(r'src="data:[^"]*"|<script[^>]*>.*?</script>', "", shared, flags=re.S)
    assert not [z for z in set(zips) if re.search(rf"(?<![\d.]){z}(?![\d.])", words)]
    assert "Internal version" not in shared
    internal = anonymization_html(result, table, include_original=True)
    # The original values are drawn (their most frequent values, their histogram) only in
    # the internal version: its QI figures have a panel more each.
    assert "Internal version" in internal and "before and after" in internal
    assert "before and after" not in shared and "as published" in shared
    assert len(internal) > len(shared)
    with pytest.raises(ValueError, match="original"):
        anonymization_html(result, include_original=True)


def test_long_sections_fold_and_each_measure_says_what_it_means(page: str) -> None:
    """The worst classes, the QI figures, the privacy measures and the timings fold away
    under their titles; every privacy measure has a line on what it says; the ℓ of the
    re-identification cards names what it counts, apart from the measures' worst column."""
    for title in ("Worst classes", "Privacy measures", "Timings (seconds)",
                  "Distribution of re-identification risk"):
        assert re.search(rf"<details><summary>{re.escape(title)}", page), title
    assert page.count("<details>") == page.count("</details>")
    assert "What holds" in page and "<details><summary>What holds" not in page
    measures = page[page.index("<summary>Privacy measures"):]
    measures = measures[:measures.index("</table>")]
    rows = re.findall(r"<tr><th>(.*?)</th><td>.*?</td><td class=\"note\">(.+?)</td></tr>",
                      measures)
    assert len(rows) == 14 and all(meaning.strip() for _, meaning in rows)
    assert "distinct ℓ-diversity of the sensitive columns together" in page
    assert "the worst single column" in page

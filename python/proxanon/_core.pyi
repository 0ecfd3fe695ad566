"""Type stubs for the native module (cpp/bindings/module.cpp)."""

from typing import Any, Literal, Protocol, overload

import numpy as np
from numpy.typing import NDArray

#: What ``specialize`` does to the classes (specialize.hpp's SpecializeTarget, or absorb.hpp).
SpecializeStep = Literal["split", "split_failing", "cover_failing", "absorb", "absorb_failing"]

# One entry per row, value or edge: a 1-D integer array (a list converts too, slowly).
_Ints = NDArray[np.integer[Any]] | list[int]

class _Enum:
    @property
    def value(self) -> int: ...
    @property
    def name(self) -> str: ...
    __members__: dict[str, Any]

class Metric(_Enum):
    """The built-in distances (distance.hpp)."""

    l1: Metric
    l2: Metric
    linf: Metric
    min_component: Metric
    __members__: dict[str, Metric]

class Structure(_Enum):
    """How the epsilon-neighbour relation is held (neighbours.hpp)."""

    auto: Structure
    graph: Structure
    sorted: Structure
    grid: Structure
    __members__: dict[str, Structure]

class Init(_Enum):
    """XColor's starting colouring (xcolor.hpp)."""

    degree: Init
    qi: Init
    __members__: dict[str, Init]

class Moves(_Enum):
    """The moves of XColor's repair (xcolor.hpp)."""

    auto: Moves
    swap: Moves
    __members__: dict[str, Moves]

class CriterionKind(_Enum):
    """The privacy criteria the native checks know (criteria_check.hpp)."""

    distinct: CriterionKind
    entropy: CriterionKind
    recursive: CriterionKind
    t_closeness: CriterionKind
    beta_likeness: CriterionKind
    delta_disclosure: CriterionKind
    __members__: dict[str, CriterionKind]

class Relation:
    """The relation one job's native calls share (cpp/bindings/relation.hpp)."""

    @overload
    def __init__(self, sensitive: NDArray[np.float64], metric: Metric, weights: list[float],
                 epsilon: float | None) -> None: ...
    @overload
    def __init__(self, row_value: _Ints, offsets: _Ints, targets: _Ints) -> None: ...
    @property
    def rows(self) -> int: ...
    @property
    def given(self) -> bool: ...
    @property
    def epsilon(self) -> float | None: ...

class _Options(Protocol):
    """proxanon._engine.options.EngineOptions, as the binding reads it."""

    @property
    def k(self) -> int: ...
    @property
    def delta(self) -> float: ...
    @property
    def search_limit(self) -> int: ...
    @property
    def trace(self) -> bool: ...
    @property
    def native_init(self) -> Init: ...
    @property
    def init_block(self) -> int: ...
    @property
    def native_moves(self) -> Moves: ...
    @property
    def suppress(self) -> bool: ...
    @property
    def threads(self) -> int: ...
    @property
    def progress(self) -> Progress | None: ...

def partition(
    relation: Relation,
    options: _Options,
    quasi_identifiers: NDArray[np.float64] | None = None,
    qi_taxonomies: list[tuple[NDArray[np.int32], int] | None] = ...,
    initial_groups: _Ints | None = None,
    max_graph_entries: int = ...,
    neighbours: Structure = ...,
) -> dict[str, Any]: ...
def mondrian(
    relation: Relation,
    k: int,
    delta: float,
    l: int,  # noqa: E741
    quasi_identifiers: NDArray[np.float64],
    qi_taxonomies: list[tuple[NDArray[np.int32], int] | None] = ...,
    grid_checks: bool = True,
    max_graph_entries: int = ...,
    criteria_codes: list[NDArray[np.int32]] = ...,
    criteria_values: list[int] = ...,
    criteria_numeric: list[bool] = ...,
    criteria: list[tuple[int, float, float, int]] = ...,
    follow_hierarchy: bool = False,
    max_suppressed: int = 0,
) -> dict[str, Any]: ...
def lattice(
    relation: Relation,
    k: int,
    delta: float,
    l: int,  # noqa: E741
    columns: list[tuple[list[NDArray[np.int32]], list[float]]],
    leaf: NDArray[np.int32],
    offsets: NDArray[np.int64],
    rows: NDArray[np.int32],
    max_suppressed: int,
    monotone: bool,
    max_graph_entries: int = ...,
    criteria_codes: list[NDArray[np.int32]] = ...,
    criteria_values: list[int] = ...,
    criteria_numeric: list[bool] = ...,
    criteria: list[tuple[int, float, float, int]] = ...,
) -> dict[str, Any]: ...
def absorb_cap(n: int, k: int) -> int: ...
def largest_class_rows(n: int) -> int: ...
def session(
    relation: Relation,
    options: Any,
    quasi_identifiers: NDArray[np.float64],
    qi_taxonomies: list[tuple[NDArray[np.int32], int] | None],
    node_keys: list[list[int]],
    sensitive_ids: NDArray[np.int64],
    qi_aware: bool,
    max_rounds: int | None,
    budget: float,
    start: _Ints | None = ...,
    max_graph_entries: int = ...,
    neighbours: Structure = ...,
) -> dict[str, Any]: ...
def specialize(
    classes: _Ints,
    quasi_identifiers: NDArray[np.float64],
    qi_taxonomies: list[tuple[NDArray[np.int32], int] | None],
    node_keys: list[list[int]],
    relation: Relation,
    k: int,
    l: int,  # noqa: E741
    delta: float,
    max_graph_entries: int = ...,
    step: SpecializeStep = ...,
    threads: int = 1,
    criteria_codes: list[NDArray[np.int32]] = ...,
    criteria_values: list[int] = ...,
    criteria_numeric: list[bool] = ...,
    criteria: list[tuple[int, float, float, int]] = ...,
) -> dict[str, Any]: ...
def neighbour_graph(
    sensitive: NDArray[np.float64],
    metric: Metric,
    weights: list[float],
    epsilon: float,
    max_entries: int = ...,
) -> dict[str, NDArray[Any]]: ...
def neighbour_queries(
    sensitive: NDArray[np.float64],
    metric: Metric,
    weights: list[float],
    epsilon: float,
    neighbours: Structure,
    pairs: list[int],
    members: list[int],
    probes: list[int],
    threads: int = 0,
) -> dict[str, Any]: ...
def balls(
    sensitive: NDArray[np.float64],
    metric: Metric,
    weights: list[float],
    radius: float,
    centres: list[int],
    members: bool = ...,
    threads: int = 0,
    shape: str = "ball",
) -> dict[str, NDArray[np.int64]]: ...
def value_ids(sensitive: NDArray[np.float64]) -> NDArray[np.int64]: ...
def order_by_label(labels: NDArray[np.int64]) -> NDArray[np.int64]: ...
def largest_window(
    sensitive: NDArray[np.float64],
    metric: Metric,
    weights: list[float],
    epsilon: float,
) -> dict[str, int]: ...
def value_relation(
    sensitive: NDArray[np.float64],
    metric: Metric,
    weights: list[float],
    epsilon: float,
    neighbours: Structure = ...,
    centre: int = -1,
    threads: int = 0,
) -> dict[str, Any]: ...
def class_counts(
    sensitive: NDArray[np.float64],
    metric: Metric,
    weights: list[float],
    epsilon: float,
    order: NDArray[np.int64],
    starts: NDArray[np.int64],
    threads: int = 0,
) -> NDArray[np.int64]: ...
def exchange_rows(
    groups: NDArray[np.int64],
    quasi_identifiers: NDArray[np.float64],
    qi_taxonomies: list[tuple[NDArray[np.int32], int] | None],
    sensitive_ids: NDArray[np.int64],
) -> NDArray[np.int64]: ...
def initialize(degree: NDArray[np.int64], m: int) -> NDArray[np.int32]: ...
def equitable_sizes(n: int, m: int) -> list[int]: ...
def allowed_neighbours(size: int, delta: float) -> int: ...
def neighbour_threshold(epsilon: float) -> float: ...

MAX_GRAPH_ENTRIES: int
NEIGHBOUR_SLACK: float
ALLOWANCE_SLACK: float

class GraphTooDenseError(ValueError): ...

class StopRequest:
    """A request to stop the native calls of the threads that watch it (``with request:``)."""

    def __init__(self) -> None: ...
    def set(self) -> None: ...
    @property
    def requested(self) -> bool: ...
    def __enter__(self) -> StopRequest: ...
    def __exit__(self, *args: object) -> None: ...

class Progress:
    def __init__(self) -> None: ...
    @property
    def phase(self) -> str: ...
    @property
    def queued(self) -> int: ...
    @property
    def set_aside(self) -> int: ...
    @property
    def swaps(self) -> int: ...

# The names of Stats' fields in the order the C++ struct declares them (PROXANON_ENGINE_STATS).
ENGINE_STATS_FIELDS: tuple[str, ...]

class Stats:
    n: int
    m: int
    max_degree: int
    row_edges: int
    initial_violations: int
    initial_potential: int
    final_potential: int
    swaps: int
    set_aside: int
    classes_examined: int
    remaining_violations: int
    excess_moves: int
    transfers: int
    stalled_violations: int
    suppressed: int
    regrouped_size: int
    repair_capped: int
    exact_search: int
    seconds_suppress: float
    seconds_initialize: float
    seconds_repair: float

class ViolationQueue:
    def __init__(self, rows: int, buckets: int) -> None: ...
    def push(self, row: int, bucket: int) -> None: ...
    def remove(self, row: int) -> None: ...
    def update(self, row: int, bucket: int) -> None: ...
    def pop(self) -> int: ...
    def __contains__(self, row: int) -> bool: ...
    def __len__(self) -> int: ...

# Property-preserving substitution (bind_substitution.cpp).
def substitute_column(
    values: NDArray[np.float64],
    lo: float,
    hi: float,
    segment_size: int,
    poi_fraction: float,
    iterations: int,
    seed: int,
    stream: int,
    n_threads: int,
) -> dict[str, Any]: ...
def extract_localities(sorted_values: NDArray[np.float64]) -> dict[str, NDArray[Any]]: ...

class CsvError(ValueError): ...

def csv_records(data: bytes, start: int = 0) -> dict[str, Any]: ...
def csv_fields(data: bytes, begin: int, end: int, sep: str, line: int) -> list[bytes]: ...
def csv_columns(
    data: bytes,
    begin: NDArray[np.int64],
    end: NDArray[np.int64],
    line: NDArray[np.int64],
    sep: str,
    fields: int,
    columns: list[int],
    encoding: str,
    strip: bool = True,
) -> list[tuple[NDArray[np.int64], list[str]]]: ...
def csv_write(
    data: bytes,
    begin: NDArray[np.int64],
    end: NDArray[np.int64],
    line: NDArray[np.int64],
    sep: str,
    fields: int,
    rows: NDArray[np.int64],
    order: list[int],
    replaced: list[tuple[int, tuple[list[bytes], NDArray[np.int64]]]],
    appended: list[NDArray[np.int64]],
    newline: bytes,
) -> bytes: ...

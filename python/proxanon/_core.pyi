"""Type stubs for the native module (cpp/bindings/module.cpp)."""

from typing import Any

import numpy as np
from numpy.typing import NDArray

def partition(
    sensitive: NDArray[np.float64],
    metric: str,
    weights: list[float],
    epsilon: float,
    k: int,
    delta: float,
    quasi_identifiers: NDArray[np.float64] | None = None,
    qi_taxonomies: list[tuple[NDArray[np.int32], int] | None] = ...,
    search_limit: int = 0,
    trace: bool = False,
    max_graph_entries: int = ...,
    progress: Progress | None = None,
    initial_groups: list[int] | None = None,
    init: str = "degree",
    init_block: int = 8,
    moves: str = "swap",
    suppress: bool = False,
) -> dict[str, Any]: ...
def partition_graph(
    row_value: list[int],
    offsets: list[int],
    targets: list[int],
    k: int,
    delta: float,
    quasi_identifiers: NDArray[np.float64] | None = None,
    qi_taxonomies: list[tuple[NDArray[np.int32], int] | None] = ...,
    search_limit: int = 0,
    trace: bool = False,
    progress: Progress | None = None,
    initial_groups: list[int] | None = None,
    init: str = "degree",
    init_block: int = 8,
    moves: str = "swap",
    suppress: bool = False,
) -> dict[str, Any]: ...
def mondrian(
    sensitive: NDArray[np.float64],
    metric: str,
    weights: list[float],
    epsilon: float | None,
    k: int,
    delta: float,
    l: int,  # noqa: E741
    quasi_identifiers: NDArray[np.float64],
    qi_taxonomies: list[tuple[NDArray[np.int32], int] | None] = ...,
) -> dict[str, Any]: ...
def neighbour_graph(
    sensitive: NDArray[np.float64],
    metric: str,
    weights: list[float],
    epsilon: float,
    max_entries: int = ...,
) -> dict[str, NDArray[Any]]: ...
def initialize(degree: NDArray[np.int64], m: int) -> NDArray[np.int32]: ...
def equitable_sizes(n: int, m: int) -> list[int]: ...
def allowed_neighbours(size: int, delta: float) -> int: ...
def neighbour_threshold(epsilon: float) -> float: ...

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

"""The book's widgets. Each one shows states computed when the notebook runs (checked-mode
traces and the book's stored GPU measurements) and switches between them in the browser,
through tiling_course.switch: so it responds on the static site, which has no kernel, as in
Jupyter and Colab, with ipywidgets 7.7.1 and 8.x alike.

Each widget is two functions: ``<name>_spec(...)`` returns what switch.switch() takes
(name, hint, controls, render, initial) and ``<name>(...)`` builds the widget from it; the
browser test renders the same spec's states with switch.all_states() and compares. Which
chapter calls which widget is tiling_course.registry's to say.

One module per chapter, all of it importable from here (``widgets.phase_stepper()``):

    base         what they share: building from a spec, figures as data URIs, HTML grids,
    one block's trace, the predict-first widgets' states
    threads      chapter 1: thread_explorer
    tiles        chapter 2: tile_explorer (and tile_summary, its static table), phase_stepper
    barriers     chapter 3: barrier_explorer, race_replay
    edges        chapter 4: edge_explorer
    performance  chapter 5: occupancy_explorer, coalesce_quiz
    ladder       chapter 6: rung_explorer
    hostbugs     chapter 7: host_bug_quiz
"""
from .barriers import (
    BARRIER_OPTIONS,
    RACE_A,
    RACE_GUESSES,
    RACE_ORDERS,
    RACE_WHAT,
    barrier_explorer,
    barrier_explorer_spec,
    barrier_facts,
    barrier_kernel,
    race_replay,
    race_replay_facts,
    race_replay_spec,
)
from .base import GRID_STYLE, NO_GUESS, TILES, png_data_uri
from .edges import EDGE_BLOCKS, EDGE_STYLE, EDGE_TILE, EDGE_WIDTHS, edge_explorer, edge_explorer_spec, edge_facts
from .hostbugs import HOST_GUESSES, host_bug_facts, host_bug_quiz, host_bug_quiz_spec
from .ladder import MEASURED_WIDTH, RUNGS, rung_explorer, rung_explorer_spec, rung_facts, rung_measured, source_defaults
from .performance import (
    BLOCK_HUES,
    COALESCE_CASES,
    COALESCE_GUESSES,
    COALESCE_SWAP,
    coalesce_facts,
    coalesce_quiz,
    coalesce_quiz_spec,
    coalesce_source,
    occupancy_explorer,
    occupancy_explorer_spec,
    occupancy_facts,
)
from .threads import THREAD_MAP_BLOCKS, THREAD_MAP_WIDTHS, thread_explorer, thread_explorer_spec, thread_map_facts
from .tiles import (
    PHASE_BLOCK,
    PHASE_STEPS,
    PHASE_TILE,
    PHASE_WIDTH,
    phase_facts,
    phase_stepper,
    phase_stepper_spec,
    tile_explorer,
    tile_explorer_spec,
    tile_facts,
    tile_summary,
)

__all__ = [
    "BARRIER_OPTIONS", "BLOCK_HUES", "COALESCE_CASES", "COALESCE_GUESSES", "COALESCE_SWAP", "EDGE_BLOCKS",
    "EDGE_STYLE", "EDGE_TILE", "EDGE_WIDTHS", "GRID_STYLE", "HOST_GUESSES", "MEASURED_WIDTH", "NO_GUESS",
    "PHASE_BLOCK", "PHASE_STEPS", "PHASE_TILE", "PHASE_WIDTH", "RACE_A", "RACE_GUESSES", "RACE_ORDERS",
    "RACE_WHAT", "RUNGS", "THREAD_MAP_BLOCKS", "THREAD_MAP_WIDTHS", "TILES",
    "barrier_explorer", "barrier_explorer_spec", "barrier_facts", "barrier_kernel",
    "coalesce_facts", "coalesce_quiz", "coalesce_quiz_spec", "coalesce_source",
    "edge_explorer", "edge_explorer_spec", "edge_facts",
    "host_bug_facts", "host_bug_quiz", "host_bug_quiz_spec",
    "occupancy_explorer", "occupancy_explorer_spec", "occupancy_facts",
    "phase_facts", "phase_stepper", "phase_stepper_spec", "png_data_uri",
    "race_replay", "race_replay_facts", "race_replay_spec",
    "rung_explorer", "rung_explorer_spec", "rung_facts", "rung_measured", "source_defaults",
    "thread_explorer", "thread_explorer_spec", "thread_map_facts",
    "tile_explorer", "tile_explorer_spec", "tile_facts", "tile_summary",
]

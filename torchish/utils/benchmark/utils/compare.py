"""Compare: Measurements laid out as a table (a row per sub_label / stmt, a column per
description, a block per thread count and one table per label), as `torch.utils.benchmark`
prints it."""
import collections
import enum
import itertools

import numpy as np

from . import common

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(x):
    return int(np.ceil(np.log10(np.float32(x))))


class _Column:
    """One description's results, formatted with a shared number of digits."""

    def __init__(self, grouped_results, time_scale, time_unit, trim_significant_figures,
                 highlight_warnings):
        self._grouped_results = grouped_results
        flat = list(itertools.chain.from_iterable(grouped_results))
        self._time_scale = time_scale
        self._time_unit = time_unit
        self._trim_significant_figures = trim_significant_figures
        self._highlight_warnings = highlight_warnings and any(
            r.has_warnings for r in flat if r)
        digits = [_leading_digits(r.median / time_scale) if r else None for r in flat]
        unit_digits = max(d for d in digits if d is not None)
        if trim_significant_figures:
            decimals = min(max(m.significant_figures - d, 0)
                           for d, m in zip(digits, flat) if m is not None and d is not None)
        else:
            decimals = 1
        width = unit_digits + decimals + (1 if decimals else 0)
        self._template = (f"{{:>{width}.{decimals}f}}"
                          f"{{:>{7 if self._highlight_warnings else 0}}}")

    def get_results_for(self, group):
        return self._grouped_results[group]

    def num_to_str(self, value, estimated_sigfigs, spread):
        if value is None:
            return " " * len(self.num_to_str(1, estimated_sigfigs, None))
        if self._trim_significant_figures:
            value = common.trim_sigfig(value, estimated_sigfigs)
        note = (f" (! {spread * 100:.0f}%)"
                if self._highlight_warnings and spread is not None else "")
        return self._template.format(value, note)


def optional_min(seq):
    values = list(seq)
    return min(values) if values else None


class _Row:
    def __init__(self, results, row_group, render_env, env_str_len, row_name_str_len,
                 time_scale, colorize, num_threads=None):
        self._results = results
        self._row_group = row_group
        self._render_env = render_env
        self._env_str_len = env_str_len
        self._row_name_str_len = row_name_str_len
        self._time_scale = time_scale
        self._colorize = colorize
        self._columns = ()
        self._num_threads = num_threads

    def register_columns(self, columns):
        self._columns = columns

    def as_column_strings(self):
        first = next(r for r in self._results if r is not None)
        env = (f"({first.env})" if self._render_env else "").ljust(self._env_str_len + 4)
        cells = ["  " + env + first.as_row_name]
        for m, column in zip(self._results, self._columns or ()):
            if m is None:
                cells.append(column.num_to_str(None, 1, None))
            else:
                cells.append(column.num_to_str(m.median / self._time_scale,
                                               m.significant_figures,
                                               m.iqr / m.median if m.has_warnings else None))
        return cells

    @staticmethod
    def color_segment(segment, value, best_value):
        if value <= best_value * 1.01 or value <= best_value + 100e-9:
            return BEST + BOLD + segment + TERMINATE * 2
        if value <= best_value * 1.1:
            return GOOD + BOLD + segment + TERMINATE * 2
        if value >= best_value * 5:
            return VERY_BAD + BOLD + segment + TERMINATE * 2
        if value >= best_value * 2:
            return BAD + segment + TERMINATE * 2
        return segment

    def row_separator(self, overall_width):
        if self._num_threads is None:
            return []
        return [f"{self._num_threads} threads: ".ljust(overall_width, "-")]

    def finalize_column_strings(self, column_strings, col_widths):
        if self._colorize == Colorize.ROWWISE:
            fastest = min(r.median for r in self._results if r is not None)
            best = [fastest] * len(column_strings)
        elif self._colorize == Colorize.COLUMNWISE:
            best = [optional_min(r.median for r in c.get_results_for(self._row_group)
                                 if r is not None) for c in self._columns or ()]
        else:
            best = [-1] * len(column_strings)
        cells = [column_strings[0].ljust(col_widths[0])]
        for text, width, result, best_value in zip(column_strings[1:], col_widths[1:],
                                                   self._results, best):
            text = text.center(width)
            if self._colorize != Colorize.NONE and result is not None \
                    and best_value is not None:
                text = self.color_segment(text, result.median, best_value)
            cells.append(text)
        return cells


class Table:
    """The measurements of one label."""

    def __init__(self, results, colorize, trim_significant_figures, highlight_warnings):
        if len({r.label for r in results}) != 1:
            raise AssertionError("All results must share the same label")
        self.results = results
        self._colorize = colorize
        self._trim_significant_figures = trim_significant_figures
        self._highlight_warnings = highlight_warnings
        self.label = results[0].label
        self.time_unit, self.time_scale = common.select_unit(min(r.median for r in results))
        self.row_keys = common.ordered_unique(self.row_fn(r) for r in results)
        self.row_keys.sort(key=lambda key: key[:2])   # stable: stmt order kept within
        self.column_keys = common.ordered_unique(self.col_fn(r) for r in results)
        self.rows, self.columns = self.populate_rows_and_columns()

    @staticmethod
    def row_fn(m):
        return m.num_threads, m.env, m.as_row_name

    @staticmethod
    def col_fn(m):
        return m.description

    def populate_rows_and_columns(self):
        row_at = {key: i for i, key in enumerate(self.row_keys)}
        col_at = {key: j for j, key in enumerate(self.column_keys)}
        grid = [[None] * len(self.column_keys) for _ in self.row_keys]
        for r in self.results:
            grid[row_at[self.row_fn(r)]][col_at[self.col_fn(r)]] = r
        envs = {r.env for r in self.results}
        render_env = len(envs) > 1
        env_str_len = max(len(e) for e in envs) if render_env else 0
        name_len = max(len(r.as_row_name) for r in self.results)
        rows, groups = [], []
        prior_threads, prior_env = -1, ""
        for (threads, env, _), cells in zip(self.row_keys, grid):
            new_block = threads != prior_threads
            if new_block:
                prior_threads, prior_env = threads, ""
                groups.append([])
            rows.append(_Row(results=cells, row_group=len(groups) - 1,
                             render_env=render_env and env != prior_env,
                             env_str_len=env_str_len, row_name_str_len=name_len,
                             time_scale=self.time_scale, colorize=self._colorize,
                             num_threads=threads if new_block else None))
            groups[-1].append(cells)
            prior_env = env
        columns = tuple(
            _Column(grouped_results=[tuple(cells[j] for cells in g) for g in groups],
                    time_scale=self.time_scale, time_unit=self.time_unit,
                    trim_significant_figures=self._trim_significant_figures,
                    highlight_warnings=self._highlight_warnings)
            for j in range(len(self.column_keys)))
        rows = tuple(rows)
        for row in rows:
            row.register_columns(columns)
        return rows, columns

    def render(self):
        table = [[""] + self.column_keys] + [r.as_column_strings() for r in self.rows]
        ncols = max(len(cells) for cells in table)
        for cells in table:
            cells.extend([""] * (ncols - len(cells)))
        widths = [max(len(c) for c in column) for column in zip(*table)]
        lines = ["  |  ".join(c.center(w) for c, w in zip(table[0], widths))]
        width = len(lines[0])
        for cells, row in zip(table[1:], self.rows):
            lines.extend(row.row_separator(width))
            lines.append("  |  ".join(row.finalize_column_strings(cells, widths)))
        warned = self._highlight_warnings and any(r.has_warnings for r in self.results)
        note = ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
                if warned else "")
        title = f" {self.label or ''} ".center(width - 2, "-")
        return (f"[{title}]\n" + "\n".join(lines) + "\n\n"
                f"Times are in {common.unit_to_english(self.time_unit)}s "
                f"({self.time_unit}).\n{note}")


class Compare:
    """Collects Measurements and prints them as tables (`print(compare)`)."""

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self):
        return "\n".join(self._render())

    def extend_results(self, results):
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} "
                                 "instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        self._highlight_warnings = True

    def print(self):
        print(str(self))

    def _render(self):
        by_label = collections.defaultdict(list)
        for r in common.Measurement.merge(self._results):
            by_label[r.label].append(r)
        return [Table(group, self._colorize, self._trim_significant_figures,
                      self._highlight_warnings).render() for group in by_label.values()]

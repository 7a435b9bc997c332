"""The embedding explorer: one offline HTML page with a 2-D map, neighbour search and a stepper
over widths (a sweep) or trained vs untrained (a run). `views` computes what it shows; `page`
writes it. It sits above analysis and below the report, which links to it."""

from lrngpt.explorer.page import write_explorer

__all__ = ["write_explorer"]

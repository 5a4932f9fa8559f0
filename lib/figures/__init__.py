"""Figures of the chapters: the drawing code a chapter's hidden cells call, one module a chapter.

A chapter's visible cells carry its argument; drawing a figure, packing a control's frames and
formatting a table happen here, so that the page shows the experiment and not the plumbing.
"""

"""Figures drawn from a run (matplotlib is imported only here and in the explain layer)."""

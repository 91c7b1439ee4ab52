"""Attention Lab: see multi-head attention and the causal mask inside GPT-2."""

__version__ = "0.1.0"

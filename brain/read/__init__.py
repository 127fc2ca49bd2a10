"""The read path: brain.read.run.recall and the typed trace it returns."""

from brain.read.config import HYBRID, KEYWORD_ONLY, PRESETS, VECTOR_ONLY, RecallConfig
from brain.read.run import recall
from brain.read.trace import Recall, Trace

__all__ = ["HYBRID", "KEYWORD_ONLY", "PRESETS", "VECTOR_ONLY", "Recall", "RecallConfig", "Trace", "recall"]

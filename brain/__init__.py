"""Brain: a permission-aware business memory.

`brain.recall(question, workspace=..., member=...)` answers from the store without any
language model; `brain.db.Store` is the store; `brain.write.Writer` the write path.
"""

from brain.read import HYBRID, KEYWORD_ONLY, VECTOR_ONLY, Recall, RecallConfig, recall

__all__ = ["HYBRID", "KEYWORD_ONLY", "VECTOR_ONLY", "Recall", "RecallConfig", "recall"]

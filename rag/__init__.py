"""Answering: the answer path's stages (rag/pipeline.py runs them), retrieval and fusion, evidence,
prompting, citations, the support and answerability checks, requests about whole documents, and the
stores a question leaves behind (conversations, the query log). Models are reached through providers/."""

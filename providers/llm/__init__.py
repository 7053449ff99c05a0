"""LLM providers behind one streaming interface (rag.llm.base.LLM)."""

"""LLM providers behind one streaming interface (providers.llm.base.LLM)."""

"""Selective memory (USER_MEMORY.md, COMPANY_MEMORY.md) and its LangGraph graph: issue #4."""

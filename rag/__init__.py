"""Retrieval and answering: embedder, vector store, retriever, prompting, citations, LLM providers."""

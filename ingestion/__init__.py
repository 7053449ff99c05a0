"""Ingestion: parse files into pages, chunk them, embed and index them, keep the registry."""

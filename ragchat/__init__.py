"""ragchat: a private, local assistant that answers from your own documents with citations."""

__version__ = "0.1.0"

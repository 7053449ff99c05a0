"""Evaluation (`ragchat eval`, RAGAS and our own metrics): issue #8."""

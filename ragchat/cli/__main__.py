"""`python -m ragchat.cli …`: the same as the `ragchat` console script."""

from ragchat.cli.program import main

if __name__ == "__main__":
    raise SystemExit(main())

"""Test helpers that ship with the package: a local fake of the OpenAI chat API."""
